"""Shared test helpers: where the fixture matches live."""

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MATCH_DIRS = sorted(p for p in (FIXTURES / "matches").iterdir() if p.is_dir())
SINGLE_FILES = sorted((FIXTURES / "seeds").glob("*.match.json"))
WORLD_ONLY = FIXTURES / "seeds" / "first-build-real.world.json"
ORACLE_DIR = FIXTURES / "matches" / "first-build-oracle-20260813-154733"
PROJECT = Path(__file__).resolve().parent.parent


@pytest.fixture
def oracle_lines() -> list[str]:
    return (ORACLE_DIR / "events.jsonl").read_text().splitlines()
