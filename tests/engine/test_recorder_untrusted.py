"""Guest text is cleaned where it enters the record: the log, the world and the headless lines."""

import json

from aoe_tui.domain import events as ev
from aoe_tui.testing.clock import ManualSource
from aoe_tui.engine.clock import MatchClock
from aoe_tui.engine.narration import Narrator
from aoe_tui.engine.recorder import MatchRecorder, Progress

TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J\x1b[H"


def _recorder(tmp_path):
    return MatchRecorder(MatchClock(ManualSource()), tmp_path / "events.jsonl")


def test_every_string_of_an_event_is_cleaned_in_the_log_and_the_world(tmp_path):
    recorder = _recorder(tmp_path)
    recorder.emit(ev.TerritoryRegistered(territory="t1", agent="a1", class_="builder"))
    recorder.emit(
        ev.MilestonePassed(
            territory="t1",
            milestone="service-up",
            points=1,
            evidence={"body": f"{TITLE}ok{CLEAR}", "lines": ["a\rb", {"deep": "\x9b2Jx"}], "status": 200},
        )
    )
    failed = recorder.emit(
        ev.MilestoneFailed(
            territory="t1",
            milestone="write-read",
            category="wrong",
            detail=f"GET /health returned body '[/]'{CLEAR}" + "z" * 100_000,
        )
    )
    recorder.close()

    logged = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert logged[1]["evidence"] == {"body": "ok", "lines": ["a\nb", {"deep": "x"}], "status": 200}
    assert logged[2]["detail"].startswith("GET /health returned body '[/]'zzz")
    assert "chars cut" in logged[2]["detail"] and len(logged[2]["detail"]) < 20_000
    assert failed.detail == logged[2]["detail"]
    assert "\x1b" not in (tmp_path / "events.jsonl").read_text()


def test_our_own_wording_is_unchanged(tmp_path):
    recorder = _recorder(tmp_path)
    event = recorder.emit(
        ev.MatchStateChanged(from_="preparing", to="running", reason="all territories ready\tin 3 s\nfine")
    )
    assert event.to_json()["reason"] == "all territories ready\tin 3 s\nfine"


def test_headless_lines_carry_no_escape_sequences(tmp_path):
    recorder = _recorder(tmp_path)
    narrator = Narrator()
    lines = []
    recorder.subscribe(lambda update: lines.append(narrator.line(update)))
    recorder.progress("boot", f"console: {TITLE}login:{CLEAR}", territory="t1")
    recorder.emit(ev.AgentFinished(agent="a1", source="player", success=True, detail=f"done{TITLE}"))
    assert lines == [
        "[setup] t1             console: login:",
        "[0:00] a1             agent_finished: succeeded (player): done",
    ]
    assert Narrator().line(Progress("boot", "\x1b]0;x")) == "[setup] "
