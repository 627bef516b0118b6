"""Fixtures of the app tests."""

from __future__ import annotations

import pytest

from aoe_tui.testing.clock import ManualSource


@pytest.fixture
def clock() -> ManualSource:
    """Playback reads time only through this, so a test decides exactly how much passed."""
    return ManualSource()
