"""Shared pieces for the app tests: fixture matches and a clock the test moves by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from aoe_tui.app.app import AoeApp
from aoe_tui.store.saved_match import load_match

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SEEDS = FIXTURES / "seeds"
MATCHES = FIXTURES / "matches"
SEED_MATCHES = sorted(SEEDS.glob("*.match.json"))
HARNESS = SEEDS / "harness-exhibition.match.json"
WORLD_ONLY = SEEDS / "first-build-real.world.json"
PRIMARY_FAILOVER = MATCHES / "primary-failover-real-20260813-174631"


class FakeClock:
    """Playback reads time only through this, so a test decides exactly how much passed."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def replay_app(path: Path, clock: FakeClock | None = None) -> AoeApp:
    return AoeApp(load_match(path), clock=clock or FakeClock())
