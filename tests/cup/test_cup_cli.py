"""`aoe info` and `aoe replay --json` on cups and their heats, and `aoe cup`'s one-line refusals."""

from __future__ import annotations

import json

from aoe_tui.cli.main import main
from tests.cup.helpers import write_cup
from tests.fixture_paths import PROJECT

PUBLISHED = PROJECT.parent / "shared" / "fixtures" / "seeds" / "opencode-cup-r1-h2.match.json"
SAMPLE = PROJECT / "aoe_tui" / "samples" / "opencode-cup-r1-h2.match.json"


def test_aoe_info_shows_the_published_heats_cup_context(capsys):
    for path in (SAMPLE, *([PUBLISHED] if PUBLISHED.exists() else [])):
        assert main(["info", str(path)]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[0] == "match      opencode-cup · 2026-W37-20260913-021918 · round 1 heat 2 · attempt 1"
        assert lines[1] == "cup        opencode-cup · season 2026-W37 · round 1 heat 2 · attempt 1"
        assert main(["info", str(path), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["cup"] == {
            "cup": "opencode-cup",
            "season": "2026-W37",
            "run": "2026-W37-20260913-021918",
            "round": 1,
            "heat": 2,
            "attempt": 1,
        }


def test_a_match_outside_a_cup_has_no_cup_context(capsys):
    assert main(["info", str(PROJECT / "aoe_tui" / "samples" / "harness-exhibition.match.json"), "--json"]) == 0
    assert "cup" not in json.loads(capsys.readouterr().out)


def test_aoe_cup_refuses_a_field_too_small_in_one_line(tmp_path, capsys):
    cup = write_cup(tmp_path, ["solo"], cup_id="tiny")
    assert main(["cup", str(cup), "--headless", "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"aoe: {cup}: a field of 1 entrants is too small: the arena needs at least 2 in a heat"]
    (tmp_path / "bad.toml").write_text(
        '[cup]\nid = "x"\narena = "arena/arena.json"\nattempts = 0\n[[entrants]]\nid = "a"\n'
    )
    assert main(["cup", str(tmp_path / "bad.toml"), "--headless"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_aoe_replay_json_on_a_cup_folder_prints_its_cup_json(tmp_path, capsys):
    folder = tmp_path / "cup"
    folder.mkdir()
    data = {"schema_version": 1, "cup_id": "c", "rounds": []}
    (folder / "cup.json").write_text(json.dumps(data))
    assert main(["replay", str(folder), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == data


def test_the_default_output_resumes_this_seasons_unfinished_run(tmp_path, monkeypatch):
    from datetime import UTC, datetime

    from aoe_tui.cli.cup_commands import default_cup_output

    monkeypatch.chdir(tmp_path)
    now = datetime(2026, 12, 3, 23, 0, 0, tzinfo=UTC)
    fresh = default_cup_output("c", "2026-W49", now)
    assert fresh.as_posix() == "cups/c/2026-W49-20261203-230000"
    unfinished = tmp_path / "cups" / "c" / "2026-W49-20261201-080000"
    unfinished.mkdir(parents=True)
    (unfinished / "cup.json").write_text(json.dumps({"schema_version": 1, "state": "running"}))
    assert default_cup_output("c", "2026-W49", now).as_posix() == "cups/c/2026-W49-20261201-080000"
    (unfinished / "cup.json").write_text(json.dumps({"schema_version": 1, "state": "complete"}))
    assert default_cup_output("c", "2026-W49", now) == fresh
    assert default_cup_output("c", "2026-W50", now).as_posix() == "cups/c/2026-W50-20261203-230000"
