"""`aoe publish` without a browser: the site's layout, incremental re-publishing, --prune, and self-containment."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from aoe_tui.cli.main import main
from aoe_tui.publish.site import STATE_FILE, publish
from tests.fixture_paths import HARNESS, ORACLE_DIR

SERIES = Path(__file__).resolve().parents[1] / "fixtures" / "series"


def sources(tmp_path: Path) -> Path:
    root = tmp_path / "matches"
    root.mkdir()
    shutil.copytree(ORACLE_DIR, root / ORACLE_DIR.name)
    shutil.copy(HARNESS, root / HARNESS.name)
    series = next(SERIES.iterdir())
    shutil.copytree(series, root / series.name)
    return root


def test_the_command_writes_the_layout(tmp_path: Path, capsys):
    root = sources(tmp_path)
    cup = tmp_path / "cup" / "2026-w37"
    cup.mkdir(parents=True)
    (cup / "cup.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "cup_id": "opencode-cup",
                "season": "2026-W37",
                "rounds": [{"round": 1, "heats": [{"heat": 1, "winner": "a", "entrants": ["a", "b"]}]}],
            }
        )
    )
    ladder = tmp_path / "ladder.json"
    ladder.write_text(json.dumps({"rows": [{"name": "oracle", "rating": 31.5, "history": [25, 28, 31.5]}]}))
    site = tmp_path / "site"
    assert main(["publish", str(root), str(cup), str(ladder), "-o", str(site), "--title", "Team <results>"]) == 0
    assert "published" in capsys.readouterr().out
    for page in (
        "index.html",
        "archive/index.html",
        f"matches/{ORACLE_DIR.name}/index.html",
        "matches/harness-exhibition-20260915-225225/index.html",
        f"series/{next(SERIES.iterdir()).name}/index.html",
        "cups/opencode-cup/2026-w37/index.html",
        "ladder/index.html",
    ):
        assert (site / page).is_file(), page
    index = (site / "index.html").read_text()
    assert "Team &lt;results&gt;" in index and "oracle" in index
    assert "rating over time" in (site / "ladder" / "index.html").read_text().lower()
    assert "heat 1" in (site / "cups/opencode-cup/2026-w37/index.html").read_text()


def test_pages_are_self_contained(tmp_path: Path):
    site = tmp_path / "site"
    publish([sources(tmp_path)], site)
    for page in site.rglob("*.html"):
        html = page.read_text()
        # nothing to fetch: no external script, style, font or image; links stay inside the site
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), page
        assert "<link " not in html and "@import" not in html and "url(" not in html
        for link in re.findall(r'href="([^"#]+)"', html):
            assert (page.parent / link).resolve().is_file(), (page, link)


def test_republishing_rewrites_only_what_changed_and_keeps_gone_pages(tmp_path: Path):
    root = sources(tmp_path)
    site = tmp_path / "site"
    first = publish([root], site)
    assert len(first.written) >= 7
    again = publish([root], site)
    assert again.written == [] and again.reused == 3  # the match folder, the file and the series
    world = root / ORACLE_DIR.name / "world.json"
    world.write_text(world.read_text())
    os.utime(world, (1, 1))
    changed = publish([root], site)
    assert changed.reused == 2  # only the touched match was rendered again (its bytes the same: not rewritten)
    assert changed.written == [STATE_FILE]  # the new fingerprint; no page
    # a source that is gone keeps its page, unless --prune
    shutil.rmtree(root / ORACLE_DIR.name)
    kept = publish([root], site)
    assert (site / "matches" / ORACLE_DIR.name / "index.html").is_file() and kept.pruned == []
    pruned = publish([root], site, prune=True)
    assert not (site / "matches" / ORACLE_DIR.name).exists()
    assert f"matches/{ORACLE_DIR.name}" in pruned.pruned
    assert ORACLE_DIR.name not in (site / "archive" / "index.html").read_text()
    assert json.loads((site / STATE_FILE).read_text())["schema_version"] == 1


def test_a_page_carries_the_log_no_larger_than_the_events(tmp_path: Path):
    site = tmp_path / "site"
    publish([ORACLE_DIR], site)
    page = (site / "matches" / ORACLE_DIR.name / "index.html").read_text()
    data = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', page, re.S).group(1)
    log = json.loads(data)["log"]["body"]
    assert len(log) <= (ORACLE_DIR / "events.jsonl").stat().st_size


def test_the_ladder_page_rates_the_site_as_aoe_ladder_does(tmp_path: Path):
    from aoe_tui.analysis.ladder import ladder_report

    root = sources(tmp_path)
    site = tmp_path / "site"
    publish([root], site)
    html = (site / "ladder" / "index.html").read_text()
    shown = re.findall(r'<tr><td class="num">\d+</td><td>([^<]*)</td>', html.split('id="ladder"')[1])
    assert shown == [row["entrant"] for row in ladder_report([root])["ladder"]]
    assert "Rating over time" in html and "<polyline" in html
    index = (site / "index.html").read_text()
    assert shown[0] in index.split('id="ladder-top"')[1]


def test_a_cup_folder_gets_its_bracket_and_its_matches(tmp_path: Path):
    """A cup run by `CupRunner` on scripted territories (tests/cup/helpers.py): cups/<id>/<season>/ with its
    bracket (each heat's order and winner, a link to each attempt's match) and every attempt's match page."""
    import asyncio
    from datetime import UTC, datetime

    from aoe_tui.engine.cup import CupRunner
    from tests.cup.helpers import ScriptedHeats, write_cup

    write_cup(tmp_path, ["kimi", "glm", "deepseek", "qwen", "minimax", "grok"], cup_id="opencode-cup")
    factory = ScriptedHeats(tmp_path / "arena" / "arena.json", {"kimi": 2000, "deepseek": 3000, "glm": 5000})
    runner = CupRunner(
        tmp_path / "CUP.toml",
        tmp_path / "cup",
        factory,
        report=[].append,
        now=lambda: datetime(2026, 9, 13, tzinfo=UTC),
    )
    factory.cup = runner
    final = asyncio.run(runner.run())
    site = tmp_path / "site"
    publish([tmp_path / "cup"], site)
    page = (site / "cups" / "opencode-cup" / "2026-w37" / "index.html").read_text()
    assert (
        'id="bracket"' in page and "round 2" in page and f'<span class="outcome-won">{final["winner"]}</span>' in page
    )
    links = re.findall(r'href="\.\./\.\./\.\./(matches/[^"]+)"', page)
    attempts = [a for r in final["rounds"] for h in r["heats"] for a in h["attempts"]]
    assert len(set(links)) == len(attempts) == 3
    assert all((site / link).is_file() for link in links)
    assert "opencode-cup" in (site / "index.html").read_text()


