"""An arena's starting state for its guests (`[provisioning]` in `arena.toml`), as strict models.

Arenas beyond First Build start from something the player must find and keep:
files with given modes, a seeded SQLite database, units that must already be
running, dormant "slot" units the player fills, and seed units that re-create
what is missing on every boot. The referee writes all of it after SSH
preflight and before any agent starts (`engine.provisioning`), then checks it
took. Contents live in files beside the manifest (`source`, relative to the
arena folder) so a manifest stays readable and their bytes are part of the
compatibility key.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

UNIT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9@._-]*\.(service|timer|socket|path)$")
MODE = re.compile(r"^0?[0-7]{3}$")

UnitState = Literal["running", "dormant", "seed"]
"""running: enabled, started and checked active; dormant: enabled only (a slot that stays idle until the
player gives it something to run); seed: an enabled oneshot started now and on every boot."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _guest_path(path: str) -> str:
    if not path.startswith("/") or path.rstrip("/") == "" or "/../" in f"{path}/" or "\0" in path:
        raise ValueError(f"guest path {path!r} must be absolute, below /, without '..'")
    return path


def _source_path(source: str) -> str:
    if not source.strip() or source.startswith("/") or ".." in source.split("/"):
        raise ValueError(f"source {source!r} must be a file inside the arena folder (relative, without '..')")
    return source


GuestPath = Annotated[str, AfterValidator(_guest_path)]
SourcePath = Annotated[str, AfterValidator(_source_path)]


class ProvisionedFile(_Strict):
    path: GuestPath
    source: SourcePath
    mode: str = "0644"

    @field_validator("mode")
    @classmethod
    def _mode(cls, mode: str) -> str:
        if not MODE.match(mode):
            raise ValueError(f'mode {mode!r} must be octal permissions like "0644"')
        return mode


class SeededDatabase(_Strict):
    """A SQLite database created from an SQL script when it does not exist yet."""

    path: GuestPath
    sql: SourcePath


class ProvisionedUnit(_Strict):
    name: str
    source: SourcePath
    state: UnitState

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        if not UNIT_NAME.match(name):
            raise ValueError(f"unit name {name!r} must be a systemd unit file name like job-api.service")
        return name


class Provisioning(_Strict):
    files: list[ProvisionedFile] = Field(default_factory=list)
    databases: list[SeededDatabase] = Field(default_factory=list)
    units: list[ProvisionedUnit] = Field(default_factory=list)
    listening_ports: list[int] = Field(default_factory=list)
    """Guest TCP ports something must listen on once provisioning is done."""
    free_ports: list[int] = Field(default_factory=list)
    """Guest TCP ports nothing may listen on yet (what the player is to build)."""

    @field_validator("listening_ports", "free_ports")
    @classmethod
    def _ports(cls, ports: list[int]) -> list[int]:
        for port in ports:
            if not 1 <= port <= 65535:
                raise ValueError(f"port {port} is not a TCP port")
        return ports

    def sources(self) -> list[str]:
        """Every arena file this provisioning reads, in a stable order (for the digest and validation)."""
        return [f.source for f in self.files] + [d.sql for d in self.databases] + [u.source for u in self.units]
