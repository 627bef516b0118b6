"""Reading `hosts.toml` (`--hosts FILE`): one line naming the file and the field for every mistake.

Relative key and known_hosts paths are resolved beside the file, so an
inventory and its keys can be kept together and moved as one folder.
"""

from __future__ import annotations

from pathlib import Path

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.hosts import Inventory
from aoe_tui.store.manifest_file import read_manifest_data, validated


def read_inventory(path: Path) -> Inventory:
    path = Path(path)
    inventory = validated(Inventory, read_manifest_data(path, "hosts file"), path)
    hosts = []
    for index, host in enumerate(inventory.hosts):
        if host.ssh is None:
            hosts.append(host)
            continue
        files = {name: _beside(path, getattr(host.ssh, name)) for name in ("key_file", "known_hosts")}
        for name, file in files.items():
            if not file.is_file():
                raise AoeError(f"{path}: field hosts[{index}].ssh.{name}: {file} does not exist")
        hosts.append(host.model_copy(update={"ssh": host.ssh.model_copy(update={k: str(v) for k, v in files.items()})}))
    return Inventory(hosts=hosts)


def _beside(inventory: Path, value: str) -> Path:
    file = Path(value).expanduser()
    return file if file.is_absolute() else (inventory.parent / file).resolve()
