"""Reading `hosts.toml` (`--hosts FILE`): one line naming the file and the field for every mistake.

Relative key and known_hosts paths are resolved beside the file, so an
inventory and its keys can be kept together and moved as one folder.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import ValidationError

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.hosts import Inventory
from aoe_tui.domain.manifest_rules import format_location


def read_inventory(path: Path) -> Inventory:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AoeError(f"{path}: no such hosts file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise AoeError(f"{path}: cannot read hosts file ({error.__class__.__name__})") from None
    except tomllib.TOMLDecodeError as error:
        raise AoeError(f"{path}: {error}") from None
    try:
        inventory = Inventory.model_validate(data)
    except ValidationError as error:
        # A misspelt key also makes the key it meant "missing": the misspelling is the line worth reading.
        first = min(error.errors(), key=lambda e: e["type"] != "extra_forbidden")
        where = format_location(first["loc"])
        raise AoeError(
            f"{path}: field {where or '?'}: {first['msg']}" if where else f"{path}: {first['msg']}"
        ) from None
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
