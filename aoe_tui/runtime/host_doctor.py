"""`aoe doctor --hosts FILE`: every host of an inventory checked as a run would use it, each problem with its fix.

Per host: its SSH link (a remote one), libvirt through its URI, KVM or TCG,
the guest image there (by recipe hash; a remote host without it gets it
uploaded by the first run), and its declared capacity against what libvirt
reports. Like `aoe doctor`, checks never raise: every host is heard from.
"""

from __future__ import annotations

import asyncio

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.hosts import HostSpec, Inventory
from aoe_tui.runtime.doctor import SERVICES_FIX, Check, accel_check, image_check
from aoe_tui.runtime.host_link import HostLink
from aoe_tui.runtime.hypervisor import Hypervisor
from aoe_tui.runtime.image import cached_image

HOSTS_FIX = "see docs/hosts.md (keys, the libvirt group, SSH reachable)"


async def check_hosts(inventory: Inventory) -> list[Check]:
    checks: list[Check] = []
    for host in inventory.hosts:
        checks += [Check(f"host {host.name}: {c.name}", c.status, c.detail, c.fix) for c in await _check_host(host)]
    return checks


async def _check_host(host: HostSpec) -> list[Check]:
    checks: list[Check] = []
    ssh = host.ssh  # a remote host's (`host.remote`)
    link = HostLink(host) if ssh is not None else None
    if ssh is not None and link is not None:
        try:
            await link.connect()
        except AoeError as error:
            return [Check("ssh", "fail", str(error), HOSTS_FIX)]
        checks.append(Check("ssh", "ok", f"{ssh.user}@{ssh.host}:{ssh.port} (host key pinned)"))
    try:
        checks += await _libvirt(host)
        checks.append(await _image(host, link) if link is not None else image_check())
        if link is None:
            checks.append(await asyncio.to_thread(accel_check))
    finally:
        if link is not None:
            await link.close()
    return checks


async def _libvirt(host: HostSpec) -> list[Check]:
    try:
        hypervisor = await Hypervisor.connect(host.uri)
    except AoeError as error:
        return [Check("libvirtd", "fail", str(error), SERVICES_FIX if not host.remote else HOSTS_FIX)]
    try:
        cpus, memory_mib, kvm = await hypervisor.resources()
    finally:
        await hypervisor.close()
    checks = [Check("libvirtd", "ok", f"connected to {host.uri}")]
    if host.remote:
        offered = "libvirt offers KVM there" if kvm else "libvirt offers TCG only there"
        status = "fail" if host.accel == "kvm" and not kvm else "ok"
        checks.append(
            Check("accelerator", status, f"hosts file: accel = {host.accel}; {offered}", 'set accel = "tcg" for it')
        )
    want = host.capacity
    over = want.vcpus > cpus or want.memory_mib > memory_mib
    checks.append(
        Check(
            "capacity",
            "warn" if over else "ok",
            f"{want.vcpus} vCPUs, {want.memory_mib} MiB for matches; the host has {cpus} CPUs, {memory_mib} MiB",
            "lower the host's capacity in the hosts file" if over else None,
        )
    )
    return checks


async def _image(host: HostSpec, link: HostLink) -> Check:
    local = cached_image()
    if local is None:
        return image_check()
    if await link.has_image(local):
        return Check("guest image", "ok", f"{link.image_dir(local.recipe_hash)} (recipe {local.recipe_hash})")
    return Check(
        "guest image",
        "warn",
        f"recipe {local.recipe_hash} not at {link.image_dir(local.recipe_hash)}",
        "nothing to do: the first run uploads it (sparse, with progress)",
    )
