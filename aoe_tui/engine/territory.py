"""The seam between the referee and a territory.

The referee never touches libvirt or SSH directly: it talks to a
`TerritoryHost`. `engine.libvirt_host` implements it over the real runtime;
`testing.scripted_host` implements it in-process (a real HTTP app on loopback)
so referee logic is tested fast and deterministically with the same verifier
scripts.
"""

from __future__ import annotations

from typing import Protocol

from aoe_tui.runtime.reboot import RebootProof
from aoe_tui.runtime.ssh import CommandResult

__all__ = ["CommandResult", "RebootFailed", "RebootProof", "TerritoryHost", "TerritoryUnavailable"]


STOPPED_DETAIL = "the VM stopped running"


class TerritoryUnavailable(Exception):
    """The arena failed (VM died, SSH gone): never the player's fault."""


class RebootFailed(Exception):
    """The guest was told to reboot but never proved it came back."""


class TerritoryHost(Protocol):
    territory_id: str
    host: str
    ssh_port: int
    service_port: int

    def access_env(self) -> dict[str, str]:
        """What verifiers and adapters need to reach this guest (SSH key, known hosts, user; or a stand-in)."""

    def ssh_command(self) -> str | None:
        """The command a person pastes for a root shell in the guest; None when it has no SSH (not a VM)."""

    async def run(self, command: str, timeout: float) -> CommandResult:
        """Run a shell command in the guest as root; raises TerritoryUnavailable if unreachable."""

    async def reboot(self, timeout: float) -> RebootProof:
        """Reboot the guest from outside it and wait until it is back; raises RebootFailed with a readable detail.

        The proof says how the reboot was caused (acpi | reset-fallback) and what proved it
        (libvirt-event, referee-reset, console-banner, boot-id); it becomes milestone evidence.
        """

    async def suspend(self) -> None: ...

    async def resume(self) -> None: ...

    async def alive(self) -> bool:
        """Whether the territory still exists (a dead VM makes the competitor unavailable)."""

    async def down_detail(self) -> str:
        """Why a territory that is not `alive()` cannot play, in the failure's words (a VM paused by a failing
        disk is not one that stopped)."""

    def console_tail(self, lines: int = 40) -> str: ...
