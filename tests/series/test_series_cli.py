"""`aoe series` as a command, headless, with the round factory swapped for scripted territories."""

from __future__ import annotations

import json

from aoe_tui.cli import series_commands
from aoe_tui.cli.main import main
from tests.series.helpers import ScriptedRounds, quick_arena


def test_aoe_series_headless_prints_rounds_events_and_progress_and_resumes(tmp_path, monkeypatch, capsys):
    arena, output = quick_arena(tmp_path / "arena"), tmp_path / "series"
    factories = []

    def scripted(args, manifest, pool=None):
        factories.append(ScriptedRounds(manifest))
        return factories[-1]

    monkeypatch.setattr(series_commands, "real_round_factory", scripted)
    argv = ["series", str(arena), "--output", str(output), "--rounds", "2", "--headless"]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"aoe series: series first-build: 2 rounds with seat rotation into {output}"
    assert (
        "aoe series: round 1/2 started: amnesiac @ builder-two, oracle @ builder-one, tmpfs-writer @ builder-three"
        in out
    )
    assert any(line.startswith("[r2] [0:02] referee        match_finished: winner builder-two") for line in out)
    assert any(line.startswith("aoe series: progress: 2/2 rounds done") for line in out)
    assert out[-1].startswith(f"series folder: {output}")
    assert json.loads((output / "series.json").read_text())["rounds_completed"] == 2
    assert main(argv) == 0
    assert factories[-1].plans == []
    assert "2/2 rounds already decided (kept)" in capsys.readouterr().out


def test_bad_series_options_are_one_line(tmp_path, capsys):
    arena = quick_arena(tmp_path / "arena")
    assert main(["series", str(arena), "--rounds", "0", "--headless", "--output", str(tmp_path / "s")]) == 2
    assert capsys.readouterr().err.strip() == "aoe: --rounds 0: must be 1 or more"
    assert main(["series", str(tmp_path / "nope.toml"), "--headless"]) == 2
    assert "nope.toml: no such manifest" in capsys.readouterr().err


def test_aoe_benchmark_headless_writes_benchmark_json_and_standings_read_it(tmp_path, monkeypatch, capsys):
    from tests.series.test_benchmark import write_suite

    suite, output = write_suite(tmp_path), tmp_path / "bench"
    monkeypatch.setattr(
        series_commands, "real_round_factory", lambda args, manifest, pool=None: ScriptedRounds(manifest)
    )
    assert main(["benchmark", str(suite), "--output", str(output)]) == 0
    out = capsys.readouterr().out
    assert "aoe series: [first-build-duo] round 1/2 started" in out and f"benchmark folder: {output}" in out
    stored = json.loads((output / "benchmark.json").read_text())
    assert main(["standings", str(output), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["standings"] == stored["standings"] and len(printed["arenas"]) == 2
    assert main(["standings", str(output)]) == 0
    text = capsys.readouterr().out
    assert "arena first-build-duo" in text and "milestones" in text.splitlines()[0]


def test_sigterm_mid_round_exits_143_with_the_round_kept_as_interrupted(tmp_path, monkeypatch, capsys):
    import os
    import signal

    arena, output = quick_arena(tmp_path / "arena"), tmp_path / "series"

    class Terminating(ScriptedRounds):
        def __call__(self, plan):
            runner = super().__call__(plan)
            if plan.number == 2:
                runner.subscribe(
                    lambda u: getattr(u, "kind", None) == "agent_started" and os.kill(os.getpid(), signal.SIGTERM)
                )
            return runner

    monkeypatch.setattr(series_commands, "real_round_factory", lambda args, manifest, pool=None: Terminating(manifest))
    assert main(["series", str(arena), "--output", str(output), "--headless"]) == 128 + signal.SIGTERM
    err = capsys.readouterr().err
    assert "stopped: the aoe process was terminated (SIGTERM)" in err and "run the same command to resume" in err
    checkpoint = json.loads((output / "series.json").read_text())
    assert checkpoint["rounds_completed"] == 1 and (output / "round-002.interrupted-1").is_dir()
