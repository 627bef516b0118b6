"""Decide between KVM and TCG by booting, not by looking.

On these machines /dev/kvm opens and KVM_CREATE_VM succeeds, yet a KVM guest
hangs in early boot with no output. So the only trustworthy test is a short
boot of the guest kernel that must print its banner on the serial port in
time. The probe costs seconds, so its answer is cached for the process and
on disk for the host's current boot (a host reboot or a new guest kernel
probes again); AOE_ACCEL=kvm|tcg overrides it.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.paths import cache_root

QEMU = "qemu-system-x86_64"
PROBE_SECONDS = 8.0
_BANNER = b"Linux version"
ACCELERATORS = ("kvm", "tcg")


@dataclass(frozen=True)
class AccelChoice:
    accel: str
    reason: str

    @property
    def domain_type(self) -> str:
        """libvirt's name for it: `<domain type='kvm'>` or `<domain type='qemu'>` (TCG)."""
        return "kvm" if self.accel == "kvm" else "qemu"


_probed: AccelChoice | None = None


def choose_accel(kernel: Path | None) -> AccelChoice:
    forced = os.environ.get("AOE_ACCEL", "").strip().lower()
    if forced:
        if forced not in ACCELERATORS:
            raise AoeError(f"AOE_ACCEL={forced!r} is not one of kvm, tcg")
        return AccelChoice(forced, "forced by AOE_ACCEL")
    global _probed
    if _probed is None:
        _probed = _cached_probe(kernel)
    return _probed


def _probe_key(kernel: Path | None) -> dict[str, str]:
    host_boot = Path("/proc/sys/kernel/random/boot_id")
    return {
        "host_boot_id": host_boot.read_text().strip() if host_boot.exists() else "",
        "kernel": str(kernel) if kernel is not None and kernel.is_file() else "",
    }


def _cached_probe(kernel: Path | None) -> AccelChoice:
    """The probe's answer for this host boot and kernel, probing only when nothing is recorded."""
    cache = cache_root() / "accel.json"
    key = _probe_key(kernel)
    try:
        recorded = json.loads(cache.read_text())
        if recorded.get("key") == key and recorded.get("accel") in ACCELERATORS:
            return AccelChoice(recorded["accel"], f"{recorded['reason']} (probed earlier this boot)")
    except (OSError, ValueError, AttributeError):
        pass
    choice = probe_kvm(kernel)
    if key["kernel"]:  # without a kernel the answer says nothing about KVM; probe again next time
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps({"key": key, "accel": choice.accel, "reason": choice.reason}))
    return choice


def probe_kvm(kernel: Path | None, seconds: float = PROBE_SECONDS) -> AccelChoice:
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return AccelChoice("tcg", "/dev/kvm is missing or not accessible")
    if kernel is None or not kernel.is_file():
        return AccelChoice("tcg", "no guest kernel to probe KVM with (build the image first)")
    if shutil.which(QEMU) is None:
        return AccelChoice("tcg", f"{QEMU} not found")
    command = [
        QEMU,
        "-accel",
        "kvm",
        "-nodefaults",
        "-display",
        "none",
        "-no-reboot",
        "-m",
        "256",
        "-serial",
        "stdio",
        "-kernel",
        str(kernel),
        "-append",
        "console=ttyS0 panic=-1",
    ]
    if _prints_banner(command, seconds):
        return AccelChoice("kvm", f"KVM guest printed its kernel banner within {seconds:.0f} s")
    return AccelChoice("tcg", f"KVM guest printed nothing within {seconds:.0f} s (broken nested KVM); using TCG")


def _prints_banner(command: list[str], seconds: float) -> bool:
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdout is not None
    seen = b""
    deadline = time.monotonic() + seconds
    try:
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([process.stdout], [], [], left)
            if not ready:
                break
            chunk = os.read(process.stdout.fileno(), 4096)
            if not chunk:
                break
            seen += chunk
            if _BANNER in seen:
                return True
        return False
    finally:
        process.kill()
        process.wait()
        process.stdout.close()
