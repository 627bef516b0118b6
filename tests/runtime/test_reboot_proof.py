"""The referee's reboot, decided from outside the guest: fast, with a fake hypervisor and a fake SSH.

The fake hypervisor behaves like libvirt + QEMU: an honest guest answers the ACPI
button by resetting (a "rebooted" event, then a fresh kernel banner on the serial
console); a cheating guest ignores the button, and only the referee's reset
reboots it. The real path is proven on a real VM in tests/engine/test_vm_cheats.py.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.guest import TerritoryConfig, TerritoryVM
from aoe_tui.runtime.ports import TerritoryPorts
from aoe_tui.runtime.reboot import ConsoleWatch, valid_boot_id
from aoe_tui.runtime.ssh import CommandResult

BANNER = b"[    0.000000] Linux version 6.1.0-57-cloud-amd64 (debian-kernel@lists.debian.org)\n"


def test_boot_id_must_be_one_canonical_uuid() -> None:
    good = str(uuid.uuid4())
    assert valid_boot_id(good + "\n") == good
    for forged in ("", "same", good.replace("-", ""), good.upper(), good + " " + good, "<b>" + good + "</b>"):
        assert valid_boot_id(forged) is None, forged


def test_console_watch_sees_only_a_banner_past_its_offset(tmp_path: Path) -> None:
    console = tmp_path / "console.log"
    console.write_bytes(b"noise\n" + BANNER + b"login: ")
    watch = ConsoleWatch.from_now(console)
    assert not watch.saw_banner()  # the boot before the request does not count
    with open(console, "ab") as log:
        log.write(b"echo Linux version 9.9 (typed by userland, no kernel timestamp)\n")
    assert not watch.saw_banner()
    with open(console, "ab") as log:
        log.write(b"x" * 3_000_000 + BANNER[:20])
    assert not watch.saw_banner()
    with open(console, "ab") as log:
        log.write(BANNER[20:])  # the banner straddles two reads
    assert watch.saw_banner() and watch.banner.startswith("[    0.000000] Linux version 6.1.0")


def test_console_watch_reads_a_rotated_log_from_its_start(tmp_path: Path) -> None:
    console = tmp_path / "console.log"
    console.write_bytes(b"y" * 5000)
    watch = ConsoleWatch.from_now(console)
    console.write_bytes(BANNER)  # rotated: now shorter than the offset
    assert watch.saw_banner()


class FakeHypervisor:
    """libvirt as the referee sees it; `honours_acpi` is the guest's choice, the reset is not."""

    uri = "test:///fake"

    def __init__(self, vm_box: list, honours_acpi: bool, comes_back: bool = True, hung_restarts: int = 0) -> None:
        self.vm_box = vm_box
        self.honours_acpi = honours_acpi
        self.comes_back = comes_back
        self.hung_restarts = hung_restarts  # restarts whose firmware hangs before the kernel (seen under TCG)
        self.calls: list[str] = []

    @property
    def vm(self) -> TerritoryVM:
        return self.vm_box[0]

    async def reboot_acpi(self, name: str) -> None:
        self.calls.append("reboot_acpi")
        if self.honours_acpi:
            asyncio.get_running_loop().call_later(0.1, self._guest_resets)

    async def reset(self, name: str) -> None:
        self.calls.append("reset")
        self._guest_resets()

    def _guest_resets(self) -> None:
        self.vm._record_event("rebooted")
        self.vm.ssh.boot = str(uuid.uuid4())
        if self.hung_restarts:
            self.hung_restarts -= 1
        elif self.comes_back:
            with open(self.vm.console_path, "ab") as log:
                log.write(BANNER)

    async def state(self, name: str) -> str:
        return "running"


class FakeSSH:
    def __init__(self, forged_boot_id: str | None = None) -> None:
        self.boot = str(uuid.uuid4())
        self.forged = forged_boot_id

    async def run(self, command: str, timeout: float) -> CommandResult:
        assert command == "/usr/bin/cat /proc/sys/kernel/random/boot_id"
        return CommandResult(0, (self.forged or self.boot) + "\n", "")

    async def connect(self, timeout: float) -> None:
        return None

    def drop(self) -> None:
        pass


