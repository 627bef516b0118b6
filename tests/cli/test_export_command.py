"""`aoe export` on the command line: what it writes, what it says it left out, and a tampered export refused."""

from __future__ import annotations

import json
import shutil

from aoe_tui.cli.main import main
from aoe_tui.store.match_layout import MatchLayout
from tests.fixture_paths import MATCH_DIRS

FAILOVER = next(p for p in MATCH_DIRS if p.name.startswith("primary-failover"))


def test_export_prints_what_it_left_out(tmp_path, capsys, monkeypatch):
    match_dir = tmp_path / "m"
    shutil.copytree(FAILOVER, match_dir)
    keys = MatchLayout(match_dir).ssh_directory("failover-one")
    keys.mkdir(parents=True)
    (keys / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n")
    (match_dir / "stdout.log").write_text("hello\n")
    monkeypatch.setenv("AOE_OPENAI_API_KEY", "arena-proxy-placeholder")
    out = tmp_path / "shared.match.json"
    assert main(["export", str(match_dir), "-o", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == f"exported match: {out}"
    assert "  left out ssh/: the match's SSH keys: never exported" in printed
    assert "  left out stdout.log: not part of a match record" in printed
    assert any(line.startswith("  redacted") and "known secret" in line for line in printed)
    assert "arena-proxy-placeholder" not in out.read_text()
    assert main(["info", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["events"] == 424


def test_a_tampered_export_is_one_line_naming_the_file(tmp_path, capsys):
    out = tmp_path / "shared.match.json"
    assert main(["export", str(FAILOVER), "-o", str(out)]) == 0
    document = json.loads(out.read_text())
    document["events"][5]["elapsed_ms"] += 1
    out.write_text(json.dumps(document))
    capsys.readouterr()
    assert main(["replay", str(out), "--json"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"aoe: {out}: the events were changed after export")
