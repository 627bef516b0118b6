"""`aoe serve` in a real headless Chromium: the replay page shows the territories and the timeline, keys scrub.

Debian's chromium is driven over the DevTools protocol (tests/serve/cdp.py);
the page's requests are held to the served app (nothing leaves the machine).
The screenshot it takes is the one in screenshots/ (scripts/screenshots makes
it the same way).
"""

from __future__ import annotations

import asyncio
import re
import time

import pytest

from tests.fixture_paths import HARNESS, PROJECT
from tests.serve.cdp import CHROMIUM, Chromium
from tests.serve.served import serving

SCREENSHOT = PROJECT / "screenshots" / "serve-replay.png"
POSITION = re.compile(r"event (\d+)/(\d+)")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (scripts/bootstrap installs it: apt-get install chromium)"
)


def position(screen: str) -> tuple[int, int]:
    found = POSITION.search(screen)
    assert found, f"no timeline position on the page:\n{screen}"
    return int(found.group(1)), int(found.group(2))


async def wait_for_position(browser: Chromium, wanted: int, timeout: float = 10) -> str:
    deadline = time.monotonic() + timeout
    while True:
        screen = await browser.screen() or ""
        if POSITION.search(screen) and position(screen)[0] == wanted:
            return screen
        if time.monotonic() > deadline:
            raise AssertionError(f"the position never became {wanted}:\n{screen}")
        await asyncio.sleep(0.1)


@pytest.mark.timeout(60)
async def test_the_replay_page_shows_territories_and_timeline_and_keys_scrub():
    started = time.monotonic()
    async with serving(HARNESS) as url, Chromium() as browser:
        await browser.open(url)
        screen = await browser.wait_for_screen("event 0/", timeout=25)
        for territory, agent in (("builder-one", "claux"), ("builder-two", "opencode"), ("builder-three", "term-llm")):
            assert territory in screen and agent in screen
        assert "0:00 / 0:45" in screen and position(screen) == (0, 135)
        await browser.press("ArrowRight")
        screen = await wait_for_position(browser, 1)
        assert "running" in screen.splitlines()[0]
        await browser.press("End")
        screen = await wait_for_position(browser, 135)
        assert "winner builder-three" in screen.splitlines()[0]
        await browser.screenshot(SCREENSHOT)
        assert browser.blocked == ["https://fonts.googleapis.com/css?family=Roboto%20Mono"]
    assert SCREENSHOT.read_bytes().startswith(b"\x89PNG") and SCREENSHOT.stat().st_size > 50_000
    assert time.monotonic() - started < 30
