"""libvirtd going away under a running match, with a fake daemon: the hypervisor reconnects within its bound and
carries on, or past it says once that libvirt is gone and still destroys its local guests."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime import hypervisor as hypervisor_module
from aoe_tui.runtime.hypervisor import Hypervisor, LibvirtGone, Outage
from aoe_tui.runtime.qemu_pid import kill_qemu, qemu_pid
from tests.runtime.fake_libvirt import FakeDaemon

GUEST = "aoe-m-alpha"


@pytest.fixture(autouse=True)
def quick_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hypervisor_module, "RECONNECT_POLL_S", 0.01)


async def watched(daemon: FakeDaemon, bound: float = 5.0) -> tuple[Hypervisor, list[str], list[str]]:
    hypervisor = await Hypervisor.connect("qemu:///system", daemon.open, reconnect_seconds=bound)
    noted: list[str] = []
    gone: list[str] = []
    hypervisor.outage = Outage(noted.append, gone.append)
    return hypervisor, noted, gone


async def test_a_restarted_daemon_is_reconnected_on_its_close_and_the_guests_found_again() -> None:
    daemon = FakeDaemon(GUEST)
    hypervisor, noted, gone = await watched(daemon)
    daemon.stop()
    await asyncio.sleep(0.05)  # down for a while: the reconnection polls
    daemon.up = True
    assert await hypervisor.state(GUEST) == "running"
    first, second = daemon.connections
    assert first.closed and second.subscriptions == 2  # lifecycle and reboot events again, on the new connection
    assert len(noted) == 1 and "lost and opened again after" in noted[0] and gone == []
    await hypervisor.close()


async def test_a_call_that_meets_the_outage_first_reconnects_and_is_made_again() -> None:
    daemon = FakeDaemon(GUEST)
    hypervisor, noted, _ = await watched(daemon)
    daemon.connections[0].die(tell=False)  # no close callback yet: the call finds out
    assert await hypervisor.destroy(GUEST) is True
    assert daemon.guests == set() and len(daemon.connections) == 2 and len(noted) == 1
    await hypervisor.close()


async def test_past_the_bound_libvirt_is_gone_once_and_local_guests_are_killed_by_pid(monkeypatch) -> None:
    daemon = FakeDaemon(GUEST)
    hypervisor, noted, gone = await watched(daemon, bound=0.1)
    killed: list[str] = []
    monkeypatch.setattr(hypervisor_module, "kill_qemu", lambda name: killed.append(name) or True)
    daemon.stop()
    with pytest.raises(LibvirtGone, match=r"stayed unreachable for 0\.1 s"):
        await hypervisor.state(GUEST)
    with pytest.raises(LibvirtGone):
        await hypervisor.state(GUEST)
    assert len(gone) == 1 and "libvirt-sock" in gone[0] and noted == []
    assert await hypervisor.destroy(GUEST) is True and killed == [GUEST]
    await hypervisor.close()


async def test_a_remote_hosts_guests_are_not_killed_here_when_its_libvirt_is_gone(monkeypatch) -> None:
    daemon = FakeDaemon(GUEST)
    hypervisor = await Hypervisor.connect("qemu+ssh://root@arena-host/system", daemon.open, reconnect_seconds=0.05)
    monkeypatch.setattr(hypervisor_module, "kill_qemu", lambda name: pytest.fail("killed a remote guest here"))
    daemon.stop()
    with pytest.raises(LibvirtGone):
        await hypervisor.destroy(GUEST)
    await hypervisor.close()


def test_a_qemu_pid_is_trusted_only_while_its_process_names_the_guest(tmp_path) -> None:
    fake_qemu = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", "-name", f"guest={GUEST},debug-threads=on"]
    )
    try:
        cmdline = Path(f"/proc/{fake_qemu.pid}/cmdline")
        while f"guest={GUEST}".encode() not in cmdline.read_bytes():  # until it has exec'd
            time.sleep(0.01)
        (tmp_path / f"{GUEST}.pid").write_text(f"{fake_qemu.pid}\n")
        (tmp_path / "aoe-m-beta.pid").write_text(f"{fake_qemu.pid}\n")  # stale: that pid runs another guest
        assert qemu_pid(GUEST, tmp_path) == fake_qemu.pid
        assert qemu_pid("aoe-m-beta", tmp_path) is None and not kill_qemu("aoe-m-beta", tmp_path)
        assert kill_qemu(GUEST, tmp_path)
        assert fake_qemu.wait(timeout=10) < 0
    finally:
        fake_qemu.kill()


def test_the_bound_comes_from_the_environment_and_a_bad_one_is_one_line(monkeypatch) -> None:
    monkeypatch.setenv("AOE_LIBVIRT_RECONNECT_SECONDS", "15")
    assert hypervisor_module.reconnect_bound() == 15
    monkeypatch.delenv("AOE_LIBVIRT_RECONNECT_SECONDS")
    assert hypervisor_module.reconnect_bound() == hypervisor_module.RECONNECT_SECONDS
    for bad in ("soon", "-1", "inf"):
        monkeypatch.setenv("AOE_LIBVIRT_RECONNECT_SECONDS", bad)
        with pytest.raises(AoeError, match="AOE_LIBVIRT_RECONNECT_SECONDS"):
            hypervisor_module.reconnect_bound()
