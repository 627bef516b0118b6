"""The coordinator's link to a remote hypervisor, through a real OpenSSH server on loopback (no VM).

Bytes to a "guest" port (here a small TCP echo server) go through the tunnel: the client only ever dials the
tunnel's own port, the sshd log names the target of every forwarded connection, and once sshd dies the tunnel
stops working while the target still answers directly. Host commands, the console mirror, SFTP fetch and the
sparse image upload by recipe hash all use the same one connection.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from pathlib import Path

import pytest

from aoe_tui.domain.hosts import HostSpec
from aoe_tui.runtime.host_link import CONSOLE_BACKUPS, CONSOLE_FILE_MAX_BYTES, HostLink, HostUnreachable
from aoe_tui.runtime.image import ImageInfo
from aoe_tui.testing.loopback_sshd import SSHD, loopback_sshd

pytestmark = pytest.mark.skipif(not SSHD.exists(), reason="needs OpenSSH's sshd (scripts/bootstrap installs it)")


@pytest.fixture
def echo_server():
    """A TCP server on a loopback port answering `echo:<bytes>`, recording each peer it served."""
    server = socket.create_server(("127.0.0.1", 0))
    peers: list[tuple[str, int]] = []

    def serve() -> None:
        while True:
            try:
                client, peer = server.accept()
            except OSError:
                return
            peers.append(peer)
            with client:
                client.sendall(b"echo:" + client.recv(100))

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1], peers
    server.close()


@pytest.fixture
def sshd(tmp_path):
    with loopback_sshd(tmp_path / "sshd") as server:
        yield server


def host_of(sshd, work_dir: Path) -> HostSpec:
    return HostSpec.model_validate(
        {
            "name": "second",
            "uri": sshd.libvirt_uri(),
            "work_dir": str(work_dir),
            "capacity": {"vcpus": 2, "memory_mib": 2048},
            "ssh": {
                "host": "127.0.0.1",
                "port": sshd.port,
                "key_file": str(sshd.key_file),
                "known_hosts": str(sshd.known_hosts),
            },
        }
    )


async def talk(port: int, data: bytes) -> bytes:
    """What comes back for `data`; b"" when nothing does (refused, or closed at once)."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except ConnectionRefusedError:
        return b""
    writer.write(data)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer


async def test_bytes_to_a_guest_port_go_through_the_tunnel_and_stop_when_the_host_drops(sshd, echo_server, tmp_path):
    target, peers = echo_server
    link = HostLink(host_of(sshd, tmp_path / "work"))
    await link.connect()
    tunnel = await link.forward(target)
    assert tunnel.local_port != target
    assert [await talk(tunnel.local_port, b"one"), await talk(tunnel.local_port, b"two")] == [b"echo:one", b"echo:two"]
    assert tunnel.connections == 2 and sshd.forwarded() == [("127.0.0.1", target)] * 2 and len(peers) == 2
    sshd.kill()
    await asyncio.wait_for(link.lost.wait(), 10)
    assert link.lost_reason == "host second: its SSH connection was lost"
    assert await talk(tunnel.local_port, b"three") == b""  # the tunnel is dead: nothing goes through it any more
    assert await talk(target, b"direct") == b"echo:direct" and len(peers) == 3  # while the target itself is fine
    with pytest.raises(HostUnreachable, match="lost"):
        await link.forward(target)
    await link.close()


async def test_host_commands_console_mirror_and_fetch_share_the_connection(sshd, tmp_path):
    link = HostLink(host_of(sshd, tmp_path / "work"))
    await link.connect()
    remote_log = tmp_path / "work" / "console.log"
    assert (await link.run(f"mkdir -p {remote_log.parent} && : > {remote_log} && echo ready")).stdout == "ready\n"
    local = tmp_path / "match" / "console.log"
    mirror = await link.mirror(remote_log, local)
    await link.run(f"echo 'Linux version 6.1' >> {remote_log}")
    for _ in range(100):
        if local.exists() and b"Linux version" in local.read_bytes():
            break
        await asyncio.sleep(0.05)
    assert local.read_bytes() == b"Linux version 6.1\n"
    mirror.cancel()
    await link.run(f"echo 'login:' >> {remote_log}")
    await link.fetch(remote_log, local)
    assert local.read_bytes() == b"Linux version 6.1\nlogin:\n"
    with pytest.raises(Exception, match="exited 3"):
        await link.run("exit 3")
    await link.close()


