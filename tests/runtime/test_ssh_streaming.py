"""The referee's SSH client keeps a guest's output bounded, on a real SSH server on loopback.

A guest can print forever (`yes | head -c 50G`); the client must stream it
into head+tail buffers and kill the command at the byte cap, so the host
process grows by a few MiB at most however much the guest sends. The server is
real asyncssh in its own process running real shells on this host.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import pytest

from aoe_tui.runtime.ssh import OUTPUT_CAP_BYTES, GuestSSH, RemoteTimeout
from tests.runtime.ssh_loopback_server import running_server

MIB = 1024 * 1024


def _rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def _processes_with(marker: str, settle_s: float = 3.0) -> list[str]:
    """Processes whose command line holds `marker`, waiting up to `settle_s` for killed ones to be reaped."""
    deadline = time.monotonic() + settle_s
    while (found := _scan(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def _scan(marker: str) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in text:
            found.append(text)
    return found


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    with running_server(tmp_path_factory.mktemp("ssh-server")) as keys_and_port:
        yield keys_and_port


def _client(server, **limits) -> GuestSSH:
    keys, port = server
    return GuestSSH("loopback", "127.0.0.1", port, keys, connect_timeout=10, **limits)


async def _run(ssh: GuestSSH, command: str, timeout: float = 30):
    try:
        return await ssh.run(command, timeout)
    finally:
        await ssh.close()


def test_small_output_is_whole_and_status_passes_through(server) -> None:
    result = asyncio.run(_run(_client(server), "echo out; echo err >&2; exit 3"))
    assert (result.exit_status, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert not result.truncated and not result.capped


def test_input_reaches_the_command(server) -> None:
    async def scenario():
        ssh = _client(server)
        try:
            return await ssh.run("wc -c", 30, input=b"x" * (3 * MIB))
        finally:
            await ssh.close()

    assert asyncio.run(scenario()).stdout.strip() == str(3 * MIB)


def test_fifty_gigabytes_of_yes_are_cut_at_the_cap_and_killed(server) -> None:
    marker = f"aoe-flood-{uuid.uuid4().hex[:8]}"

    async def scenario():
        ssh = _client(server)
        try:
            await ssh.run("true", 30)  # connect and warm up before measuring
            before = _rss_bytes()
            result = await ssh.run(f"yes {marker} | head -c 50G", 60)
            return result, _rss_bytes() - before
        finally:
            await ssh.close()

    result, growth = asyncio.run(scenario())
    assert result.capped and result.truncated and result.exit_status == -1
    assert len(result.stdout) < 17_000 and result.stdout.startswith(marker) and "bytes omitted" in result.stdout
    assert growth < 8 * MIB, f"client grew by {growth / MIB:.1f} MiB"
    assert not _processes_with(f"yes {marker}"), "the flooding command outlived the cap"


def test_streaming_keeps_memory_flat_below_the_cap(server) -> None:
    """32 MiB pass through a client allowed 256 MiB: it must still keep only head+tail."""

    async def scenario():
        ssh = _client(server, output_cap_bytes=256 * MIB)
        try:
            await ssh.run("true", 30)
            before = _rss_bytes()
            result = await ssh.run("head -c 32M /dev/zero | tr '\\0' a; echo; echo the-end", 60)
            return result, _rss_bytes() - before
        finally:
            await ssh.close()

    result, growth = asyncio.run(scenario())
    assert result.exit_status == 0 and result.truncated and not result.capped
    assert result.stdout.rstrip().endswith("the-end") and len(result.stdout) < 17_000
    assert growth < 8 * MIB, f"client grew by {growth / MIB:.1f} MiB for 32 MiB of output"


def test_timeout_keeps_what_was_printed_and_kills_the_group(server) -> None:
    marker = f"aoe-sleep-{uuid.uuid4().hex[:8]}"
    with pytest.raises(RemoteTimeout) as caught:
        asyncio.run(_run(_client(server), f"echo started; sh -c 'sleep 30; true' {marker}", timeout=1))
    assert caught.value.stdout == "started\n"
    assert not _processes_with(marker)


def test_default_cap_is_a_few_mib() -> None:
    assert 4 * MIB <= OUTPUT_CAP_BYTES <= 16 * MIB
