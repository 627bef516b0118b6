"""Named VMs a person drives by hand (`aoe vm up|ssh|down NAME`), outside any match.

Each lives in `<cache>/vms/NAME/` (key, known_hosts, overlay, console log,
state.json) so `down` then `up` resumes the same disk, and its domain is
marked "manual" so `aoe doctor --clean` leaves it alone.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.domain_xml import OWNER_KIND_MANUAL, domain_name
from aoe_tui.runtime.guest import TerritoryConfig, TerritoryVM
from aoe_tui.runtime.hypervisor import DEFAULT_URI, Hypervisor
from aoe_tui.runtime.image import ImageInfo, require_image
from aoe_tui.runtime.keys import MatchKeys
from aoe_tui.runtime.kvm_probe import AccelChoice, choose_accel
from aoe_tui.runtime.paths import vms_dir
from aoe_tui.runtime.ports import LOOPBACK, TerritoryPorts, check_ports_free, port_is_free
from aoe_tui.store.match_layout import MatchLayout

MANUAL_BASE_PORT = 26900
MATCH_ID = "vm"
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,30}$")


@dataclass(frozen=True)
class VMState:
    name: str
    uri: str
    ssh_port: int
    service_port: int
    vcpus: int
    memory_mib: int


def vm_dir(name: str) -> Path:
    if not _NAME.match(name):
        raise AoeError(f"vm name {name!r}: use 1-31 lowercase letters, digits and hyphens")
    return vms_dir() / name


def load_state(name: str) -> VMState | None:
    path = vm_dir(name) / "state.json"
    if not path.exists():
        return None
    try:
        return VMState(**json.loads(path.read_text()))
    except (ValueError, TypeError) as error:
        raise AoeError(f"{path}: unreadable vm state ({error}); remove it with `aoe vm down {name} --purge`") from None


def _require_state(name: str) -> VMState:
    state = load_state(name)
    if state is None:
        raise AoeError(f"vm {name}: no such vm under {vms_dir()}; start it with `aoe vm up {name}`")
    return state


def _free_port_pair(base_port: int) -> tuple[int, int]:
    claimed: set[int] = set()
    if vms_dir().is_dir():
        for other in vms_dir().glob("*/state.json"):
            try:
                data = json.loads(other.read_text())
                claimed.update((int(data["ssh_port"]), int(data["service_port"])))
            except (OSError, ValueError, KeyError, TypeError):
                continue  # a broken state file claims nothing; `aoe vm down NAME --purge` removes it
    for port in range(base_port, 65534, 2):
        if not {port, port + 1} & claimed and port_is_free(port) and port_is_free(port + 1):
            return port, port + 1
    raise AoeError(f"no free pair of loopback ports at or above {base_port}")


def _territory_vm(state: VMState, hypervisor: Hypervisor, image: ImageInfo, accel: AccelChoice) -> TerritoryVM:
    config = TerritoryConfig(
        match_id=MATCH_ID,
        territory_id=state.name,
        vcpus=state.vcpus,
        memory_mib=state.memory_mib,
        directory=MatchLayout(vm_dir(state.name)).territory_directory(state.name),
        ports=TerritoryPorts(state.ssh_port, state.service_port),
        uri=state.uri,
        owner_kind=OWNER_KIND_MANUAL,
    )
    return TerritoryVM(config, hypervisor, MatchKeys.ensure(vm_dir(state.name) / "ssh"), image, accel)


async def vm_up(
    name: str,
    vcpus: int = 1,
    memory_mib: int = 1024,
    uri: str = DEFAULT_URI,
    base_port: int = MANUAL_BASE_PORT,
    ssh_timeout: float = 240.0,
) -> tuple[TerritoryVM, float]:
    """Boot (or re-boot, keeping its disk) the named VM; returns it and the seconds to SSH."""
    state = load_state(name)
    if state is None:
        ssh_port, service_port = _free_port_pair(base_port)
        state = VMState(name, uri, ssh_port, service_port, vcpus, memory_mib)
        vm_dir(name).mkdir(parents=True, exist_ok=True)
        (vm_dir(name) / "state.json").write_text(json.dumps(asdict(state), indent=2) + "\n")
    image = require_image()
    accel = await asyncio.to_thread(choose_accel, image.kernel)
    hypervisor = await Hypervisor.connect(state.uri)
    try:
        vm = _territory_vm(state, hypervisor, image, accel)
        if await vm.state() is not None:
            raise AoeError(f"vm {name} is already running; attach with `aoe vm ssh {name}`")
        check_ports_free({name: vm.config.ports})
        await vm.boot()
        seconds = await vm.wait_for_ssh(ssh_timeout)
        await vm.ssh.close()
        return vm, seconds
    finally:
        await hypervisor.close()


def vm_ssh_argv(name: str, command: list[str] | None = None) -> list[str]:
    state = _require_state(name)
    keys = MatchKeys(vm_dir(name) / "ssh")
    return keys.openssh_argv(LOOPBACK, state.ssh_port) + list(command or [])


async def vm_down(name: str, purge: bool = False) -> bool:
    """Destroy the VM's domain (True if it was running); with purge also delete its disk and keys."""
    state = _require_state(name)
    hypervisor = await Hypervisor.connect(state.uri)
    try:
        was_running = await hypervisor.destroy(domain_name(MATCH_ID, name))
    finally:
        await hypervisor.close()
    if purge:
        shutil.rmtree(vm_dir(name))
    return was_running
