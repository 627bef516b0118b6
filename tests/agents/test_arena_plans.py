"""An arena's own scripted builder (`adapters/NAME.toml`): found in the arena folder first, checked by
`aoe arena validate` key by key, and run confined as an adapter like any other (no VM: host steps)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from aoe_tui.agents.protocol import AgentFiles
from aoe_tui.agents.registry import resolve_adapter
from aoe_tui.cli.arena_init import init_arena
from aoe_tui.cli.main import main
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.manifest import AgentSpec
from aoe_tui.engine.provider import ProcessLauncher

HOST_PLAN = """\
summary = "said hello from the host"

[[steps]]
description = "Say hello"
think_seconds = 0
on_host = true
command = "echo hello from $AOE_AGENT_ID"

[[steps]]
description = "Say where it runs"
think_seconds = 0
on_host = true
command = "id -u"
"""


def _arena_with_plan(folder: Path, name: str, text: str) -> Path:
    (folder / "adapters").mkdir(parents=True, exist_ok=True)
    (folder / "adapters" / f"{name}.toml").write_text(text)
    return folder


def test_the_arena_folder_is_looked_at_first_and_its_plan_is_what_provenance_hashes(tmp_path):
    arena = _arena_with_plan(tmp_path / "arena", "oracle", HOST_PLAN)
    local = resolve_adapter("oracle", arena)
    plan = arena / "adapters" / "oracle.toml"
    assert local.command[1:] == ("-m", "aoe_tui.agents.scripted", "--plan", str(plan)) and local.sources[0] == plan
    assert resolve_adapter("oracle").command[-1] == "oracle"  # elsewhere the built-in one
    before = local.sha256()
    plan.write_text(HOST_PLAN.replace("hello", "hi"))
    assert resolve_adapter("oracle", arena).sha256() != before
    with pytest.raises(AoeError, match=r"adapter '\.\./oracle': no adapters/\.\./oracle\.toml in the arena folder"):
        resolve_adapter("../oracle", arena / "adapters" / "sub")


def test_validate_lists_every_problem_of_a_plan_with_its_key(tmp_path, capsys):
    arena, _ = init_arena("plans", tmp_path)
    plan = arena / "adapters" / "records-oracle.toml"
    plan.write_text(
        'summary = "x"\n[[steps]]\ndescription = "no command"\n'
        '[[steps]]\ndescription = "d"\ncommand = "true"\nsleep = 3\nthink_seconds = -1\n'
    )
    (arena / "adapters" / "records-forgetful.toml").write_text("summary = \n")
    assert main(["arena", "validate", str(arena)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert f"{plan}: steps[0].command: required key is missing" in lines
    assert f"{plan}: steps[1].sleep: unknown key" in lines
    assert any(line.startswith(f"{plan}: steps[1].think_seconds: Input should be greater than") for line in lines)
    assert any(line.startswith(f"{arena / 'adapters' / 'records-forgetful.toml'}: ") for line in lines)


def test_a_broken_plan_file_stops_the_adapter_with_one_line(tmp_path):
    plan = _arena_with_plan(tmp_path, "bad", "steps = []\n") / "adapters" / "bad.toml"
    result = subprocess.run(
        [sys.executable, "-m", "aoe_tui.agents.scripted", "--plan", str(plan)], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"scripted plan: {plan}: summary: required key is missing"]


class _HostOnly:
    """A territory whose SSH is never used (the plan's steps run on the host): key files for the protocol."""

    host, ssh_port, service_port = "127.0.0.1", 1, 2

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "id_ed25519").write_text("not a key\n")
        (folder / "known_hosts").write_text("")
        self.folder = folder

    def access_env(self) -> dict[str, str]:
        return {"AOE_SSH_KEY": str(self.folder / "id_ed25519"), "AOE_KNOWN_HOSTS": str(self.folder / "known_hosts")}


def test_a_plan_in_a_hidden_folder_runs_confined_and_hands_in_its_trace(tmp_path):
    arena = _arena_with_plan(tmp_path / "arena", "greeter", HOST_PLAN)  # under /tmp: hidden from adapters
    agent = AgentSpec(id="greeter", territory="t", adapter="greeter", model="scripted/greeter")
    files = AgentFiles(tmp_path / "match" / "agents" / "greeter")

    async def run():
        handle = await ProcessLauncher().start(agent, files, _HostOnly(tmp_path / "keys"), None, arena)
        assert await handle.wait(60), files.stderr.read_text()
        return handle.result()

    result = asyncio.run(run())
    assert result is not None and result.status == "completed", files.stderr.read_text()
    assert result.summary == "said hello from the host"
    trace = [json.loads(line) for line in files.tool_trace.read_text().splitlines()]
    assert [t["input"]["description"] for t in trace] == ["Say hello", "Say where it runs"]
    assert trace[0]["output"].strip() == "hello from greeter"
    assert int(trace[1]["output"]) >= 2**30  # its own uid, not the referee's
