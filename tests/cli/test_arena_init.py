"""`aoe arena init NAME`: the scaffolded folder validates, races headless with its oracle's deployment winning,
and its own smoke test passes; bad names and existing folders are one line."""

from __future__ import annotations

import importlib.util
import json
import os

import pytest

from aoe_tui.cli import run_commands
from aoe_tui.cli.arena_init import template_files
from aoe_tui.cli.main import main
from aoe_tui.domain.reducer import reduce
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.store.saved_match import load_match
from aoe_tui.testing.clock import ManualSource
from aoe_tui.testing.scripted_host import ScriptedPlan
from aoe_tui.testing.scripted_provider import ScriptedLauncher, ScriptedProvider

ARENA = "arenas/demo-arena"


@pytest.fixture
def scaffolded(tmp_path, monkeypatch, capsys):
    """`aoe arena init demo-arena` run in a fresh folder (the current directory for the test)."""
    monkeypatch.chdir(tmp_path)
    assert main(["arena", "init", "demo-arena"]) == 0
    assert capsys.readouterr().out.startswith(f"{ARENA}: new arena 'demo-arena'")
    return tmp_path / ARENA


def test_init_then_validate(scaffolded, capsys):
    written = sorted(p.relative_to(scaffolded) for p in scaffolded.rglob("*") if p.is_file())
    assert written == template_files()
    assert {"arena.toml", "CONTRACT.md", "smoke_test.py"} <= {p.name for p in written}
    assert {p.parts[0] for p in written} >= {"provisioning", "verify", "adapters", "instructions"}
    text = "".join(p.read_text() for p in scaffolded.rglob("*") if p.is_file())
    assert "__ARENA" not in text and 'id = "demo-arena"' in text and 'display_name = "Demo Arena"' in text
    assert os.access(scaffolded / "verify" / "records-kept.sh", os.X_OK)
    assert main(["arena", "validate", ARENA]) == 0
    assert "arena folder valid" in capsys.readouterr().out


def test_bad_names_and_existing_folders_are_refused_in_one_line(scaffolded, capsys):
    for name, fragment in [
        ("demo-arena", f"{ARENA}: already exists"),
        ("Demo_Arena", "arena id 'Demo_Arena': must be lowercase ASCII letters, digits and hyphens"),
        ("../escape", "arena id '../escape'"),
    ]:
        assert main(["arena", "init", name]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("aoe: ") and fragment in err[0], err
    assert sorted(p.name for p in scaffolded.parent.iterdir()) == ["demo-arena"]  # no half folder left


def _scripted_runner(args, manifest_path):
    """`aoe run`'s runner with the oracle's deployment (records on disk) against the forgetful one (tmpfs)."""
    deployments = {
        "builder-one": ScriptedPlan(ready_at_ms=6000, storage="disk"),
        "builder-two": ScriptedPlan(ready_at_ms=2000, storage="tmpfs"),
    }
    return MatchRunner(
        manifest_path, args.output, ScriptedProvider(deployments), ScriptedLauncher(), source=ManualSource()
    )


def test_the_scaffolded_arena_runs_headless_and_the_oracle_deployment_wins(scaffolded, monkeypatch, capsys):
    monkeypatch.setattr(run_commands, "real_runner", _scripted_runner)
    output = scaffolded.parent.parent / "match"
    assert main(["run", f"{ARENA}/arena.toml", "--headless", "--output", str(output)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert any("builder-two    milestone_failed: host-reboot" in line and "is gone" in line for line in out)
    assert any("match_finished: winner builder-one (first durable deployment)" in line for line in out)
    assert out[-1].startswith(f"match directory: {output}  (finished, winner: builder-one")
    match = load_match(output)
    assert reduce(match.events).to_json() == json.loads((output / "world.json").read_text())
    forgetful = match.world.territories["builder-two"].milestones
    assert forgetful["records-kept"].passed and not forgetful["host-reboot"].passed
    assert match.world.territories["builder-one"].milestone_points == 100
    provenance = json.loads((output / "match.json").read_text())
    assert set(provenance["adapter_sha256"]) == {"records-oracle", "records-forgetful"}
    assert "records-app.service" in (output / "agents" / "records-oracle" / "instruction.md").read_text()


def test_the_scaffolded_smoke_test_passes(scaffolded, tmp_path):
    spec = importlib.util.spec_from_file_location("demo_arena_smoke_test", scaffolded / "smoke_test.py")
    smoke = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(smoke)
    smoke.test_the_folder_validates()
    smoke.test_the_durable_deployment_wins_and_the_forgetful_one_fails_host_reboot(tmp_path / "smoke")


def test_aoe_demo_races_first_build_by_default_or_the_arena_named(scaffolded, monkeypatch, capsys):
    from aoe_tui.cli import app_launch, demo_commands

    raced = []
    monkeypatch.setattr(demo_commands, "real_runner", lambda args, manifest: raced.append(manifest) or manifest)
    monkeypatch.setattr(app_launch, "run_live", lambda runner, before_match: 0)
    assert main(["demo"]) == 0 and main(["demo", "--arena", "demo-arena"]) == 0
    assert main(["demo", "--arena", "durable-job-queue"]) == 0
    assert [p.parent.name for p in raced] == ["first-build", "demo-arena", "durable-job-queue"]
    assert raced[1] == demo_commands.ARENAS_DIR / "demo-arena" / "arena.toml"  # the working folder's own
    for arena, fragment in [
        ("nope", "--arena nope: no arenas/nope/arena.toml here and none bundled (durable-job-queue, first-build"),
        ("../x", "--arena '../x': an arena id is lowercase"),
    ]:
        assert main(["demo", "--arena", arena]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and fragment in err[0], err
