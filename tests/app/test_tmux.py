"""`aoe replay` in a real terminal: tmux runs it at 160x48, we press keys and read the screen."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from benchmarks.synthetic_match import synthetic_match
from tests.fixture_paths import HARNESS

pytestmark = [pytest.mark.tmux, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]
AOE = Path(sys.executable).parent / "aoe"


def tmux(session: str, *args: str) -> str:
    """A command to the session's own tmux server (named after it): another server's clients (and their
    sizes) must not resize our window, and a server the last test is still shutting down is never reused."""
    return subprocess.run(
        ["tmux", "-L", session, "-f", "/dev/null", *args], check=True, capture_output=True, text=True
    ).stdout


def wait_for(session: str, *texts: str, timeout: float = 15.0, needs=all) -> str:
    """The screen once every text is on it (the terminal is drawn in pieces); `needs=any`: one of them."""
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = tmux(session, "capture-pane", "-p", "-t", session)
        if needs(text in screen for text in texts):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{texts!r} never appeared ({needs.__name__}) within {timeout:g} s; the screen was:\n{screen}")


def open_terminal(prefix: str, command: str, cwd: Path | None = None, linger: int = 5) -> str:
    """`command` (from `cwd`) in a new 160x48 terminal, its own tmux server; the terminal stays `linger` seconds
    after the command ends (its last screen can be read). Returns the session's name."""
    session = f"{prefix}-{uuid.uuid4().hex[:8]}"
    where = f"cd {cwd} && " if cwd is not None else ""
    # COLUMNS/LINES from the test runner would override the real terminal size.
    shell = f"{where}env -u COLUMNS -u LINES {command}; echo exit status $?; sleep {linger}"
    tmux(session, "new-session", "-d", "-s", session, "-x", "160", "-y", "48", shell)
    return session


def start_replay(path: Path) -> str:
    """`aoe replay PATH` in a new terminal; returns the session's name."""
    return open_terminal("aoe-test", f"{AOE} replay {path}")


def quit_app(session: str) -> None:
    tmux(session, "send-keys", "-t", session, "q")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and "REPLAY" in tmux(session, "capture-pane", "-p", "-t", session):
        time.sleep(0.2)
    assert "REPLAY" not in tmux(session, "capture-pane", "-p", "-t", session)


def test_replay_opens_scrubs_and_quits_in_a_real_terminal():
    session = start_replay(HARNESS)
    try:
        # the third pane's agent is on screen only in the wide layout, side by side
        screen = wait_for(session, "REPLAY", "term-llm  preparing", "0:00 / 0:45", "Play/pause")
        assert "Harness Exhibition: First Build" in screen and "builder-one" in screen
        tmux(session, "send-keys", "-t", session, "End")
        screen = wait_for(session, "winner builder-three", "✓ host-reboot", "event 135/135")
        tmux(session, "send-keys", "-t", session, "Home", "S-Right", "S-Right")
        wait_for(session, "0:20 / 0:45", "attempts · curl")  # why service-up keeps failing
        tmux(session, "send-keys", "-t", session, "f")
        wait_for(session, "Private model reasoning is never parsed")
        tmux(session, "send-keys", "-t", session, "q")  # back from the report
        wait_for(session, "0:20 / 0:45")
        quit_app(session)
    finally:
        subprocess.run(["tmux", "-L", session, "kill-server"], capture_output=True)


@pytest.mark.slow
def test_a_million_event_match_shows_its_first_frame_while_its_log_is_read():
    """The first frame comes with only the start of the log read; `benchmarks/scale.py` holds its time target.
    Quitting mid-read stops the read (the process does not wait for a million events)."""
    folder = synthetic_match(1_000_000)
    session = start_replay(folder)
    try:
        screen = wait_for(session, "REPLAY", "synthetic build race, 1000000 events", "reading the log", timeout=60)
        assert screen.count("model sy") == 12, "the twelve territories are drawn from the start of the log"
        assert "/1000000" not in screen, "only the start of the log is on screen yet"
        quit_app(session)
    finally:
        subprocess.run(["tmux", "-L", session, "kill-server"], capture_output=True)


def _cursor(screen: str) -> tuple[int, int] | None:
    """(the cursor's event, the events loaded) of the status line, once it is on screen."""
    found = re.search(r"event (\d+)/(\d+)", screen)
    return (int(found.group(1)), int(found.group(2))) if found else None


@pytest.mark.slow
def test_end_pressed_while_a_million_event_log_loads_follows_the_end():
    """End pressed during the load goes to the last event loaded so far and keeps following the end as more
    arrives (as `tail -f` does), and is on the true last event once the load ends, with no second press."""
    folder = synthetic_match(1_000_000)
    session = start_replay(folder)
    try:
        wait_for(session, "REPLAY", "reading the log", timeout=60)
        tmux(session, "send-keys", "-t", session, "End")
        seen: list[tuple[int, int]] = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            screen = tmux(session, "capture-pane", "-p", "-t", session)
            cursor = _cursor(screen)
            if cursor is not None and (not seen or cursor != seen[-1]):
                seen.append(cursor)
            if cursor == (1_000_000, 1_000_000) and "reading the log" not in screen:
                break
            time.sleep(0.1)
        assert seen and seen[-1] == (1_000_000, 1_000_000), f"the end never came into view: {seen[-5:]}"
        loading = [(at, loaded) for at, loaded in seen if loaded < 1_000_000]
        assert len({loaded for _, loaded in loading}) >= 3, f"the screen did not grow with the load: {seen}"
        followed = [(at, loaded) for at, loaded in loading if at == loaded and loaded > loading[0][1]]
        assert len(followed) >= 2, f"the cursor did not follow the end while the log loaded: {seen}"
        quit_app(session)
    finally:
        subprocess.run(["tmux", "-L", session, "kill-server"], capture_output=True)
