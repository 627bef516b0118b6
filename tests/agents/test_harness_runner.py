"""The real harnesses' adapter, away from guests: its command line, who is blamed for an ending, the bundle's
recipe and wrappers, the registry's entries. (The runs in guests: tests/agents_real/test_harness_race.py.)"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from aoe_tui.agents.harnesses import HARNESS_MODULES, RECIPE
from aoe_tui.agents.harnesses.base import HarnessReport
from aoe_tui.agents.harnesses.base import RecipeEntry, read_recipe
from aoe_tui.agents.harnesses.bundle import GUEST_MOUNT, _write_wrapper, recipe_hash
from aoe_tui.agents.harnesses.runner import GUEST_PATH, GuestHarness, HarnessRun, judge
from aoe_tui.agents.openai_harness.settings import HarnessSettings
from aoe_tui.agents.registry import HARNESS_PROTOCOLS, resolve_adapter, runs_in_guest
from aoe_tui.domain.transcript import ToolTraceEntry

TOKEN = "aoe-gw-token-of-this-agent"
PROJECT_STREAMS = Path(__file__).resolve().parent / "harness_streams"


def settings(tmp_path) -> HarnessSettings:
    env = {
        "AOE_AGENT_ID": "a1",
        "AOE_TERRITORY_ID": "builder-one",
        "AOE_TERRITORY_HOST": "127.0.0.1",
        "AOE_SSH_PORT": "2222",
        "AOE_MODEL": "arena-model",
        "AOE_INSTRUCTION_FILE": str(tmp_path / "brief.md"),
        "AOE_RESULT_FILE": str(tmp_path / "agents" / "a1" / "result.json"),
        "AOE_USAGE_FILE": str(tmp_path / "agents" / "a1" / "usage.json"),
        "AOE_SSH_KEY": str(tmp_path / "key"),
        "AOE_KNOWN_HOSTS": str(tmp_path / "known_hosts"),
        "AOE_GATEWAY_URL": "http://127.0.0.1:40123",
        "AOE_GATEWAY_TOKEN": TOKEN,
    }
    return HarnessSettings.from_env(env)


@pytest.mark.parametrize("adapter_id", sorted(HARNESS_MODULES))
def test_the_command_runs_the_bundle_harness_in_a_clean_environment_holding_only_the_token(
    adapter_id, tmp_path
) -> None:
    guest = GuestHarness(HARNESS_MODULES[adapter_id], settings(tmp_path), ssh=None, outputs=None)  # type: ignore[arg-type]
    ctx = guest.context("Build the service.\nIt's 'quoted' & $(not run)", 40123)
    assert ctx.gateway_url == "http://127.0.0.1:40123" and ctx.gateway_token == TOKEN
    command = guest.command(ctx)
    words = shlex.split(command)
    env_at = words.index("env")
    assert words[env_at + 1] == "-i", "the harness starts from an empty environment"
    assignments = dict(word.split("=", 1) for word in words[env_at + 2 :] if "=" in word and not word.startswith("-"))
    assert assignments["PATH"] == GUEST_PATH and GUEST_PATH.startswith(f"{GUEST_MOUNT}/bin:")
    assert "Build the service.\nIt's 'quoted' & $(not run)" in words, "the brief is one argument, verbatim"
    secrets = [name for name, value in assignments.items() if TOKEN in value]
    assert secrets, "the gateway token is how the harness reaches its model"
    assert command.endswith("</dev/null")


def report(
    calls: int = 0, completed: bool = False, error: str | None = None, result: str | None = None
) -> HarnessReport:
    trace = [ToolTraceEntry(id=str(n), name="Bash", input={"command": "true"}, output="") for n in range(calls)]
    return HarnessReport(tool_trace=trace, completed=completed, last_error=error, result=result)


CLAUDE = HARNESS_MODULES["claude-code"]


def test_a_harness_that_is_not_found_or_crashes_before_saying_anything_is_the_harness_fault() -> None:
    missing = judge(CLAUDE, HarnessRun(127, b"sh: 1: claude: not found\n", 0), report())
    assert (missing.status, missing.source) == ("harness_error", "harness")
    assert missing.summary.endswith("sh: 1: claude: not found")
    crashed = judge(CLAUDE, HarnessRun(139, b"starting\nSegmentation fault (core dumped)\n", 0), report())
    assert (crashed.status, crashed.source) == ("harness_error", "harness")
    assert "Segmentation fault (core dumped)" in crashed.summary


def test_a_run_that_never_called_a_tool_is_the_player_failure_with_its_own_words() -> None:
    warned = b"[claude-code:unrecognized_model] {}\n"  # a good run's stderr may end on a warning
    outcome = judge(CLAUDE, HarnessRun(0, warned, 900), report(completed=True, result="I would rather describe it."))
    assert (outcome.status, outcome.source) == ("failed", "player")
    assert "never called a tool" in outcome.summary and "I would rather describe it." in outcome.summary


def test_the_harness_own_last_error_line_is_the_detail_of_a_failed_run() -> None:
    outcome = judge(CLAUDE, HarnessRun(1, b"noise\n", 900), report(calls=2, error="API Error: 500 upstream exploded"))
    assert (outcome.status, outcome.source, outcome.summary) == (
        "failed",
        "player",
        "claude-code: API Error: 500 upstream exploded",
    )
    budget = judge(CLAUDE, HarnessRun(1, b"", 900), report(calls=2, error="API Error: 402 budget exhausted"))
    assert (budget.status, budget.source) == ("budget_exceeded", "player")


def test_a_finished_run_with_tool_calls_is_completed_and_a_cut_one_interrupted() -> None:
    done = judge(CLAUDE, HarnessRun(0, b"", 900), report(calls=3, completed=True, result="Deployed."))
    assert (done.status, done.summary) == ("completed", "Deployed.")
    cut = judge(CLAUDE, HarnessRun(None, b"", 900, cut=True), report(calls=1))
    assert cut.status == "interrupted"


def test_the_recipe_is_the_registry_and_its_hash_changes_with_it(tmp_path) -> None:
    entries = read_recipe(RECIPE)
    assert {e.adapter_id for e in entries} == set(HARNESS_MODULES)
    for entry in entries:
        assert HARNESS_MODULES[entry.adapter_id].recipe == entry
    copy = tmp_path / "recipe.toml"
    copy.write_bytes(RECIPE.read_bytes())
    assert recipe_hash(copy) == recipe_hash(RECIPE)
    copy.write_text(RECIPE.read_text().replace('version = "2.1.332"', 'version = "2.1.333"'))
    assert recipe_hash(copy) != recipe_hash(RECIPE)


def test_a_recipe_with_a_typo_is_one_line_naming_the_harness(tmp_path) -> None:
    bad = tmp_path / "recipe.toml"
    bad.write_text('[harnesses.codex]\nregistry = "npm"\npackage = "@openai/codex"\nversoin = "1"\n')
    with pytest.raises(Exception, match=r"harnesses\.codex") as error:
        read_recipe(bad)
    assert "\n" not in str(error.value)


def test_wrappers_run_each_harness_from_the_mount_with_its_runtime(tmp_path) -> None:
    npm = RecipeEntry("codex", "npm", "@openai/codex", "0.171.0", "openai-responses", "codex")
    _write_wrapper(npm, tmp_path / "codex")
    text = (tmp_path / "codex").read_text()
    assert f"{GUEST_MOUNT}/node/bin" in text and f'exec "{GUEST_MOUNT}/npm/codex/node_modules/.bin/codex" "$@"' in text
    pypi = RecipeEntry("mini-swe-agent", "pypi", "mini-swe-agent", "2.4.6", "openai-chat", "mini")
    _write_wrapper(pypi, tmp_path / "mini")
    assert f'PYTHONPATH="{GUEST_MOUNT}/pypi/mini-swe-agent"' in (tmp_path / "mini").read_text()
    assert (tmp_path / "mini").stat().st_mode & 0o111


def test_the_registry_runs_each_harness_in_its_guest_and_hashes_the_recipe() -> None:
    for adapter_id, harness in HARNESS_MODULES.items():
        adapter = resolve_adapter(adapter_id)
        assert adapter.command[-3:] == ("-m", "aoe_tui.agents.harnesses", adapter_id) and adapter.builtin
        assert RECIPE in adapter.sources and runs_in_guest(adapter_id)
        assert HARNESS_PROTOCOLS[adapter_id] == (harness.protocol,)
    assert not runs_in_guest("openai") and not runs_in_guest("oracle")


@pytest.mark.parametrize("adapter_id", ["claude-code", "codex", "opencode"])
def test_a_session_cut_by_the_reboot_is_resumed_by_its_id_with_our_prompt(adapter_id) -> None:
    from aoe_tui.agents.harnesses.base import RESUME_PROMPT, HarnessContext

    harness = HARNESS_MODULES[adapter_id]
    ctx = HarnessContext("the brief", "m", "http://127.0.0.1:1", TOKEN, "/root/h", "/root/arena")
    assert harness.resume_argv is not None
    words = harness.resume_argv(ctx, "session-7f3a")
    assert "session-7f3a" in words and words[-1] == RESUME_PROMPT and "the brief" not in words
    assert words[0] == harness.argv(ctx)[0]


def test_harnesses_without_a_headless_resume_say_so() -> None:
    assert HARNESS_MODULES["mini-swe-agent"].resume_argv is None


def test_a_saved_match_shows_each_real_harness_with_its_version(tmp_path) -> None:
    """provenance `harness_versions` (as the referee writes it) reaches the agents the app draws."""
    import json
    import shutil

    from aoe_tui.engine.provenance import harness_versions
    from aoe_tui.store.manifest_file import load_manifest
    from aoe_tui.store.saved_match import load_match
    from tests.fixture_paths import PROJECT

    copy = tmp_path / "match"
    shutil.copytree(PROJECT / "tests" / "fixtures" / "matches" / "first-build-oracle-20260813-154733", copy)
    manifest = load_manifest(PROJECT / "arenas" / "first-build" / "arena.toml")
    agents = [manifest.agents[0].model_copy(update={"adapter": "codex"}), *manifest.agents[1:]]
    manifest = manifest.model_copy(update={"agents": agents})
    (copy / "arena.json").write_text(manifest.model_dump_json())
    provenance = harness_versions(manifest)
    assert provenance == {"harness_versions": {"codex": "@openai/codex@0.171.0"}}
    (copy / "match.json").write_text(json.dumps(provenance))
    shown = load_match(copy).agents[agents[0].id]
    assert (shown.adapter, shown.adapter_version) == ("codex", "@openai/codex@0.171.0")
    assert load_match(copy).agents[agents[1].id].adapter_version is None


class TrajectoryGuest:
    """Stands in for the guest's SSH connection: reading the trajectory answers whatever the harness has written
    so far, whole (a trajectory is far longer than a shown command output)."""

    def __init__(self) -> None:
        self.document: str | None = None

    async def connect(self, timeout: float | None = None):
        return self

    async def run(self, command: str, check: bool = False, encoding=None):
        from types import SimpleNamespace

        if self.document is None:
            return SimpleNamespace(exit_status=1, stdout=b"")
        return SimpleNamespace(exit_status=0, stdout=self.document.encode())


class Collected:
    def __init__(self) -> None:
        self.calls: list[dict] = []

    def tool_call(self, entry: dict) -> None:
        self.calls.append(entry)


async def test_a_trajectory_harness_feeds_the_live_trace_as_its_file_grows_and_once_each(tmp_path, monkeypatch) -> None:
    """mini-swe-agent rewrites its trajectory after every step: each call reaches the live trace once, while it
    runs, and the whole file read at the end adds only what the last look missed."""
    import asyncio
    import json

    from aoe_tui.agents.harnesses import runner

    monkeypatch.setattr(runner, "TRAJECTORY_POLL_S", 0.01)
    whole = json.loads((PROJECT_STREAMS / "mini-swe-agent.traj.json").read_text())
    whole["messages"] += [{"role": "user", "content": "padding " * 40_000}]  # past any shown output's head and tail
    ssh, outputs = TrajectoryGuest(), Collected()
    guest = GuestHarness(HARNESS_MODULES["mini-swe-agent"], settings(tmp_path), ssh, outputs)  # type: ignore[arg-type]
    ctx = guest.context("brief", 40123)
    follower = asyncio.ensure_future(guest.follow_trajectory(ctx))
    await asyncio.sleep(0.05)
    assert outputs.calls == []  # no file yet
    messages = whole["messages"]
    cut = next(i for i, m in enumerate(messages) if i > 3 and m.get("role") == "assistant")
    ssh.document = json.dumps({**whole, "messages": messages[:cut]})
    await asyncio.sleep(0.05)
    early = len(outputs.calls)
    assert early >= 1
    ssh.document = json.dumps(whole)
    await asyncio.sleep(0.05)
    follower.cancel()
    await asyncio.gather(follower, return_exceptions=True)
    await guest.read_trajectory(ctx)
    expected = runner.HARNESS_MODULES["mini-swe-agent"].parser()
    expected.feed(json.dumps(whole).encode())
    ids = [entry.id for entry in expected.finish().tool_trace]
    assert [call["id"] for call in outputs.calls] == ids and len(ids) > early
