"""One real guest (TCG): its disk is the class's size, QEMU runs as the qemu user, and a full host disk
pauses the guest with an I/O error, which the referee must see as a dead territory, never as alive.

The territory directory is a small tmpfs, so "the host disk is full" is real
without filling this machine's disk.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from aoe_tui.engine.libvirt_host import LibvirtTerritory
from aoe_tui.runtime.match_runtime import MatchRuntime, TerritorySpec
from aoe_tui.runtime.qemu_user import configured_user

pytestmark = pytest.mark.vm
BASE_PORT = 32410  # H5's range is 32400-32599
DISK_MIB = 6144
TMPFS_MIB = 400


@pytest.fixture(scope="module")
def guest(guest_image):
    work = Path(tempfile.mkdtemp(prefix="aoe-vm-disk-", dir="/var/tmp"))
    work.chmod(0o755)
    territory_dir = work / "match" / "territories" / "t1"
    territory_dir.mkdir(parents=True)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_MIB}m,mode=0755", "aoe-disk-test", str(territory_dir)], check=True
    )
    loop = asyncio.new_event_loop()
    runtime = MatchRuntime(
        work / "match",
        "h5disk",
        [TerritorySpec("t1", 1, 768, disk_mib=DISK_MIB)],
        base_port=BASE_PORT,
        image=guest_image,
    )
    try:
        loop.run_until_complete(runtime.start())
        yield loop, runtime, runtime.vms["t1"]
    finally:
        loop.run_until_complete(runtime.close())
        loop.close()
        subprocess.run(["umount", str(territory_dir)], check=False)
        shutil.rmtree(work, ignore_errors=True)


def test_the_guest_disk_and_root_filesystem_have_the_class_size(guest):
    loop, _, vm = guest
    result = loop.run_until_complete(vm.run("lsblk -b -n -o SIZE /dev/vda; df -m --output=size / | tail -1", 30))
    disk_bytes, root_mib = (int(value) for value in result.stdout.split())
    assert disk_bytes == DISK_MIB * 1024 * 1024
    assert root_mib > DISK_MIB * 0.9, f"root filesystem is {root_mib} MiB on a {DISK_MIB} MiB disk"


def test_qemu_runs_as_the_unprivileged_user(guest):
    _, runtime, vm = guest
    expected = configured_user()
    assert runtime.qemu_user.unprivileged == expected.unprivileged, runtime.qemu_user.reason
    pid = int(Path(f"/var/run/libvirt/qemu/{vm.name}.pid").read_text())
    assert os.stat(f"/proc/{pid}").st_uid == (expected.uid if expected.unprivileged else 0)


def test_a_full_host_disk_pauses_the_guest_and_it_no_longer_counts_as_alive(guest):
    loop, _, vm = guest
    territory = LibvirtTerritory(vm)
    assert loop.run_until_complete(territory.alive())
    filling = loop.create_task(vm.run("dd if=/dev/zero of=/fill bs=1M count=2048 oflag=direct", 300))

    async def wait_for_ioerror() -> tuple[str, str] | None:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            state = await vm.hypervisor.state_reason(vm.name)
            if state == ("paused", "ioerror"):
                return state
            await asyncio.sleep(1)
        return await vm.hypervisor.state_reason(vm.name)

    try:
        assert loop.run_until_complete(wait_for_ioerror()) == ("paused", "ioerror")
        assert not loop.run_until_complete(vm.is_running())
        assert not loop.run_until_complete(territory.alive())
    finally:
        filling.cancel()
        loop.run_until_complete(asyncio.gather(filling, return_exceptions=True))
