"""Scripted territories behind a provider that watches its infrastructure, as `LibvirtProvider` does: the runner
sets `on_infrastructure_lost`, and the test sees whether the territories were torn down."""

from __future__ import annotations

from collections.abc import Callable

from aoe_tui.testing.scripted_provider import ScriptedProvider


class WatchedProvider(ScriptedProvider):
    on_infrastructure_lost: Callable[[str, str], object] | None = None
    torn_down = False

    async def teardown(self) -> None:
        self.torn_down = True
        await super().teardown()
