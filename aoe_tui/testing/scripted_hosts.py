"""A host pool whose preflight is scripted: placement and faults of `--hosts` runs without any hypervisor."""

from __future__ import annotations

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.hosts import HostSpec, Inventory
from aoe_tui.engine.host_pool import HostPool, Report


class ScriptedHostPool(HostPool):
    """Every host passes preflight but those named in `failing` (host -> the reason it gives)."""

    def __init__(self, inventory: Inventory, report: Report = print, failing: dict[str, str] | None = None) -> None:
        super().__init__(inventory, report)
        self.failing = failing or {}

    async def _preflight(self, host: HostSpec) -> None:
        if host.name in self.failing:
            raise AoeError(self.failing[host.name])