async def test_a_flooded_console_mirror_rotates_like_virtlogd_and_stays_bounded(sshd, tmp_path):
    link = HostLink(host_of(sshd, tmp_path / "work"))
    await link.connect()
    remote_log = tmp_path / "work" / "console.log"
    await link.run(f"mkdir -p {remote_log.parent} && : > {remote_log}")
    local = tmp_path / "match" / "console.log"
    mirror = await link.mirror(remote_log, local)
    flood = 12 * CONSOLE_FILE_MAX_BYTES  # a guest writing its console as fast as it can
    await link.run(f"head -c {flood} /dev/zero | tr '\\0' x >> {remote_log}; echo 'login:' >> {remote_log}")
    for _ in range(400):
        if local.exists() and local.read_bytes().endswith(b"login:\n"):
            break
        await asyncio.sleep(0.05)
    mirror.cancel()
    await link.close()
    kept = sorted(p.name for p in local.parent.iterdir())
    assert kept == ["console.log", "console.log.0", "console.log.1", "console.log.2"]
    assert sum(p.stat().st_size for p in local.parent.iterdir()) <= (CONSOLE_BACKUPS + 1) * CONSOLE_FILE_MAX_BYTES
    assert local.read_bytes().endswith(b"login:\n")


async def test_the_image_is_uploaded_once_per_recipe_hash_sparse(sshd, tmp_path):
    source = tmp_path / "images" / "abc123"
    source.mkdir(parents=True)
    with open(source / "base.raw", "wb") as raw:
        raw.truncate(64 * 1024 * 1024)  # 64 MiB of hole: a real base image is mostly holes too
        raw.write(b"superblock")
    (source / "vmlinuz").write_bytes(b"kernel")
    (source / "initrd.img").write_bytes(b"initrd")
    (source / "image.json").write_text(json.dumps({"recipe_hash": "abc123"}))
    image = ImageInfo(source / "base.raw", source / "vmlinuz", source / "initrd.img", "abc123")
    link = HostLink(host_of(sshd, tmp_path / "work"))
    await link.connect()
    lines: list[str] = []
    remote = await link.ensure_image(image, lines.append)
    uploaded = tmp_path / "work" / "images" / "abc123"
    assert Path(remote.path) == uploaded / "base.raw" and Path(remote.kernel).read_bytes() == b"kernel"
    assert (uploaded / "base.raw").stat().st_size == 64 * 1024 * 1024
    assert (uploaded / "base.raw").stat().st_blocks * 512 < 8 * 1024 * 1024  # the holes stayed holes
    assert lines[0].startswith("host second: uploading image abc123 (64 MiB, sparse)")
    assert lines[-1] == "host second: image abc123 uploaded"
    lines.clear()
    await link.ensure_image(image, lines.append)
    assert lines == ["host second: image abc123 present"]
    await link.close()


async def test_a_host_that_refuses_us_is_one_clear_line(sshd, tmp_path):
    spec = host_of(sshd, tmp_path / "work")
    sshd.known_hosts.write_text(
        f"[127.0.0.1]:{sshd.port} ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB8Tn2bQPhXjRTq2Ygcuu5N1FnN5k7QWkRFq4zGqsFbp\n"
    )
    with pytest.raises(HostUnreachable, match=rf"host second: SSH to root@127.0.0.1:{sshd.port} failed: "):
        await HostLink(spec).connect()