def test_a_benchmark_folder_and_a_world_only_match(tmp_path: Path):
    from tests.fixture_paths import WORLD_ONLY

    bench = tmp_path / "bench"
    bench.mkdir()
    shutil.copytree(next(SERIES.iterdir()), bench / "01-first-build-real")
    (bench / "benchmark.json").write_text(json.dumps({"schema_version": 2, "suite_id": "first-build"}))
    site = tmp_path / "site"
    report = publish([bench, WORLD_ONLY], site)
    assert report.problems == []
    page = (site / "benchmarks" / "first-build" / "index.html").read_text()
    assert "Leaderboard by configuration" in page and "Rotation grid" in page
    rounds = re.findall(r'href="\.\./\.\./(matches/[^"]+)"', page)
    assert len(rounds) == 3 and all((site / link).is_file() for link in rounds)
    world = (site / "matches" / "first-build-real-world" / "index.html").read_text()
    assert "No timeline" in world and 'data-state="passed"' in world and "replay-data" not in world


def test_a_path_that_holds_nothing_is_named_and_the_rest_still_published(tmp_path, capsys) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    site = tmp_path / "site"
    assert main(["publish", str(ORACLE_DIR), str(empty), "-o", str(site)]) == 2
    err = capsys.readouterr().err
    assert f"skipped {empty}: no match, series, benchmark, cup or ladder in it" in err
    assert (site / "index.html").is_file() and any((site / "matches").iterdir())
