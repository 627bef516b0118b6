"""A conquest in the app: each pane shows its territory's health state, last probe, resources, its state over
the clock and its elimination; a snapshot pins the screen on deterministic input (tests.app.conquest_match)."""

from __future__ import annotations

from aoe_tui.app.view.health_history import HealthHistory
from aoe_tui.app.view.session import MatchSession
from aoe_tui.store.saved_match import load_match
from tests.app.app_under_test import replay_app, screen_text
from tests.app.conquest_match import write_conquest_match
from tests.app.test_snapshots import WIDE, seek_to


def test_the_history_folds_states_and_eliminations(tmp_path):
    session = MatchSession(load_match(write_conquest_match(tmp_path / "m")))
    history = session.health
    assert session.is_conquest and history.eliminated_at == {"courier": 17_000}
    assert history.state_at("courier", 6_000) == "healthy" and history.state_at("courier", 7_000) == "degraded"
    assert history.state_at("archivist", 13_000) == "recovering" and history.state_at("archivist", 15_000) == "healthy"
    strip = history.strip("courier", 30_000, 30_000, 30)
    assert strip == "█" * 6 + "▂" * 10 + "✗" * 14
    assert history.strip("courier", 10_000, 30_000, 30) == "█" * 6 + "▂" * 4  # nothing past the cursor
    assert not HealthHistory().is_conquest


async def test_the_panes_show_health_resources_and_the_elimination(tmp_path):
    app = replay_app(write_conquest_match(tmp_path / "m"))
    async with app.run_test(size=WIDE) as pilot:
        await seek_to(None)(pilot)
        text = screen_text(app)
    assert "health eliminated" in text and "eliminated at 0:17 · recovery window expired" in text
    assert "probe 503 · 7 ms · queue unavailable" in text
    assert "health healthy · resources 930" in text and "930 res · healthy" in text


def test_conquest_snapshot(snap_compare, tmp_path):
    path = write_conquest_match(tmp_path / "conquest")
    assert snap_compare(replay_app(path), terminal_size=WIDE, run_before=seek_to(20_000))
