"""The hypervisors a run may use (`hosts.toml`): where each one is, how to reach it, how much it holds.

A host is local (its guests' forwards are on this machine's loopback) or remote:
reached through one SSH connection (`[hosts.ssh]`) that carries the tunnels to
its guests, its commands and its file transfers, while libvirt talks to it over
its own `uri` (typically `qemu+ssh://`). Capacity is what matches may take of
it at once, in vCPUs and MiB; labels are free-form tags an operator may read.
Without an inventory a run uses this machine only, exactly as before.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

LOCAL_HOST_NAME = "local"
LOCAL_URI = "qemu:///system"
DEFAULT_REMOTE_WORK_DIR = "/var/lib/aoe_tui"
DEFAULT_GUEST_BASE_PORT = 26000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HostSSH(_Strict):
    """The SSH connection to a remote hypervisor (the tunnels, commands and transfers all share it)."""

    host: str = Field(min_length=1)
    port: int = Field(default=22, ge=1, le=65535)
    user: str = Field(default="root", min_length=1)
    key_file: str = Field(min_length=1)
    known_hosts: str = Field(min_length=1)  # pinned host keys: a remote hypervisor is never trusted blindly


class Capacity(_Strict):
    vcpus: int = Field(ge=1)
    memory_mib: int = Field(ge=256)


class HostSpec(_Strict):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    uri: str = Field(min_length=1)
    capacity: Capacity
    ssh: HostSSH | None = None  # None: a local host, its guests on this machine's loopback
    labels: list[str] = Field(default_factory=list)
    work_dir: str = DEFAULT_REMOTE_WORK_DIR  # a remote host's images, overlays and console logs live here
    guest_base_port: int = Field(default=DEFAULT_GUEST_BASE_PORT, ge=1024, le=65000)
    accel: Literal["tcg", "kvm"] = "tcg"  # a remote host's guests (a local host probes its own KVM)
    guest_address: str = Field(default="127.0.0.1", pattern=r"^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$")
    """The remote host's loopback address its guests' forwards bind to: always loopback, never reachable from
    elsewhere; only the coordinator's tunnels reach it."""

    @property
    def remote(self) -> bool:
        return self.ssh is not None


class Inventory(_Strict):
    hosts: list[HostSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_names(self) -> Inventory:
        names = [h.name for h in self.hosts]
        if duplicate := next((n for n in names if names.count(n) > 1), None):
            raise ValueError(f"host name {duplicate!r} appears more than once")
        return self

    def host(self, name: str) -> HostSpec:
        return next(h for h in self.hosts if h.name == name)
