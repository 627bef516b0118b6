"""The browser's listing: a match read once is listed from its cached summary until one of its files changes."""

import json
import shutil

from aoe_tui.app.view import match_catalog
from aoe_tui.app.view.match_catalog import build_catalog
from aoe_tui.store.summary_cache import CACHE_VERSION, SummaryCache
from tests.fixture_paths import HARNESS, ORACLE_DIR


def copied_matches(tmp_path):
    root = tmp_path / "matches"
    shutil.copytree(ORACLE_DIR, root / ORACLE_DIR.name)
    shutil.copy(HARNESS, root / HARNESS.name)
    return root


def test_a_second_listing_reads_no_match(tmp_path, monkeypatch):
    root, cache = copied_matches(tmp_path), tmp_path / "cache.json"
    first = build_catalog([root], SummaryCache(cache))
    assert all(entry.match is not None for entry in first) and cache.exists()

    def no_reading(path, *args, **kwargs):
        raise AssertionError(f"{path} was read again")

    monkeypatch.setattr(match_catalog, "load_match", no_reading)
    second = build_catalog([root], SummaryCache(cache))
    assert [entry.cells() for entry in second] == [entry.cells() for entry in first]
    assert all(entry.match is None for entry in second)


def test_a_changed_log_is_read_again(tmp_path):
    root, cache = copied_matches(tmp_path), tmp_path / "cache.json"
    build_catalog([root], SummaryCache(cache))
    log = root / ORACLE_DIR.name / "events.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:-3]))  # the last events were not written yet
    again = {entry.name: entry for entry in build_catalog([root], SummaryCache(cache))}
    assert again[ORACLE_DIR.name].match is not None and again[ORACLE_DIR.name].events == len(lines) - 3


def test_a_damaged_cache_is_rebuilt(tmp_path):
    root, cache = copied_matches(tmp_path), tmp_path / "cache.json"
    cache.write_text("{not json")
    assert len(build_catalog([root], SummaryCache(cache))) == 2
    assert SummaryCache(cache).get(root / HARNESS.name) is not None


def test_a_cache_of_the_right_version_but_damaged_entries_is_rebuilt(tmp_path):
    """Valid JSON of this version whose entries are not what `put` writes (no summary, not an object, a list
    of matches) is damaged too: it was read as it was and the listing failed (KeyError, AttributeError)."""
    root = copied_matches(tmp_path)
    harness = str((root / HARNESS.name).resolve())
    for matches in ({harness: {"stamps": []}}, {harness: "summary"}, {harness: {"summary": []}}, [harness]):
        cache = tmp_path / "cache.json"
        cache.write_text(json.dumps({"version": CACHE_VERSION, "matches": matches}))
        assert SummaryCache(cache).get(root / HARNESS.name) is None
        assert len(build_catalog([root], SummaryCache(cache))) == 2
        assert SummaryCache(cache).get(root / HARNESS.name) is not None


def test_a_series_opens_from_its_round_summaries(tmp_path, monkeypatch):
    """The series view's rounds and standings are the same read from the matches or from their summaries."""
    from aoe_tui.analysis import series_overview
    from aoe_tui.analysis.series_overview import overview
    from tests.fixture_paths import FIXTURES

    series = tmp_path / "series"
    shutil.copytree(FIXTURES / "series" / "first-build-real-20260814-075912", series)
    cache = tmp_path / "rounds.json"
    first = overview(series, SummaryCache(cache))

    def no_reading(round_):
        raise AssertionError(f"{round_.location} was read again")

    monkeypatch.setattr(series_overview, "_read_round", no_reading)
    second = overview(series, SummaryCache(cache))
    assert len(first.rounds) == 3 and first.standings
    assert rows_shown(second.rounds) == rows_shown(first.rounds) and second.standings == first.standings


def rows_shown(rows):
    return [{name: value for name, value in vars(row).items() if name != "load"} for row in rows]
