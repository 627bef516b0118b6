"""`aoe analyze` on real saved matches, through the real CLI entry point."""

from __future__ import annotations

import json

from aoe_tui.analysis import ANALYZER
from aoe_tui.cli.main import main
from tests.analysis.fixture_files import MATCHES, SEEDS


def test_published_folder_is_reanalyzed_from_transcripts(capsys):
    assert main(["analyze", str(MATCHES / "durable-job-queue-real-20260813-103028"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert sorted(data) == ["glm-queue-builder", "luna-queue-builder"]
    glm = data["glm-queue-builder"]
    assert glm["analyzer"] == ANALYZER and glm["territory"] == "queue-three" and glm["metrics"]["tool_calls"] == 10
    assert glm["source_sha256"] == "b3d432cd0b8e136b987c61b4fcf13cb70c63dbd6b9c5b7210c9bd5bb118cb49a"


def test_single_file_match_falls_back_to_stored_analyses(capsys):
    assert main(["analyze", str(SEEDS / "opencode-cup-r1-h2.match.json"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert sorted(data) == ["deepseek", "glm", "kimi"]
    assert data["kimi"]["analyzer"] == "aoe-controller/20260816.0.1"
    assert data["kimi"]["metrics"]["first_mutation_after_ms"] is None


def test_human_output_shows_metrics_architecture_and_actions(capsys):
    assert main(["analyze", str(MATCHES / "traffic-surge-real-20260818-101349")]) == 0
    out = capsys.readouterr().out
    assert "luna-surge-engineer  territory" in out and "(transcript)" in out
    assert "technologies:" in out and "/opt/traffic-surge/app.py" in out
    assert "14 observed tool calls:" in out and "Edit /opt/traffic-surge/app.py" in out
    assert "glm-surge-engineer" in out and "0 observed tool calls:" in out


def test_match_without_transcripts_says_so(capsys):
    assert main(["analyze", str(MATCHES / "first-contact-20260813-074110")]) == 0
    assert "no agent transcripts or analyses" in capsys.readouterr().out


def test_bad_path_is_one_line_on_stderr_and_exit_2(capsys, tmp_path):
    assert main(["analyze", str(tmp_path / "missing")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("aoe: ") and captured.err.count("\n") == 1 and "missing" in captured.err
