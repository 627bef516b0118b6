"""The other real harnesses' races (outside CI's time budget: each race boots its own guests; tests/conftest.py):
every harness wins once with the careful script and stops at service-restart once with the in-memory one, over
all four protocols; a harness whose model never calls a tool is the player's failure and the race goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

from aoe_tui.runtime.image import cached_image
from tests.agents_real.harness_race import Entrant, assert_race_verdict, race

pytestmark = pytest.mark.vm

# Every territory of First Build seats one agent: the third of a two-harness race is the built-in in-memory builder.
SEAT = Entrant("seat", "amnesiac", "seat")
RACES = {
    "codex-wins-gemini-forgets-claude-silent": [
        Entrant("codex", "codex", "careful"),
        Entrant("gemini", "gemini-cli", "memory"),
        Entrant("claude", "claude-code", "silent"),
    ],
    "mini-wins-opencode-forgets": [
        Entrant("mini", "mini-swe-agent", "careful"),
        Entrant("opencode", "opencode", "memory"),
        SEAT,
    ],
    "gemini-wins-claude-forgets": [
        Entrant("gemini", "gemini-cli", "careful"),
        Entrant("claude", "claude-code", "memory"),
        SEAT,
    ],
    "opencode-wins-codex-forgets": [
        Entrant("opencode", "opencode", "careful"),
        Entrant("codex", "codex", "memory"),
        SEAT,
    ],
}


@pytest.mark.parametrize("name", list(RACES))
async def test_each_harness_wins_careful_and_forgets_in_memory(name: str, tmp_path: Path, monkeypatch) -> None:
    if cached_image() is None:
        pytest.skip("no guest image; build it with `aoe image build`")
    assert_race_verdict(await race(RACES[name], tmp_path, monkeypatch), RACES[name])
