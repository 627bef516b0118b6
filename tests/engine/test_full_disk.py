"""The match directory's filesystem filling up mid-race, through the runner on scripted territories: one line
naming the full filesystem, the territories torn down, what was written left to replay."""

from __future__ import annotations

import errno
import os

import pytest

from aoe_tui.engine.runner import DiskFull, MatchRunner
from aoe_tui.runtime.overlay import mount_point
from aoe_tui.store.saved_match import load_match
from aoe_tui.testing.clock import ManualSource
from aoe_tui.testing.scripted_provider import ScriptedLauncher
from tests.engine.helpers import ARENA, RACE
from tests.engine.watched_provider import WatchedProvider


async def test_a_full_disk_mid_race_is_one_line_naming_the_filesystem_and_every_territory_goes(tmp_path) -> None:
    provider = WatchedProvider(dict(RACE))
    runner = MatchRunner(ARENA, tmp_path / "match", provider, ScriptedLauncher(), source=ManualSource())

    def fill(update) -> None:
        if getattr(update, "kind", None) == "agent_started":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    runner.subscribe(fill)
    with pytest.raises(DiskFull) as caught:
        await runner.run()
    line = str(caught.value)
    assert "\n" not in line and f"the filesystem at {mount_point(tmp_path)} is full" in line
    assert "every guest destroyed" in line and provider.torn_down
    assert load_match(tmp_path / "match").world.match_state == "aborted"
