"""A local guest's QEMU process, found without libvirt: how its guests are still destroyed when libvirtd is gone.

libvirtd writes each running domain's QEMU pid to `<run dir>/<name>.pid` and
names the guest on QEMU's command line (`-name guest=<name>,...`); the pid is
only trusted when that process's command line still names the guest, so a
stale file and a reused pid never kill anything else.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

QEMU_RUN_DIR = Path("/var/run/libvirt/qemu")


def qemu_pid(name: str, run_dir: Path = QEMU_RUN_DIR) -> int | None:
    """The pid of the QEMU process running guest `name`, or None when there is none."""
    try:
        pid = int((run_dir / f"{name}.pid").read_text().strip())
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (OSError, ValueError):
        return None
    return pid if f"guest={name}".encode() in b",".join(argv).split(b",") else None


def kill_qemu(name: str, run_dir: Path = QEMU_RUN_DIR) -> bool:
    """SIGKILL guest `name`'s QEMU; False when no such process runs."""
    pid = qemu_pid(name, run_dir)
    if pid is None:
        return False
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return False
    return True
