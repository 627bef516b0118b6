"""Agents' tools keep endless output bounded: the openai harness's bash tool on a real SSH server, and the
scripted builder's step reader on a real local pipeline."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from aoe_tui.agents.openai_harness.guest_tools import GuestTools, ToolLimits
from aoe_tui.agents.scripted.builder import read_bounded
from aoe_tui.runtime.ssh import GuestSSH
from tests.runtime.ssh_loopback_server import running_server


def _rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.fixture
def tools(tmp_path: Path):
    with running_server(tmp_path) as (keys, port):
        yield GuestTools(GuestSSH("loopback", "127.0.0.1", port, keys, connect_timeout=10), ToolLimits())


async def test_fifty_gigabytes_of_yes_come_back_as_a_short_capped_answer(tools: GuestTools) -> None:
    await tools.call("bash", json.dumps({"command": "true"}))
    before = _rss_bytes()
    result = await tools.call("bash", json.dumps({"command": "yes | head -c 50G", "timeout_seconds": 120}))
    growth = _rss_bytes() - before
    await tools.ssh.close()
    assert result.is_error and "[killed: the command printed more than 8 MiB" in result.output
    assert len(result.output) < 17_000 and result.output.startswith("y\ny\n")
    assert growth < 8 * 2**20, f"harness grew by {growth / 2**20:.1f} MiB"


async def test_ordinary_output_and_status_are_unchanged(tools: GuestTools) -> None:
    result = await tools.call("bash", json.dumps({"command": "echo hello; exit 2"}))
    await tools.ssh.close()
    assert result.output == "hello\n[exit status 2]" and result.is_error


def test_a_scripted_step_printing_fifty_gigabytes_is_killed_at_the_cap() -> None:
    before = _rss_bytes()
    process = subprocess.Popen(["sh", "-c", "exec yes"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output, capped = read_bounded(process)
    code = process.wait()
    assert capped and code == -9
    assert output.total > 8 * 2**20 and len(output.text()) < 4_100 and "bytes omitted" in output.text()
    assert _rss_bytes() - before < 8 * 2**20


def test_a_scripted_step_with_short_output_keeps_it_whole() -> None:
    process = subprocess.Popen(["sh", "-c", "echo one; echo two"], stdout=subprocess.PIPE)
    output, capped = read_bounded(process)
    assert process.wait() == 0 and not capped and output.text() == "one\ntwo\n"
