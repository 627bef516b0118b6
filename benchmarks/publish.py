"""`aoe publish` at scale: 1,000 matches, one of them changed, and the 10^5-event page in a browser.

1. Publish 1,000 matches into a new site: copies of the First Build oracle fixture, each under its own
   name, every 7th with its winner's agent renamed in its world (so the archive is not one row a thousand
   times).
2. Publish the same folder again with one match changed (an agent's result summary rewritten): only that match's page is
   rendered again (incremental); and once more with nothing changed.
3. The synthetic 10^5-event match (`benchmarks/synthetic_match.py`, cached): the time to publish it, its page's
   size against its events' own size, and its time to interactive in headless Chromium (Debian's chromium
   over the DevTools protocol, `tests/publish/browser.py`): from navigation until the replay script has
   decoded the log and drawn the page (it sets `data-ready`), best and median of 5 fresh loads from `file://`.

    nice -n 19 .venv/bin/python benchmarks/publish.py [--matches N]

Prints a table; not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))
sys.path.insert(0, str(PROJECT / "benchmarks"))

from aoe_tui.publish.site import publish
from synthetic_match import synthetic_match
from tests.fixture_paths import ORACLE_DIR

EVENTS = 100_000


def make_matches(root: Path, count: int) -> list[Path]:
    folders = []
    for index in range(count):
        folder = root / f"first-build-copy-{index:04d}"
        shutil.copytree(ORACLE_DIR, folder)
        if index % 7 == 0:
            world = json.loads((folder / "world.json").read_text())
            for territory in world.get("territories", {}).values():
                if territory.get("agent"):
                    territory["agent"] = f"{territory['agent']}-{index}"
            (folder / "world.json").write_text(json.dumps(world))
        folders.append(folder)
    return folders


def timed(call) -> tuple[float, object]:
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


async def time_to_interactive(page: Path, runs: int = 5) -> list[float]:
    from tests.publish.browser import PageBrowser

    async with PageBrowser() as browser:
        times = [await browser.load(page.as_uri(), timeout=60) for _ in range(runs)]
        assert not browser.errors, browser.errors
        assert not browser.blocked, browser.blocked
        return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=1000)
    args = parser.parse_args()
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="aoe-publish-bench-") as work:
        root, site = Path(work) / "matches", Path(work) / "site"
        root.mkdir()
        folders = make_matches(root, args.matches)
        seconds, report = timed(lambda: publish([root], site))
        pages = sum(1 for _ in site.rglob("index.html"))
        rows.append((f"publish {args.matches:,} matches (new site)", f"{seconds:.1f} s, {pages:,} pages"))
        changed = folders[len(folders) // 2] / "builder-one-agent-result.json"
        result = json.loads(changed.read_text())
        result["summary"] = "changed for the benchmark"
        changed.write_text(json.dumps(result))
        seconds, report = timed(lambda: publish([root], site))
        rows.append(
            (
                f"again, 1 of {args.matches:,} changed",
                f"{seconds:.2f} s, {len(report.written)} files rewritten: {', '.join(report.written)}",
            )  # type: ignore[attr-defined]
        )
        seconds, report = timed(lambda: publish([root], site))
        rows.append(("again, nothing changed", f"{seconds:.2f} s, {len(report.written)} files rewritten"))  # type: ignore[attr-defined]

        big = synthetic_match(EVENTS)
        seconds, _ = timed(lambda: publish([big], site))
        page = site / "matches" / big.name / "index.html"
        events_size = (big / "events.jsonl").stat().st_size
        rows.append((f"publish the {EVENTS:,}-event match", f"{seconds:.1f} s"))
        rows.append(
            (
                "its page against its events",
                f"{page.stat().st_size / 1e6:.2f} MB page, {events_size / 1e6:.1f} MB events.jsonl",
            )
        )
        loads = asyncio.run(time_to_interactive(page))
        rows.append(
            (
                f"{EVENTS:,}-event page: time to interactive (chromium)",
                f"best {min(loads):.2f} s, median {statistics.median(loads):.2f} s of {len(loads)}",
            )
        )
    width = max(len(name) for name, _ in rows)
    print(f"{'measure'.ljust(width)}  result")
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")


if __name__ == "__main__":
    main()
