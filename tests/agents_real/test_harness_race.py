"""Three real harnesses raced in their guests (in CI): Claude Code careful, Codex CLI and mini-swe-agent in memory.

Each harness runs inside its own TCG guest from the harness bundle (a read-only disk), reaches its model only
through the gateway's reverse forward, and is driven by a scripted server of ours speaking its protocol
(Anthropic Messages, OpenAI Responses, Chat Completions; all streamed). The three that start fastest under TCG
(each in under 10 s; opencode takes 40 s and Gemini CLI 65 s). The verdict and what else must hold:
`harness_race.assert_race_verdict`. The other harnesses' races: test_harness_races_more.py (outside CI's budget).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aoe_tui.runtime.image import cached_image
from tests.agents_real.harness_race import Entrant, assert_race_verdict, race

pytestmark = pytest.mark.vm


async def test_three_harnesses_race_in_their_guests(tmp_path: Path, monkeypatch) -> None:
    if cached_image() is None:
        pytest.skip("no guest image; build it with `aoe image build`")
    entrants = [
        Entrant("claude", "claude-code", "careful"),
        Entrant("codex", "codex", "memory"),
        Entrant("mini", "mini-swe-agent", "memory"),
    ]
    assert_race_verdict(await race(entrants, tmp_path, monkeypatch), entrants)
