"""`aoe publish` pages in a real headless Chromium (Debian's chromium over the DevTools protocol).

One site is published from the fixture matches, the samples and a series, and one browser opens its pages
from `file://`: at several `#t=` moments every milestone's `data-state` equals the reducer's world at that
moment; scrubbing and play change them; no page throws or logs an error, and none asks for anything
outside the site. A hostile match (markup, `<script>`, escape sequences and secret-shaped strings in tool
output, summaries and names) shows literally, with its secrets redacted and no script of its own run.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import pytest_asyncio

from aoe_tui.domain.reducer import reduce
from aoe_tui.publish.match_page import milestone_ids, milestone_state
from aoe_tui.publish.site import publish
from aoe_tui.store.match_export import slug as slug_of
from aoe_tui.store.saved_match import load_match
from tests.fixture_paths import HARNESS, MATCH_DIRS, SINGLE_FILES
from tests.publish.browser import PageBrowser
from tests.serve.cdp import CHROMIUM

SERIES = Path(__file__).resolve().parents[1] / "fixtures" / "series"
SECRET = "sk-ant-api03-" + "Q" * 40
HOSTILE_TEXT = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
ESCAPES = "\x1b]0;pwned\x07\x1b[31mred\x1b[0m"

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/bootstrap installs it)"),
    pytest.mark.asyncio(loop_scope="module"),
]


def hostile_match(folder: Path) -> Path:
    """The harness exhibition with a player's worst in its name, tool calls, failure details and summaries."""
    document = json.loads(HARNESS.read_text())
    document["match"]["name"] = f"hostile {HOSTILE_TEXT}"
    document["match"]["slug"] = "hostile"
    for analysis in document["analyses"].values():
        for action in analysis["actions"][:3]:
            action["command"] = f"echo {HOSTILE_TEXT} OPENAI_API_KEY={SECRET}"
            action["description"] = f"describe {HOSTILE_TEXT}"
            action["output_excerpt"] = f"out {HOSTILE_TEXT} {ESCAPES} token {SECRET}"
    for event in document["events"]:
        if event["kind"] == "agent_finished":
            event["detail"] = f"summary {HOSTILE_TEXT} {SECRET} {ESCAPES}"
    for agent in (document.get("arena") or {}).get("agents", []):
        agent["model"] = f"model {HOSTILE_TEXT}"
    for event in document["events"]:
        if event["kind"] == "agent_started":
            event["model"] = f"model {HOSTILE_TEXT}"
    document["results"] = {agent: {"summary": f"result {HOSTILE_TEXT} {SECRET}"} for agent in document["analyses"]}
    path = folder / "hostile.match.json"
    path.write_text(json.dumps(document))
    return path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("publish")
    sources = work / "sources"
    sources.mkdir()
    for match in MATCH_DIRS:
        shutil.copytree(match, sources / match.name)
    for single in SINGLE_FILES:
        shutil.copy(single, sources / single.name)
    shutil.copytree(next(SERIES.iterdir()), sources / "series" / next(SERIES.iterdir()).name)
    hostile = work / "hostile"
    hostile.mkdir()
    hostile_match(hostile)
    report = publish([sources, hostile], work / "site", title="Fixture results")
    assert not report.problems, report.problems
    return work / "site"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser():
    async with PageBrowser(width=1400, height=1000) as chromium:
        yield chromium


@pytest.fixture(autouse=True)
def clean_pages(browser: PageBrowser):
    """Each test: no uncaught script error, no console error and no request outside the site."""
    browser.errors.clear()
    browser.blocked.clear()
    yield
    assert browser.errors == []
    assert browser.blocked == []


def expected_states(events, elapsed_ms: int, page_keys) -> dict[str, str]:
    world = reduce(e for e in events if e.elapsed_ms <= elapsed_ms)
    states = {}
    for key in page_keys:
        territory, milestone = key.split("/", 1)
        state = world.territories.get(territory)
        states[key] = milestone_state(state.milestones.get(milestone) if state else None)
    return states


