"""Copy-on-write disks: every territory writes to its own qcow2 on top of the shared base image."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from aoe_tui.domain.errors import AoeError


def create_overlay(base: Path, overlay: Path) -> None:
    """Create `overlay` backed by the raw `base` (never modifying the base)."""
    if shutil.which("qemu-img") is None:
        raise AoeError("qemu-img is not installed; install it with `apt-get install qemu-utils`")
    overlay.parent.mkdir(parents=True, exist_ok=True)
    temporary = overlay.with_name(overlay.name + ".tmp")
    result = subprocess.run(
        ["qemu-img", "create", "-q", "-f", "qcow2", "-b", str(base.resolve()), "-F", "raw", str(temporary)],
        capture_output=True, text=True)
    if result.returncode != 0:
        raise AoeError(f"{overlay}: qemu-img could not create the overlay: {result.stderr.strip()}")
    temporary.replace(overlay)
