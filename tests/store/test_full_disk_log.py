"""The event log on a file system that fills up: cut back to the last whole event, then one clear error.

A real tmpfs (mounting one needs root; the tests skip without it) is filled to the brim, so the writes
fail the way they do on a full disk, not through a patched `write`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from pathlib import Path

import pytest

from aoe_tui.cli import run_commands
from aoe_tui.cli.main import main
from aoe_tui.domain.events import make_event
from aoe_tui.store.event_log import EventLogWriter, LogWriteFailed, read_event_log
from aoe_tui.store.saved_match import load_match

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


@pytest.fixture
def tiny_fs(tmp_path):
    mount = tmp_path / "tiny"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(directory: Path) -> None:
    """Take every free byte of the file system holding `directory`."""
    with open(directory / "filler", "ab", buffering=0) as filler, contextlib.suppress(OSError):
        while True:
            filler.write(b"x" * 512)


def test_a_refused_write_is_cut_back_and_the_writer_refuses_everything_after(tiny_fs):
    log = tiny_fs / "events.jsonl"
    writer = EventLogWriter(log)
    writer.append(make_event("match_paused", 0, 0))
    fill(tiny_fs)
    with pytest.raises(LogWriteFailed) as refused:
        for sequence in range(1, 10_000):  # the log's last page fills up, then the next line is refused
            writer.append(make_event("milestone_failed", sequence, sequence, territory="t", milestone="m", detail="x"))
    said = str(refused.value)
    assert f"the file system at {tiny_fs}" in said and "no space left" in said and "\n" not in said
    kept = read_event_log(log)
    assert [e.sequence for e in kept] == list(range(len(kept))) and log.read_bytes().endswith(b"\n")
    (tiny_fs / "filler").unlink()  # room again: still nothing more is written after the gap
    with pytest.raises(LogWriteFailed) as again:
        writer.append(make_event("match_resumed", writer.next_sequence, 10_000))
    assert again.value is refused.value
    writer.close()
    assert [e.sequence for e in read_event_log(log)] == [e.sequence for e in kept]


def test_a_match_whose_disk_fills_up_ends_with_one_line_and_a_loadable_log(tiny_fs, monkeypatch, capfd):
    from aoe_tui.engine.runner import MatchRunner
    from aoe_tui.testing.clock import ManualSource
    from aoe_tui.testing.scripted_provider import ScriptedLauncher, ScriptedProvider
    from tests.engine.helpers import ARENA, NEVER_READY, TERRITORIES

    output = tiny_fs / "match"
    runner = MatchRunner(
        ARENA,
        output,
        ScriptedProvider({t: NEVER_READY for t in TERRITORIES}),  # failing checks: events every tick
        ScriptedLauncher({}),
        source=ManualSource(),
        drain_seconds=1,
    )
    filled: list[bool] = []

    def fill_once_running(update) -> None:
        if getattr(update, "kind", None) == "milestone_failed" and not filled:  # only the log writes now
            filled.append(True)
            fill(tiny_fs)

    runner.subscribe(fill_once_running)
    monkeypatch.setattr(run_commands, "real_runner", lambda args, manifest: runner)
    assert main(["run", str(ARENA), "--headless"]) == 2
    err = capfd.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("aoe: ") and f"the file system at {tiny_fs}" in lines[0], err
    assert "Traceback" not in err and "never retrieved" not in err
    match = load_match(output)  # `aoe replay`'s loader: every whole event, each once
    sequences = [e.sequence for e in match.events]
    assert sequences == list(range(len(sequences))) and len(sequences) > 5
    assert errno.ENOSPC  # the refusal was the file system's own