def moments(events) -> list[int]:
    """Milliseconds to open the page at: the start, exact event times (passes among them) and the end."""
    passes = [e.elapsed_ms for e in events if e.kind in ("milestone_passed", "milestone_failed")]
    end = events[-1].elapsed_ms
    picked = {0, end, end // 3, end // 2, (2 * end) // 3}
    picked |= set(passes[:: max(1, len(passes) // 4)][:5])
    picked |= {ms - 1 for ms in passes[:2] if ms > 0}
    return sorted(picked)


MATCHES = [(m.name, m) for m in MATCH_DIRS] + [(f.name, f) for f in SINGLE_FILES]


@pytest.mark.timeout(90)
@pytest.mark.parametrize("name,source", MATCHES, ids=[name for name, _ in MATCHES])
async def test_milestones_at_t_equal_the_reducer_world(site: Path, browser: PageBrowser, name: str, source: Path):
    match = load_match(source)
    if not match.events:
        pytest.skip("a match without events has no timeline")
    slug = slug_of(match.match_info.get("slug") or source.name.removesuffix(".match.json"))
    page = site / "matches" / slug / "index.html"
    assert page.is_file(), sorted(p.name for p in (site / "matches").iterdir())
    for index, ms in enumerate(moments(match.events)):
        url = f"{page.as_uri()}#t={ms / 1000}"
        if index == 0:
            await browser.load(url)  # a fresh load opened at the moment
        else:
            await browser.send("Page.navigate", url=url)  # the same page: the hash moves it
        await browser.wait_for(f"document.documentElement.dataset.cursorMs === '{ms}'")
        states = await browser.states()
        assert states or not milestone_ids(match), "the page shows no milestone"
        assert states == expected_states(match.events, ms, states), f"at {ms} ms"
        passed = sorted(k for k, v in states.items() if v == "passed")
        assert await browser.evaluate("aoeReplay.passed()") == passed
    # A fresh load opened at a moment (not a hash change) agrees too.
    ms = match.events[-1].elapsed_ms // 2
    await browser.load(f"{page.as_uri()}#t={ms / 1000}")
    states = await browser.states()
    assert states == expected_states(match.events, ms, states)


@pytest.mark.timeout(60)
async def test_scrubbing_and_play_change_the_milestones(site: Path, browser: PageBrowser):
    match = load_match(HARNESS)
    page = site / "matches" / match.match_info["slug"] / "index.html"
    await browser.load(page.as_uri())
    end = match.events[-1].elapsed_ms
    at_end = await browser.states()
    assert at_end == expected_states(match.events, end, at_end)
    assert "passed" in at_end.values()
    # Scrubbing: the range input moved as a person drags it.
    await browser.evaluate(
        "(() => { const s = document.getElementById('scrub'); s.value = '0'; s.dispatchEvent(new Event('input')); })()"
    )
    at_start = await browser.states()
    assert at_start == expected_states(match.events, 0, at_start)
    assert "passed" not in at_start.values()
    # Play, at the fastest speed: the milestones pass as the clock runs, then it stops at the end.
    await browser.evaluate("document.getElementById('speed').value = '300'")
    await browser.evaluate("document.getElementById('play').click()")
    assert await browser.evaluate("aoeReplay.playing")
    await browser.wait_for("aoeReplay.passed().length > 0", timeout=15)
    await browser.wait_for("!aoeReplay.playing", timeout=15)
    assert await browser.states() == at_end
    # Keys: Home goes back to the start.
    await browser.evaluate("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'Home'}))")
    assert await browser.states() == at_start


@pytest.mark.timeout(60)
async def test_a_hostile_match_shows_literally_redacted_and_runs_nothing(site: Path, browser: PageBrowser):
    page = site / "matches" / "hostile" / "index.html"
    html = page.read_text()
    assert SECRET not in html and "[redacted]" in html
    assert "\x1b" not in html and "\x07" not in html
    await browser.load(page.as_uri())
    assert await browser.evaluate("window.__pwned === undefined")
    text = await browser.evaluate("document.body.innerText")
    assert HOSTILE_TEXT in text  # the markup, as text
    assert "hostile <script>" in await browser.evaluate("document.querySelector('h1').textContent")
    assert "␛]0;pwned␇␛[31mred" in await browser.evaluate(
        "Array.from(document.querySelectorAll('details pre')).map(p => p.textContent).join('\\n')"
    )
    assert await browser.evaluate("document.querySelectorAll('main script, main img').length") == 0
    assert HOSTILE_TEXT in await browser.evaluate("document.getElementById('agents-header').textContent")
    # The event list, drawn by the replay script, sets the failure details as text too.
    assert HOSTILE_TEXT in await browser.evaluate("document.getElementById('event-rows').textContent")
    assert SECRET not in text


@pytest.mark.timeout(60)
async def test_index_archive_series_and_ladder_pages_open_without_errors(site: Path, browser: PageBrowser):
    await browser.load((site / "index.html").as_uri())
    assert await browser.evaluate("document.querySelectorAll('#latest tbody tr').length") >= 5
    await browser.load((site / "archive" / "index.html").as_uri())
    total = await browser.evaluate("document.querySelectorAll('#archive-rows tr').length")
    await browser.evaluate(
        "(() => { const f = document.getElementById('filter'); f.value = 'oracle'; f.dispatchEvent(new Event('input')); })()"
    )
    shown = await browser.evaluate("document.querySelectorAll('#archive-rows tr:not([hidden])').length")
    assert 0 < shown < total
    series = next((site / "series").iterdir()) / "index.html"
    await browser.load(series.as_uri())
    assert await browser.evaluate("document.querySelectorAll('table.standings tbody tr').length") >= 2
    links = await browser.evaluate("Array.from(document.querySelectorAll('table.rounds a')).map(a => a.href)")
    assert links and all(Path(link.removeprefix("file://")).is_file() for link in links)
    await browser.load((site / "ladder" / "index.html").as_uri())


@pytest.mark.timeout(120)
async def test_a_long_match_page_is_small_and_interactive_within_2_s(tmp_path: Path, browser: PageBrowser):
    """The synthetic 10^5-event match (benchmarks/synthetic_match.py, cached): its page carries the log in
    under a tenth of the events' own size and is interactive within 2 s of a fresh load, opened at its
    moment. (That its milestones equal the reducer's is shown on the fixture matches above: the same script;
    reading this log twice more for it would cost the fast suite seconds.)"""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from synthetic_match import synthetic_match

    source = synthetic_match(100_000)
    publish([source], tmp_path / "site")
    page = tmp_path / "site" / "matches" / source.name / "index.html"
    assert page.stat().st_size < (source / "events.jsonl").stat().st_size / 10
    seconds = min([await browser.load(f"{page.as_uri()}#t=3700") for _ in range(2)])
    assert seconds < 2
    assert await browser.evaluate("document.documentElement.dataset.cursorMs") == "3700000"
    assert await browser.evaluate("document.querySelectorAll('#event-rows tr').length") > 0
    middle = await browser.states()
    await browser.evaluate("aoeReplay.seek(0)")
    start = await browser.states()
    await browser.evaluate("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'End'}))")
    end = await browser.states()
    assert set(start.values()) == {"pending"}
    assert sum(v == "passed" for v in start.values()) < sum(v == "passed" for v in middle.values())
    assert sum(v == "passed" for v in middle.values()) <= sum(v == "passed" for v in end.values())


@pytest.mark.timeout(60)
async def test_the_service_map_is_unmapped_under_fog_until_checked(site: Path, browser: PageBrowser):
    """Traffic Surge hides its topology: a milestone's node reads "unmapped" until that territory's first
    check of it by the scrub time (as the app's map), and every node shows by the end."""
    source = next(m for m in MATCH_DIRS if m.name.startswith("traffic-surge"))
    match = load_match(source)
    assert match.hides_topology
    page = site / "matches" / source.name / "index.html"
    await browser.load(f"{page.as_uri()}#t=0")
    unmapped = "Array.from(document.querySelectorAll('#service-map .unmapped text')).map(t => t.textContent)"
    at_start = await browser.evaluate(unmapped)
    assert at_start and set(at_start) == {"unmapped"}
    await browser.evaluate("aoeReplay.seek(Infinity)")
    territory = await browser.evaluate("document.getElementById('map-territory').value")
    observed = match.world.territories[territory].milestones
    nodes = await browser.evaluate(
        "Array.from(document.querySelectorAll('#service-map [data-node-milestone]'))"
        ".map(n => [n.dataset.nodeMilestone, n.classList.contains('unmapped')])"
    )
    assert nodes and all(hidden == (milestone not in observed) for milestone, hidden in nodes)
