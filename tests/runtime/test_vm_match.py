"""A whole match's worth of guests: three at once, one of them over a remote-style
libvirt URI, each with its own key (a neighbour's key and pins are refused),
torn down without a trace; and a guest that never answers SSH."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from aoe_tui.runtime.guest import TerritoryConfig, TerritoryVM
from aoe_tui.runtime.hypervisor import Hypervisor
from aoe_tui.runtime.keys import MatchKeys
from aoe_tui.runtime.kvm_probe import choose_accel
from aoe_tui.runtime.match_runtime import MatchRuntime, TerritorySpec
from aoe_tui.runtime.ports import LOOPBACK, assign_ports
from aoe_tui.runtime.ssh import GuestSSH, SSHUnavailable
from tests.runtime.free_ports import free_base_port

pytestmark = pytest.mark.vm

# Same daemon, reached through the remote driver's explicit transports: the code
# path a qemu+ssh:// URI to another machine takes.
REMOTE_STYLE_URIS = ("qemu+unix:///system", "qemu:///system?socket=/var/run/libvirt/libvirt-sock")


async def _domains_named(prefix: str) -> list[str]:
    hypervisor = await Hypervisor.connect()
    try:
        return [r.name for r in await hypervisor.aoe_domains() if r.name.startswith(prefix)]
    finally:
        await hypervisor.close()


def _ssh_with_foreign_key(runtime: MatchRuntime, key_of: str, into: str, pinned: bool = False):
    """OpenSSH into `into`'s guest with `key_of`'s key (and, when pinned, `key_of`'s known_hosts)."""
    keys = runtime.keys[key_of]
    trust = (
        ["-o", f"UserKnownHostsFile={keys.known_hosts_path}", "-o", "StrictHostKeyChecking=yes"]
        if pinned
        else ["-o", "UserKnownHostsFile=/dev/null", "-o", "StrictHostKeyChecking=no"]
    )
    argv = [
        "ssh",
        "-F",
        "/dev/null",
        "-i",
        str(keys.private_key_path),
        "-o",
        "IdentitiesOnly=yes",
        "-o",
        "IdentityAgent=none",
        "-o",
        "BatchMode=yes",
        "-o",
        "ConnectTimeout=20",
        *trust,
        "-p",
        str(runtime.vm(into).ssh_port),
        f"root@{LOOPBACK}",
        "hostname",
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


async def test_three_guests_at_once_over_local_and_remote_style_uris(guest_image, tmp_path: Path) -> None:
    specs = [
        TerritorySpec("one", 1, 768),
        TerritorySpec("two", 1, 768, uri=REMOTE_STYLE_URIS[0]),
        TerritorySpec("three", 1, 768, uri=REMOTE_STYLE_URIS[1]),
    ]
    runtime = MatchRuntime(tmp_path, "trio", specs, free_base_port(3), image=guest_image)
    try:
        await runtime.start()
        print(
            "\n[timing] three guests booted together, to SSH: "
            + ", ".join(f"{t} {s:.1f} s" for t, s in sorted(runtime.boot_seconds.items()))
        )
        names = await asyncio.gather(*(vm.run("hostname", 30) for vm in runtime.vms.values()))
        assert [n.stdout.strip() for n in names] == ["one", "two", "three"]
        assert {vm.hypervisor.uri for vm in runtime.vms.values()} == {"qemu:///system", *REMOTE_STYLE_URIS}
        pins = {tid: keys.known_hosts_path.read_text().splitlines() for tid, keys in runtime.keys.items()}
        assert all(len(lines) == 1 for lines in pins.values()), f"each known_hosts pins its own guest only: {pins}"
        assert len({lines[0].split()[2] for lines in pins.values()}) == 3, "each guest must have its own host key"
        assert len({keys.public_key_openssh() for keys in runtime.keys.values()}) == 3
        refused = await asyncio.to_thread(_ssh_with_foreign_key, runtime, "one", "two")
        assert refused.returncode == 255 and "Permission denied (publickey)" in refused.stderr, refused.stderr
        distrusted = await asyncio.to_thread(_ssh_with_foreign_key, runtime, "one", "two", pinned=True)
        assert distrusted.returncode == 255 and "Host key verification failed" in distrusted.stderr, distrusted.stderr
        own = await asyncio.to_thread(_ssh_with_foreign_key, runtime, "two", "two", pinned=True)
        assert own.returncode == 0 and own.stdout.strip() == "two", own.stderr
        assert all(any(e == "started" for _, e in vm.lifecycle_events) for vm in runtime.vms.values())
        assert sorted(await _domains_named("aoe-trio-")) == ["aoe-trio-one", "aoe-trio-three", "aoe-trio-two"]
    finally:
        await runtime.close()
    assert await _domains_named("aoe-trio-") == []
    await runtime.close()  # idempotent


async def test_guest_that_never_answers_ssh_reports_its_console(guest_image, tmp_path: Path) -> None:
    runtime = MatchRuntime(
        tmp_path, "mute", [TerritorySpec("silent", 1, 768)], free_base_port(1), image=guest_image, ssh_timeout=6
    )
    with pytest.raises(SSHUnavailable) as caught:
        await runtime.start()
    message = str(caught.value)
    assert "silent: SSH on 127.0.0.1:" in message and "did not answer within 6 s" in message
    assert "; console tail: " in message
    assert await _domains_named("aoe-mute-") == [], "a failed start must tear its VMs down"


async def test_wrong_key_error_carries_what_the_console_showed(guest_image, tmp_path: Path) -> None:
    hypervisor = await Hypervisor.connect()
    ports = assign_ports(["locked"], free_base_port(1))["locked"]
    config = TerritoryConfig("wrongkey", "locked", 1, 768, tmp_path / "territory", ports)
    vm = TerritoryVM(
        config, hypervisor, MatchKeys.ensure(tmp_path / "guest-key"), guest_image, choose_accel(guest_image.kernel)
    )
    vm.ssh = GuestSSH("locked", LOOPBACK, ports.ssh, MatchKeys.ensure(tmp_path / "other-key"), is_alive=vm.is_running)
    try:
        await vm.boot()
        while vm.console_tail() == "(console log empty)":
            await asyncio.sleep(0.5)
        with pytest.raises(SSHUnavailable) as caught:
            await vm.wait_for_ssh(20)
    finally:
        await vm.destroy()
        await hypervisor.close()
    tail = str(caught.value).split("; console tail: ", 1)[1]
    assert tail not in ("", "(console log empty)", "(no console log)")
    assert tail.split(" | ")[0] in vm.console_tail(500)  # real lines of this guest's serial console
