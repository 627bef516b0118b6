"""Boot one real guest through the runtime's facade, for a whole test module.

The machine has two cores, TCG only, and other suites boot guests too, so a
module shares one guest and skips (with the reason) when there is no image.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from collections.abc import AsyncIterator

import pytest

from aoe_tui.runtime.guest import TerritoryConfig, TerritoryVM
from aoe_tui.runtime.hypervisor import Hypervisor
from aoe_tui.runtime.image import cached_image
from aoe_tui.runtime.keys import MatchKeys
from aoe_tui.runtime.kvm_probe import choose_accel
from aoe_tui.runtime.ports import LOOPBACK, TerritoryPorts, port_is_free
from tests.agents_real.harness_run import GuestAccess

PROJECT = Path(__file__).resolve().parents[2]
SSH_BOOT_TIMEOUT_S = 180


def free_ports(count: int, first: int = 31000 + (os.getpid() % 400) * 4, last: int = 32700) -> int:
    """The first base port with `count` consecutive free loopback ports (other suites boot guests too), below
    the kernel's ephemeral range (from 32768): a port there may become some connection's own end before QEMU
    listens on it (tests/runtime/test_fixed_port_ranges.py)."""
    for base in range(first, last, count):
        if all(port_is_free(port) for port in range(base, base + count)):
            return base
    raise RuntimeError(f"no {count} consecutive free loopback ports in {first}..{last}")


async def boot_shared_guest(directory: Path, match_id: str) -> AsyncIterator[TerritoryVM]:
    image = cached_image()
    if image is None:
        pytest.skip("no guest image; build it with `aoe image build`")
    subprocess.run([str(PROJECT / "scripts" / "services")], check=True)
    hypervisor = await Hypervisor.connect()
    keys = MatchKeys.ensure(directory / "keys")
    config = TerritoryConfig(
        match_id=match_id,
        territory_id="builder-one",
        vcpus=1,
        memory_mib=768,
        directory=directory / "territory",
        ports=TerritoryPorts(base := free_ports(2), base + 1),
    )
    vm = TerritoryVM(config, hypervisor, keys, image, choose_accel(image.kernel))
    try:
        await vm.boot()
        await vm.wait_for_ssh(SSH_BOOT_TIMEOUT_S)
        yield vm
    finally:
        await vm.destroy()
        await hypervisor.close()


def access(vm: TerritoryVM) -> GuestAccess:
    return GuestAccess(LOOPBACK, vm.ssh_port, vm.keys.private_key_path, vm.keys.known_hosts_path)
