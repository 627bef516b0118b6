"""One real guest through its whole life: SSH, files, the slot service, reboot, reset,
suspend/resume, destroy. Tests run in file order on one shared guest (TCG boots are dear)."""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import time
import urllib.request

import pytest
import pytest_asyncio

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.guest import TerritoryVM
from aoe_tui.runtime.match_runtime import MatchRuntime, TerritorySpec
from aoe_tui.runtime.ssh import GuestGone, RemoteTimeout
from tests.runtime.free_ports import free_base_port

pytestmark = [pytest.mark.vm, pytest.mark.asyncio(loop_scope="module")]

APP = b"""\
import http.server
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"ready"
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
http.server.ThreadingHTTPServer(("0.0.0.0", 8080), Handler).serve_forever()
"""
MARKER = "/var/lib/aoe-test/marker"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def runtime(guest_image, tmp_path_factory):
    runtime = MatchRuntime(
        tmp_path_factory.mktemp("lifecycle"),
        "lifecycle",
        [TerritorySpec("alpha", 1, 1024)],
        free_base_port(1),
        image=guest_image,
    )
    await runtime.start()
    print(f"\n[timing] boot to SSH, one guest: {runtime.boot_seconds['alpha']:.1f} s")
    yield runtime
    await runtime.close()


@pytest.fixture
def vm(runtime: MatchRuntime) -> TerritoryVM:
    return runtime.vm("alpha")


async def _health(vm: TerritoryVM, within: float) -> str:
    deadline = time.monotonic() + within
    while True:
        try:
            return await asyncio.to_thread(
                lambda: urllib.request.urlopen(f"http://127.0.0.1:{vm.service_port}/health", timeout=5).read().decode()
            )
        except OSError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(1)


async def test_guest_identity_and_dormant_slot(vm: TerritoryVM) -> None:
    result = await vm.run(
        "hostname; systemctl is-enabled builder-app.service; test -d /opt/builder && echo dir; "
        "systemctl is-active builder-app.service",
        30,
    )
    assert result.stdout.split() == ["alpha", "enabled", "dir", "inactive"]
    assert result.exit_status == 3  # is-active of a dormant unit
    assert any(event == "started" for _, event in vm.lifecycle_events)


async def test_the_same_domain_cannot_boot_twice(vm: TerritoryVM) -> None:
    with pytest.raises(AoeError, match=r"already exists.*aoe doctor --clean"):
        await vm.boot()


async def test_write_file_then_start_the_slot_service(vm: TerritoryVM) -> None:
    await vm.ssh.write_file("/opt/builder/app.py", APP)
    await vm.ssh.write_file(MARKER, b"survives\n", mode=0o600)
    result = await vm.run(f"sync; stat -c %a {MARKER}; cat {MARKER}; systemctl start builder-app.service", 30)
    assert result.stdout.split() == ["600", "survives"]
    assert await _health(vm, 30) == "ready"


async def test_upload_keeps_content_and_mode(vm: TerritoryVM, tmp_path) -> None:
    script = tmp_path / "probe.sh"
    script.write_text("#!/bin/sh\necho uploaded-ok\n")
    script.chmod(0o750)
    await vm.ssh.upload(script, "/usr/local/bin/aoe-probe")
    result = await vm.run("stat -c %a /usr/local/bin/aoe-probe && /usr/local/bin/aoe-probe", 15)
    assert result.stdout.split() == ["750", "uploaded-ok"]


async def test_timeout_kills_the_whole_remote_process_tree(vm: TerritoryVM) -> None:
    started = time.monotonic()
    with pytest.raises(RemoteTimeout) as caught:
        await vm.run("echo started; sleep 301 & sleep 302; wait", timeout=3)
    assert time.monotonic() - started < 20
    assert "started" in caught.value.stdout
    left = await vm.run("pgrep -x sleep || echo none", 15)
    assert left.stdout.strip() == "none"


async def test_pasteable_ssh_command_uses_the_pinned_host_key(vm: TerritoryVM) -> None:
    pins = vm.keys.known_hosts_path.read_text().splitlines()
    assert [line.split()[0] for line in pins] == [f"[127.0.0.1]:{vm.ssh_port}"]
    command = shlex.split(vm.ssh_command()) + ["-o", "BatchMode=yes", "hostname"]
    done = await asyncio.to_thread(subprocess.run, command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "alpha"


async def test_acpi_reboot_is_proven_from_outside_and_keeps_disk_and_service(vm: TerritoryVM) -> None:
    started = time.monotonic()
    proof = await vm.reboot(timeout=240)
    print(f"\n[timing] ACPI reboot to SSH: {time.monotonic() - started:.1f} s ({proof.to_json()})")
    assert proof.caused_by == "acpi" and proof.proven_by == ("libvirt-event", "console-banner", "boot-id")
    assert proof.boot_id_changed and len(proof.boot_id_after) == 36
    assert (await vm.run(f"cat {MARKER}", 15)).stdout == "survives\n"
    assert await _health(vm, 60) == "ready"  # the enabled slot came back on its own


async def _guest_uptime(vm: TerritoryVM) -> float:
    return float((await vm.run("cut -d' ' -f1 /proc/uptime", 15)).stdout)


async def test_suspend_freezes_the_guest_clock(vm: TerritoryVM) -> None:
    guest_before, host_before = await _guest_uptime(vm), time.monotonic()
    await vm.suspend()
    assert await vm.state() == "paused"
    await asyncio.sleep(6)
    await vm.resume()
    guest_after, host_after = await _guest_uptime(vm), time.monotonic()
    host_elapsed, guest_elapsed = host_after - host_before, guest_after - guest_before
    assert host_elapsed - guest_elapsed > 4.5, (host_elapsed, guest_elapsed)
    events = [event for _, event in vm.lifecycle_events]
    assert "suspended" in events and "resumed" in events  # delivered through libvirtaio


async def test_destroy_leaves_no_domain_and_ssh_says_the_guest_is_gone(vm: TerritoryVM) -> None:
    await vm.destroy()
    assert await vm.state() is None
    started = time.monotonic()
    with pytest.raises(GuestGone, match="alpha: the guest is gone"):
        await vm.run("true", 10)
    assert time.monotonic() - started < 5
    await vm.destroy()  # a second destroy is harmless