def _vm(
    tmp_path: Path, honours_acpi: bool, comes_back: bool = True, forged: str | None = None, hung_restarts: int = 0
) -> TerritoryVM:
    box: list = []
    config = TerritoryConfig("m", "alpha", 1, 512, tmp_path, TerritoryPorts(32000, 32001))
    hypervisor = FakeHypervisor(box, honours_acpi, comes_back, hung_restarts)
    vm = TerritoryVM(config, hypervisor, keys=None, image=None, accel=None)
    box.append(vm)
    vm.ssh = FakeSSH(forged)
    tmp_path.mkdir(parents=True, exist_ok=True)
    vm.console_path.write_bytes(BANNER + b"login: ")  # the first boot
    return vm


async def test_an_honest_guest_reboots_on_the_acpi_button_proven_by_libvirt_and_the_console(tmp_path: Path) -> None:
    vm = _vm(tmp_path, honours_acpi=True)
    proof = await vm.reboot(timeout=5, acpi_grace=2)
    assert proof.caused_by == "acpi" and vm.hypervisor.calls == ["reboot_acpi"]
    assert proof.proven_by == ("libvirt-event", "console-banner", "boot-id")
    assert proof.boot_id_changed and proof.to_json()["reboot_caused_by"] == "acpi"


async def test_a_guest_ignoring_the_button_is_reset_by_the_referee(tmp_path: Path) -> None:
    vm = _vm(tmp_path, honours_acpi=False)
    proof = await vm.reboot(timeout=5, acpi_grace=0.3)
    assert vm.hypervisor.calls == ["reboot_acpi", "reset"]
    assert proof.caused_by == "reset-fallback"
    assert set(proof.proven_by) == {"libvirt-event", "referee-reset", "console-banner", "boot-id"}
    assert "referee-reset" in [event for _, event in vm.lifecycle_events]


async def test_a_forged_boot_id_proves_nothing_but_does_not_stop_a_real_reboot(tmp_path: Path) -> None:
    vm = _vm(tmp_path, honours_acpi=False, forged="not-a-uuid")
    proof = await vm.reboot(timeout=5, acpi_grace=0.3)
    assert proof.boot_id_before is None and proof.boot_id_after is None and not proof.boot_id_changed
    assert "boot-id" not in proof.proven_by and "referee-reset" in proof.proven_by


async def test_a_guest_that_never_boots_again_is_a_readable_failure(tmp_path: Path) -> None:
    vm = _vm(tmp_path, honours_acpi=False, comes_back=False)
    with pytest.raises(
        AoeError,
        match=r"alpha: the guest did not come back within 1 s of the reset-fallback reboot "
        r"\(no fresh kernel boot on the serial console\); console tail: .*login:",
    ):
        await vm.reboot(timeout=1, acpi_grace=0.2)


async def test_a_restart_that_hangs_before_the_kernel_is_reset_once_and_the_reboot_still_counts(tmp_path: Path) -> None:
    vm = _vm(tmp_path, honours_acpi=True, hung_restarts=1)
    proof = await vm.reboot(timeout=5, acpi_grace=2, restart_stall=0.5)
    assert vm.hypervisor.calls == ["reboot_acpi", "reset"]
    assert proof.caused_by == "acpi" and proof.proven_by == ("libvirt-event", "console-banner", "boot-id")
    assert [event for _, event in vm.lifecycle_events].count("restart-stall-reset") == 1


async def test_a_restart_that_hangs_again_after_its_reset_is_not_reset_twice(tmp_path: Path) -> None:
    vm = _vm(tmp_path, honours_acpi=True, hung_restarts=2)
    with pytest.raises(AoeError, match=r"alpha: the guest did not come back within 1.5 s of the acpi reboot"):
        await vm.reboot(timeout=1.5, acpi_grace=1, restart_stall=0.3)
    assert vm.hypervisor.calls == ["reboot_acpi", "reset"]
