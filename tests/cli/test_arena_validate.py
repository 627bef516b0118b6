"""`aoe arena validate DIR` on the bundled arenas and on a copy broken in the ways a folder can be."""

from __future__ import annotations

import shutil

from aoe_tui.cli.main import main
from tests.fixture_paths import PROJECT

QUEUE = PROJECT / "arenas" / "durable-job-queue"


def test_the_bundled_arenas_are_valid(capsys):
    assert main(["arena", "validate", str(QUEUE)]) == 0
    assert main(["arena", "validate", str(PROJECT / "arenas" / "first-build")]) == 0
    assert capsys.readouterr().out.count("arena folder valid") == 2


def test_a_broken_folder_lists_every_problem(tmp_path, capsys):
    arena = tmp_path / "queue"
    shutil.copytree(QUEUE, arena)
    (arena / "verify" / "process-new.sh").chmod(0o644)
    (arena / "provisioning" / "job-api.service").unlink()
    (arena / "BRIEF.md").unlink()
    text = (arena / "arena.toml").read_text().replace('milestone = "worker-restart"', 'milestone = "worker-restrat"')
    (arena / "arena.toml").write_text(text)
    assert main(["arena", "validate", str(arena)]) == 1
    out = capsys.readouterr().out
    assert "references unknown milestone worker-restrat" in out
    text = text.replace('milestone = "worker-restrat"', 'milestone = "worker-restart"')
    (arena / "arena.toml").write_text(text)
    assert main(["arena", "validate", str(arena)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert any("process-new.sh is not executable" in line for line in lines)
    assert any("provisioning source provisioning/job-api.service cannot be read" in line for line in lines)
    assert any("fog_of_war.player_brief: BRIEF.md not found" in line for line in lines)
    assert main(["arena", "validate", str(tmp_path / "nothing")]) == 2
