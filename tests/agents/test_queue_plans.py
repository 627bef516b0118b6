"""The Durable Job Queue builders' file-writing step, run by a real bash: every file lands whole and compiles.

The step writes two programs from here-documents in one command. A delimiter followed by `&& ...` on its
own line does not end a here-document, so once the whole rest of the step became file content and no
builder ever started its service (seen only on real guests, minutes into a race).
"""

from __future__ import annotations

import subprocess

import pytest

from aoe_tui.agents.scripted.queue_plans import QUEUE_DIR, QUEUE_PLANS


@pytest.mark.parametrize("name", sorted(QUEUE_PLANS))
def test_the_write_step_writes_both_programs_whole(name, tmp_path):
    step = next(step for step in QUEUE_PLANS[name].steps if "py_compile" in step.command)
    done = subprocess.run(
        ["bash", "-c", step.command.replace(QUEUE_DIR, str(tmp_path / "queue"))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout.strip() == "compiled", done.stderr
    assert "here-document" not in done.stderr, done.stderr
    for program in ("api.py", "worker.py"):
        assert (tmp_path / "queue" / program).read_text().rstrip().splitlines()[-1].strip() != ""
        assert "AOE_FILE" not in (tmp_path / "queue" / program).read_text()
