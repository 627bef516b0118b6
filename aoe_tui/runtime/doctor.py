"""`aoe doctor`: everything a match needs from this machine, each problem with its fix.

Checks never raise: a machine with five problems should hear about all five in
one run, each with the command that fixes it.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.cleanup import destroy_leftovers, leftover_domains
from aoe_tui.runtime.hypervisor import DEFAULT_URI, Hypervisor
from aoe_tui.runtime.image import cached_image, image_dir
from aoe_tui.runtime.kvm_probe import QEMU, choose_accel
from aoe_tui.runtime.paths import images_dir
from aoe_tui.runtime.ports import reserve_ports
from aoe_tui.runtime.qemu_user import DEFAULT_USER, QEMU_CONF, configured_user
from aoe_tui.runtime.warm_start import templates_dir
from aoe_tui.runtime.warm_template import kept_templates, remove_unusable

VIRTLOGD_SOCKET = "/var/run/libvirt/virtlogd-sock"
SERVICES_FIX = "scripts/services   (or: virtlogd -d; libvirtd -d)"


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # "ok", "warn" or "fail"
    detail: str
    fix: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def _ok(name: str, detail: str) -> Check:
    return Check(name, "ok", detail)


def _tool(name: str, binary: str, package: str) -> Check:
    path = shutil.which(binary)
    if path:
        return _ok(name, path)
    return Check(name, "fail", f"{binary} not found on PATH", f"apt-get install {package}")


async def run_doctor(
    uri: str = DEFAULT_URI, base_port: int | None = None, territories: int = 3, clean: bool = False
) -> list[Check]:
    checks = [
        _tool("qemu", QEMU, "qemu-system-x86"),
        _tool("qemu-img", "qemu-img", "qemu-utils"),
        _tool("mmdebstrap", "mmdebstrap", "mmdebstrap"),
        _tool("mkfs.ext4", "mkfs.ext4", "e2fsprogs"),
        _tool("ssh client", "ssh", "openssh-client"),
        _virtlogd(),
        image_check(),
        await asyncio.to_thread(accel_check),
        await asyncio.to_thread(harness_cpu_check),
        _ports(base_port, territories),
    ]
    checks.extend(await _libvirt(uri, clean))
    checks.append(qemu_user_check())
    checks.append(warm_templates_check(clean))
    return checks


def is_ready(checks: list[Check]) -> bool:
    """The verdict scripts gate on: warnings slow a match down, failures stop it."""
    return not any(check.status == "fail" for check in checks)


def report_json(checks: list[Check]) -> dict:
    return {"ready": is_ready(checks), "checks": [check.as_dict() for check in checks]}


def _virtlogd() -> Check:
    if os.path.exists(VIRTLOGD_SOCKET):
        return _ok("virtlogd", VIRTLOGD_SOCKET)
    return Check(
        "virtlogd", "fail", f"{VIRTLOGD_SOCKET} missing: libvirt cannot start domains without virtlogd", SERVICES_FIX
    )


def image_check() -> Check:
    info = cached_image()
    if info is not None:
        return _ok("guest image", f"{info.path} (recipe {info.recipe_hash})")
    stale = (
        [p.name for p in images_dir().glob("*") if p.is_dir() and not p.name.startswith(".")]
        if images_dir().is_dir()
        else []
    )
    detail = f"no current image at {image_dir()}" + (f" (stale: {', '.join(stale)})" if stale else "")
    return Check("guest image", "fail", detail, "aoe image build")


def accel_check() -> Check:
    info = cached_image()
    try:
        choice = choose_accel(info.kernel if info else None)
    except AoeError as error:
        return Check("accelerator", "fail", str(error), "unset AOE_ACCEL or set it to kvm or tcg")
    if choice.accel == "kvm":
        return _ok("accelerator", f"KVM ({choice.reason})")
    return Check(
        "accelerator",
        "warn",
        f"TCG software emulation, guests boot slowly: {choice.reason}",
        "nothing to do; AOE_ACCEL=kvm forces KVM once it works",
    )


def harness_cpu_check() -> Check:
    """Whether harness guests get AVX2, which the real harnesses' native binaries need: under KVM the host's CPU
    must have it; under TCG, QEMU emulates it from 7.2 on (a harness guest gets the `maximum` CPU model)."""
    info = cached_image()
    try:
        choice = choose_accel(info.kernel if info else None)
    except AoeError as error:
        return Check("harness CPU", "warn", str(error), "see the accelerator check")
    if choice.accel == "kvm":
        try:
            flags = Path("/proc/cpuinfo").read_text()
        except OSError:
            flags = ""
        if " avx2" in flags:
            return _ok("harness CPU", "KVM: the host CPU has AVX2 (harness guests pass it through)")
        return Check(
            "harness CPU", "warn", "KVM host CPU without AVX2: the native harnesses will not start", "AOE_ACCEL=tcg"
        )
    version = qemu_version()
    if version is not None and version >= (7, 2):
        detail = f"TCG: QEMU {'.'.join(map(str, version))} emulates AVX2 (harness guests get CPU model `maximum`)"
        return _ok("harness CPU", detail)
    return Check(
        "harness CPU",
        "warn",
        f"TCG with QEMU {'.'.join(map(str, version or ())) or 'of unknown version'}: no AVX2 before 7.2, "
        "so Claude Code, Codex and opencode will not start in a guest",
        "install QEMU 7.2 or later",
    )


def qemu_version() -> tuple[int, ...] | None:
    try:
        out = subprocess.run([QEMU, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"version (\d+)\.(\d+)", out)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _ports(base_port: int | None, territories: int) -> Check:
    """Whether a match can get its ports: any free block (the default), or the block `--base-port` names."""
    try:
        reservation = reserve_ports([f"t{i}" for i in range(territories)], base_port)
    except AoeError as error:
        return Check("ports", "fail", str(error), "aoe doctor --clean (leftover VMs), or omit --base-port")
    reservation.release()
    last = reservation.base_port + 2 * territories - 1
    how = "the first free block; each match finds its own" if reservation.automatic else "free"
    return _ok("ports", f"127.0.0.1:{reservation.base_port}-{last} ({how})")


async def _libvirt(uri: str, clean: bool) -> list[Check]:
    try:
        hypervisor = await Hypervisor.connect(uri)
    except AoeError as error:
        return [Check("libvirtd", "fail", str(error), SERVICES_FIX)]
    try:
        checks = [_ok("libvirtd", f"connected to {uri}")]
        checks.append(await _leftovers(hypervisor, clean))
        return checks
    finally:
        await hypervisor.close()


async def _leftovers(hypervisor: Hypervisor, clean: bool) -> Check:
    if clean:
        destroyed = await destroy_leftovers(hypervisor)
        return _ok("leftover VMs", f"destroyed {', '.join(destroyed)}" if destroyed else "none")
    leftovers = await leftover_domains(hypervisor)
    if not leftovers:
        return _ok("leftover VMs", "none")
    return Check(
        "leftover VMs",
        "warn",
        f"{len(leftovers)} from crashed runs: {', '.join(r.name for r in leftovers)}",
        "aoe doctor --clean",
    )


def warm_templates_check(clean: bool = False) -> Check:
    """The warm-start templates in the cache (a few hundred MiB each): how many, how big, and those no match can
    restore any more (made over an image since rebuilt, or cut short), which `--clean` removes."""
    kept = kept_templates()
    removed = remove_unusable(kept) if clean else []
    kept = [t for t in kept if t not in removed]
    mib = sum(t.size_bytes for t in kept) / 2**20
    summary = f"{len(kept)} in {templates_dir()}, {mib:.0f} MiB" if kept else "none yet (the first match makes one)"
    if removed:
        freed = sum(t.size_bytes for t in removed) / 2**20
        summary += f"; removed {len(removed)} no match could restore ({freed:.0f} MiB)"
    unusable = [t for t in kept if not t.usable]
    if not unusable:
        return _ok("warm-start templates", summary)
    waste = sum(t.size_bytes for t in unusable) / 2**20
    return Check(
        "warm-start templates",
        "warn",
        f"{summary}, of which {len(unusable)} no match can restore ({waste:.0f} MiB: an image rebuilt since, or cut "
        "short)",
        "aoe doctor --clean",
    )


def qemu_user_check(conf: Path = QEMU_CONF) -> Check:
    """Whether guests run as libvirt's unprivileged qemu user (runtime.qemu_user decides, per match).

    Only a warning: a guest under root still plays fair, but a QEMU escape
    would then own the host, so the operator should know.
    """
    choice = configured_user(conf)
    if not choice.unprivileged:
        return Check(
            "qemu user",
            "warn",
            choice.reason,
            f'set user = "{DEFAULT_USER}" and dynamic_ownership = 1 in {conf}, then restart libvirtd',
        )
    return _ok(
        "qemu user",
        f"{choice.reason}; a match directory that uid {choice.uid} cannot enter "
        "(e.g. under /root) runs its guests as root",
    )
