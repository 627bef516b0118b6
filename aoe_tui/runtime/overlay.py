"""Copy-on-write disks: every territory writes to its own qcow2 on top of the shared base image.

An overlay is sparse but may grow to its full size, and a host filesystem that
fills up pauses the guests writing to it (an arena fault for all of them), so a
match checks up front that every disk fits, with a margin for logs and records.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from aoe_tui.domain.errors import AoeError

ROOM_MARGIN_MIB = 1024


def overlay_argv(base: str, overlay: str, size_mib: int | None = None, base_format: str = "raw") -> list[str]:
    """`qemu-img create` of a qcow2 `overlay` backed by `base` (raw, or a warm-start template's qcow2); the same
    on this machine or a remote host."""
    return [
        "qemu-img",
        "create",
        "-q",
        "-f",
        "qcow2",
        "-b",
        base,
        "-F",
        base_format,
        overlay,
        *([f"{size_mib}M"] if size_mib else []),
    ]


def create_overlay(base: Path, overlay: Path, size_mib: int | None = None, base_format: str = "raw") -> None:
    """Create `overlay` backed by `base` (never modifying the base), `size_mib` big (default: the base's)."""
    if shutil.which("qemu-img") is None:
        raise AoeError("qemu-img is not installed; install it with `apt-get install qemu-utils`")
    overlay.parent.mkdir(parents=True, exist_ok=True)
    temporary = overlay.with_name(overlay.name + ".tmp")
    result = subprocess.run(
        overlay_argv(str(base.resolve()), str(temporary), size_mib, base_format), capture_output=True, text=True
    )
    if result.returncode != 0:
        raise AoeError(f"{overlay}: qemu-img could not create the overlay: {result.stderr.strip()}")
    temporary.replace(overlay)


def check_disk_room(directory: Path, disks_mib: dict[str, int]) -> None:
    """Raise one clear line when `directory`'s filesystem cannot hold all these disks at their full size."""
    if not disks_mib:
        return
    directory.mkdir(parents=True, exist_ok=True)
    free_mib = shutil.disk_usage(directory).free // (1024 * 1024)
    needed = sum(disks_mib.values()) + ROOM_MARGIN_MIB
    if free_mib < needed:
        sizes = " + ".join(f"{tid} {mib}" for tid, mib in disks_mib.items())
        raise AoeError(
            f"{directory}: {free_mib} MiB free on its filesystem, the guests' disks may need {needed} MiB "
            f"({sizes} + {ROOM_MARGIN_MIB} margin); free space or lower the classes' disk_mib"
        )
