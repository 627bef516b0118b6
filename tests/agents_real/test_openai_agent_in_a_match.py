"""The whole path: the engine's match runner starts the `openai` adapter from the registry
against a real territory, the referee's verifiers judge it, and it beats a scripted
builder that keeps its records in memory.

Two guests (a match needs two territories), so this is its own module.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from aoe_tui.engine.libvirt_host import LibvirtProvider
from aoe_tui.engine.provider import ProcessLauncher
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.runtime.image import cached_image
from aoe_tui.store.saved_match import load_match
from tests.agents_real.builder_script import builder_script
from tests.agents_real.fake_provider import ScriptedProvider
from tests.agents_real.guest import PROJECT, free_ports
from tests.agents_real.harness_run import DISTINCTIVE_KEY, assert_key_absent

pytestmark = pytest.mark.vm
ARENA_DIR = PROJECT / "arenas" / "first-build"


def one_openai_agent_against_the_amnesiac(directory: Path) -> Path:
    """First Build with two territories: our harness on builder-one, the in-memory builder on builder-two."""
    text = (ARENA_DIR / "arena.toml").read_text()
    text = re.sub(r'\[\[territories\]\]\nid = "builder-three".*?\n\n', "", text, flags=re.S)
    text = re.sub(r'\[\[agents\]\]\nid = "tmpfs-writer".*?\n\n', "", text, flags=re.S)
    text = text.replace(
        'id = "oracle"\nterritory = "builder-one"\nadapter = "oracle"\nmodel = "scripted/oracle"\n'
        'reasoning_effort = "none"\nbudget = { resource_units = 900 }',
        'id = "real-builder"\nterritory = "builder-one"\nadapter = "openai"\nmodel = "scripted/builder"\n'
        'reasoning_effort = "low"\nbudget = { resource_units = 20, max_cost_microusd = 1000000 }',
    )
    assert 'adapter = "openai"' in text and "builder-three" not in text.split("[visualization]")[0]
    directory.mkdir()
    for shared in ("CONTRACT.md", "instructions"):
        (directory / shared).symlink_to(ARENA_DIR / shared)
    (directory / "verify").symlink_to(PROJECT / "verify")
    manifest = directory / "arena.toml"
    manifest.write_text(text)
    return manifest


async def test_the_openai_harness_wins_a_real_match_through_the_runner(tmp_path: Path, monkeypatch) -> None:
    if cached_image() is None:
        pytest.skip("no guest image; build it with `aoe image build`")
    manifest = one_openai_agent_against_the_amnesiac(tmp_path / "arena")
    output = tmp_path / "match"
    async with ScriptedProvider(builder_script()) as provider:
        monkeypatch.setenv("AOE_OPENAI_BASE_URL", provider.base_url)
        monkeypatch.setenv("AOE_OPENAI_API_KEY", DISTINCTIVE_KEY)
        # The confined harness reaches loopback only where allowed: its guest and this local endpoint.
        launcher = ProcessLauncher(loopback_ports=(urlsplit(provider.base_url).port,))
        runner = MatchRunner(manifest, output, LibvirtProvider(base_port=free_ports(4)), launcher, drain_seconds=20)
        world = await runner.run()
    assert world.winner == "builder-one", json.dumps(world.model_dump(mode="json"), indent=1)[:3000]
    milestones = world.territories["builder-one"].milestones
    assert all(milestones[m].passed for m in ("service-up", "write-read", "service-restart", "host-reboot"))
    assert not world.territories["builder-two"].milestones["service-restart"].passed
    agent = world.agents["real-builder"]
    assert agent.resource_units_used == 5 and agent.cost_microusd == 7000
    agent_dir = output / "agents" / "real-builder"
    result = json.loads((agent_dir / "result.json").read_text())
    assert result["status"] == "completed"
    assert len((agent_dir / "tool_trace.jsonl").read_text().splitlines()) == 5
    assert provider.requests[0].body["messages"][1]["content"] == (agent_dir / "instruction.md").read_text()
    assert load_match(output) is not None
    assert_key_absent(output)
