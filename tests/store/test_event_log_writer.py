"""The writer checks what it appends and leaves a valid prefix on disk at every step."""

import gc
import json
import os
import sys
import threading
import time
import types
import weakref

import pytest

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.events import make_event
from aoe_tui.store.event_log import EventLogWriter, read_event_log


def test_round_trip_matches_fixture_encoding(tmp_path, oracle_lines):
    from aoe_tui.store.event_log import parse_event_lines

    events = parse_event_lines("\n".join(oracle_lines) + "\n", "fixture")
    with EventLogWriter(tmp_path / "events.jsonl") as writer:
        for event in events:
            writer.append(event)
    written = (tmp_path / "events.jsonl").read_text().splitlines()
    # Compared as objects: one fixture line repeats the key elapsed_ms, which JSON readers collapse.
    assert [json.loads(line) for line in written] == [json.loads(line) for line in oracle_lines]
    assert all(line.startswith('{"schema_version":1,"sequence":') and ", " not in line[:40] for line in written)


def test_sequence_must_be_contiguous(tmp_path):
    writer = EventLogWriter(tmp_path / "events.jsonl")
    writer.append(make_event("match_paused", 0, 0))
    with pytest.raises(AoeError, match="sequence 2, expected 1"):
        writer.append(make_event("match_resumed", 2, 5))


def test_clock_must_not_go_back(tmp_path):
    writer = EventLogWriter(tmp_path / "events.jsonl")
    writer.append(make_event("match_paused", 0, 100))
    with pytest.raises(AoeError, match="goes back in time"):
        writer.append(make_event("match_resumed", 1, 50))


def test_each_append_is_on_disk_before_close(tmp_path):
    writer = EventLogWriter(tmp_path / "events.jsonl")
    writer.append(make_event("match_paused", 0, 0))
    writer.append(make_event("milestone_failed", 1, 10, territory="t", milestone="m", detail="x"))
    assert [e.kind for e in read_event_log(tmp_path / "events.jsonl")] == ["match_paused", "milestone_failed"]


def test_refuses_existing_log(tmp_path):
    (tmp_path / "events.jsonl").write_text('{"x":1}\n')
    with pytest.raises(AoeError, match="refusing to write into an existing"):
        EventLogWriter(tmp_path / "events.jsonl")


def fsync_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "event-log-fsync"]


def test_durable_events_are_synced_off_the_callers_thread_and_close_waits_for_it(tmp_path, monkeypatch):
    synced_from: list[str] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced_from.append(threading.current_thread().name), real_fsync(fd)))
    before = set(fsync_threads())  # another test's syncer may still be ending: only this writer's counts
    writer = EventLogWriter(tmp_path / "events.jsonl")
    writer.append(make_event("match_paused", 0, 0))  # a durable kind
    own = set(fsync_threads()) - before
    deadline = time.monotonic() + 10
    while not synced_from and time.monotonic() < deadline:
        time.sleep(0.01)
    assert synced_from[:1] == ["event-log-fsync"], "the durable event was not synced by the syncer thread"
    assert (tmp_path / "events.jsonl").read_text().count("\n") == 1  # flushed at once, before any fsync
    writer.close()
    assert synced_from[-1] == threading.current_thread().name  # the final fsync, after the syncer stopped
    assert own and not any(thread.is_alive() for thread in own), "close() waits for its syncer to end"


def test_durable_events_of_one_moment_share_one_fsync(tmp_path, monkeypatch):
    """A busy tick passes a milestone of every territory within milliseconds: one fsync covers them all."""
    from aoe_tui.store import event_log

    monkeypatch.setattr(event_log, "SYNC_GATHER_SECONDS", 0.5)
    synced_from: list[str] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced_from.append(threading.current_thread().name), real_fsync(fd)))
    writer = EventLogWriter(tmp_path / "events.jsonl")
    writer.append(make_event("match_paused", 0, 0))
    time.sleep(0.05)  # long enough for a syncer that does not gather to have synced the first alone
    writer.append(make_event("match_resumed", 1, 10))
    writer.append(make_event("match_paused", 2, 20))
    deadline = time.monotonic() + 10
    while not synced_from and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    writer.close()
    assert synced_from.count("event-log-fsync") == 1, synced_from


def test_a_stop_that_comes_as_the_syncer_ends_its_gathering_ends_the_syncer(tmp_path, monkeypatch):
    """The stop lands just before the syncer clears its wake-up (the moment a match's close met a gathering
    that had just run out): the syncer must see it, not fsync and wait for a request that never comes."""
    from aoe_tui.store import event_log

    writers: list[EventLogWriter] = []

    class StopArrivesNow(threading.Event):
        def clear(self) -> None:
            if writers and not writers[0]._syncer._stopping.is_set():
                writers[0]._syncer.abandon()
            super().clear()

    monkeypatch.setattr(event_log, "SYNC_GATHER_SECONDS", 0.01)
    monkeypatch.setattr(event_log, "threading", types.SimpleNamespace(Event=StopArrivesNow, Thread=threading.Thread))
    before = set(fsync_threads())
    writers.append(EventLogWriter(tmp_path / "events.jsonl"))
    own = set(fsync_threads()) - before
    writers[0].append(make_event("match_paused", 0, 0))
    for thread in own:
        thread.join(timeout=10)
    assert own and not any(thread.is_alive() for thread in own), "the syncer missed the stop and waits forever"


def test_a_writer_dropped_without_close_leaves_no_syncer_behind(tmp_path):
    before = set(fsync_threads())  # another test's syncer may still be ending: only this writer's counts
    writer = EventLogWriter(tmp_path / "events.jsonl")
    writer.append(make_event("match_paused", 0, 0))
    own = set(fsync_threads()) - before
    del writer
    gc.collect()
    deadline = time.monotonic() + 30  # its last fsync may take seconds while other test workers write
    while any(thread.is_alive() for thread in own) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(thread.is_alive() for thread in own)


def test_a_closed_writer_keeps_nothing_alive_through_its_syncer(tmp_path, monkeypatch):
    """The syncer's thread keeps the sys.stderr of its start: under a running app that is the app's print capture,
    which holds the app and the match that owns the writer. Closed, the writer leaves nothing in Python's global
    registry of finalizers: before, every match a process ran (a series, a cup) stayed in memory for good."""

    class Owner:  # the app and its match
        pass

    owner = Owner()
    capture = types.SimpleNamespace(owner=owner, write=lambda text: len(text), flush=lambda: None)
    with monkeypatch.context() as patched:
        patched.setattr(sys, "stderr", capture)
        owner.writer = EventLogWriter(tmp_path / "events.jsonl")
    owner.writer.append(make_event("match_paused", 0, 0))
    owner.writer.close()
    gone = weakref.ref(owner)
    del owner, capture
    gc.collect()
    assert gone() is None
