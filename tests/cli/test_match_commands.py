"""The `aoe` command over saved matches; bad input is one line on stderr, never a traceback."""

import json
import subprocess
import sys

import pytest

from aoe_tui.cli.main import main
from tests.fixture_paths import MATCH_DIRS, ORACLE_DIR, PROJECT, SINGLE_FILES, WORLD_ONLY


def run_aoe(*args):
    return subprocess.run(
        [sys.executable, "-m", "aoe_tui.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        timeout=60,
    )


def test_replay_json_prints_reduced_world(capsys):
    assert main(["replay", str(ORACLE_DIR), "--json"]) == 0
    world = json.loads(capsys.readouterr().out)
    recorded = json.loads((ORACLE_DIR / "world.json").read_text())
    assert world["winner"] == recorded["winner"] == "builder-one"
    assert world["territories"]["builder-one"]["milestone_points"] == 100


def test_replay_json_of_world_only(capsys):
    assert main(["replay", str(WORLD_ONLY), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["match_state"] == "finished"


def test_inspect_event(capsys):
    assert main(["inspect", str(ORACLE_DIR), "16", "--json"]) == 0
    event = json.loads(capsys.readouterr().out)
    assert (event["sequence"], event["kind"], event["milestone"]) == (16, "milestone_passed", "service-up")
    assert main(["inspect", str(ORACLE_DIR), "16"]) == 0
    assert "milestone_passed" in capsys.readouterr().out


@pytest.mark.parametrize("path", MATCH_DIRS + SINGLE_FILES + [WORLD_ONLY], ids=lambda p: p.name)
def test_info_on_every_fixture(path, capsys):
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "arena" in out and "winner" in out and "territories" in out


def test_info_json(capsys):
    assert main(["info", str(SINGLE_FILES[0]), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["winner"] == "builder-three" and info["events"] == 135 and info["has_timeline"]


def test_validate_bundled_arena(capsys):
    assert main(["validate", str(PROJECT / "arenas/first-build/arena.toml"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["valid"] is True


def test_validate_lists_every_problem(tmp_path, capsys):
    text = (PROJECT / "arenas/first-build/arena.toml").read_text()
    text = text.replace('completion_milestone = "host-reboot"', 'completion_milestone = "nope"')
    text = text.replace("allow_public_internet = false", "allow_public_internet = true")
    text = text.replace('"verify/write-read.sh"', '"verify/absent.sh"')
    (tmp_path / "arena.toml").write_text(text)
    assert main(["validate", str(tmp_path / "arena.toml"), "--json"]) == 1
    problems = json.loads(capsys.readouterr().out)["problems"]
    paths = {p["path"] for p in problems}
    # the other verifiers come from the project's verify/; the missing one is reported with its milestone
    assert paths == {"build.completion_milestone", "network.allow_public_internet", "build.milestones[1].verifier"}


def test_validate_reports_shape_and_rule_problems_in_one_pass(tmp_path, capsys):
    text = (PROJECT / "arenas/first-build/arena.toml").read_text()
    text = text.replace('id = "builder-one"', 'id = "Builder One"', 1)
    text = text.replace('depends_on = ["service-up"]', 'depends_on = ["ghost"]', 1)
    (tmp_path / "arena.toml").write_text(text + "\n[surprise]\ngift = true\n")
    assert main(["validate", str(tmp_path / "arena.toml")]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert all(line.startswith(f"{tmp_path / 'arena.toml'}: ") for line in lines)
    said = "\n".join(lines)
    assert "surprise: unknown key" in said
    assert "depends_on: references unknown milestone ghost" in said
    assert "territories[0].id: 'Builder One' must be lowercase" in said


def test_validate_reports_missing_sections_and_bad_values_in_one_pass(tmp_path):
    manifest = tmp_path / "arena.toml"
    manifest.write_text('schema_version = 1\n[arena]\nid = "Bad Id"\n[[territories]]\nid = "T one"\n')
    result = run_aoe("validate", str(manifest))
    assert result.returncode == 1 and "Traceback" not in result.stderr + result.stdout
    lines = result.stdout.splitlines()
    assert all(line.startswith(f"{manifest}: ") for line in lines), lines
    fields = [line.removeprefix(f"{manifest}: ").split(":")[0] for line in lines]
    for field in ("arena.display_name", "network", "rules", "classes", "agents", "territories[0].class"):
        assert field in fields, lines
    assert f"{manifest}: arena.id: 'Bad Id' must be lowercase ASCII letters, digits and hyphens" in lines
    assert f"{manifest}: territories[0].id: 'T one' must be lowercase ASCII letters, digits and hyphens" in lines


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["replay", "/nonexistent/match", "--json"], "no such file or directory"),
        (["info", "{tmp}"], "no match here"),
        (["inspect", str(ORACLE_DIR), "999"], "no event 999"),
        (["inspect", str(WORLD_ONLY), "0"], "no event timeline"),
        (["validate", "{tmp}/missing.toml"], "no such manifest"),
        (["validate", "{tmp}/broken.toml"], "broken.toml"),
        (["info", "{tmp}/garbage.match.json"], "not UTF-8"),
    ],
)
def test_bad_input_is_one_line_without_traceback(tmp_path, args, fragment):
    (tmp_path / "broken.toml").write_text("[arena\nid=")
    (tmp_path / "garbage.match.json").write_bytes(b"\x89PNG\x00\xff")
    result = run_aoe(*[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("aoe: ") and fragment in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_corrupt_log_error_names_line(tmp_path):
    lines = (ORACLE_DIR / "events.jsonl").read_text().splitlines()
    (tmp_path / "events.jsonl").write_text("\n".join(lines[:5] + lines[6:]) + "\n")
    result = run_aoe("replay", tmp_path, "--json")
    assert result.returncode == 2
    assert "events.jsonl line 6: sequence 6 where 5 was expected (gap)" in result.stderr
