"""How the referee reboots a guest, and what proves it happened — from outside the guest.

Root in a guest owns its userland: it can put a `systemctl` that "reboots"
instantly earlier in PATH, or bind-mount a constant over the boot id. So the
reboot is asked of the hypervisor (an ACPI power-button press, which the
image's acpid turns into a reboot), falling back to a reset — a power cut the
guest cannot refuse — when libvirt has not seen the guest reset within a bound.
It is proven by what the guest cannot forge: libvirt's reboot event or the
reset the referee issued itself, AND a fresh kernel banner on the serial
console past the offset taken at request time. The boot id is read too, but
only as secondary evidence (and only when it is a well-formed UUID).
"""

from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Cause = Literal["acpi", "reset-fallback"]
# Seconds to wait for the guest to act on the ACPI button (acpid -> systemd shutdown -> reset)
# before cutting its power; an honest TCG guest resets after about 5-15 s.
ACPI_GRACE_SECONDS = 45.0
# Seconds from the machine's restart to the fresh kernel's banner before the referee resets it
# once more. The host boots the kernel directly, so the banner follows the restart within
# seconds; under TCG a restart was seen to hang silent in the firmware for minutes (a CI run
# lost a milestone to it), and a reset brings such a guest back.
RESTART_STALL_SECONDS = 30.0
# The kernel's first line, with its printk timestamp at zero: only a kernel that just
# started prints it. (Userland could echo a look-alike; that is why it never proves a
# reboot alone, only together with the hypervisor's own word.)
KERNEL_BANNER = re.compile(rb"\[\s*0\.0+\] Linux version \S+")
# The serial getty's prompt: the booted guest is on its network by then (sshd follows within a second or
# two), so connections to it are no longer lost in QEMU's forward (runtime.ssh_greeting). Only a hint of
# when to connect: anything in the guest could print it.
LOGIN_PROMPT = re.compile(rb"login: ")
_CHUNK = 1 << 20
_OVERLAP = 128


@dataclass(frozen=True)
class RebootProof:
    caused_by: Cause
    proven_by: tuple[str, ...]  # libvirt-event, referee-reset, console-banner, boot-id
    boot_id_before: str | None
    boot_id_after: str | None
    seconds: float
    banner: str | None = None
    # When each step was done, in seconds after the request (see TerritoryVM.reboot): what an operator reads
    # to tell where a slow reboot spent its time (the guest's shutdown, its firmware, its boot, SSH).
    phases: tuple[tuple[str, float], ...] = ()

    def to_json(self) -> dict:
        return {
            "reboot_caused_by": self.caused_by,
            "reboot_proven_by": list(self.proven_by),
            "boot_id_before": self.boot_id_before,
            "boot_id_after": self.boot_id_after,
            "boot_id_changed": self.boot_id_changed,
            "kernel_banner": self.banner,
            "reboot_seconds": round(self.seconds, 1),
            "reboot_phases": {name: round(seconds, 1) for name, seconds in self.phases},
        }

    @property
    def boot_id_changed(self) -> bool:
        return None not in (self.boot_id_before, self.boot_id_after) and self.boot_id_before != self.boot_id_after


def valid_boot_id(text: str) -> str | None:
    """The boot id if `text` is exactly one canonical UUID (what the kernel prints), else None."""
    value = text.strip()
    try:
        return value if str(uuid.UUID(value)) == value else None
    except ValueError:
        return None


@dataclass
class ConsoleWatch:
    """Looks for a fresh kernel banner (or another `pattern`) in a console log, past an offset, reading only new
    bytes; `banner` is what it found.

    A log shorter than the offset was rotated or truncated meanwhile: it is read from its start.
    """

    path: Path
    offset: int
    banner: str | None = None
    pattern: re.Pattern[bytes] = KERNEL_BANNER
    _tail: bytes = field(default=b"", repr=False)

    @classmethod
    def from_now(cls, path: Path) -> ConsoleWatch:
        return cls(path, console_size(path))

    def saw_banner(self) -> bool:
        if self.banner is not None:
            return True
        size = console_size(self.path)
        if size < self.offset:
            self.offset, self._tail = 0, b""
        try:
            with open(self.path, "rb") as log:
                log.seek(self.offset)
                while chunk := log.read(_CHUNK):
                    self.offset += len(chunk)
                    window = self._tail + chunk
                    if match := self.pattern.search(window):
                        self.banner = match.group(0).decode(errors="replace")[:120]
                        return True
                    self._tail = window[-_OVERLAP:]
        except OSError:
            pass
        return False


def console_size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
