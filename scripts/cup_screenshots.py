"""The cup view and the ladder view for screenshots/ (run by scripts/screenshots; no VMs needed).

A scripted cup of six (opencode-cup, season 2026-W37, seed 7, started 2026-09-13 02:19:18 UTC) is played on
scripted territories in a temporary folder, then shown as `aoe replay CUPDIR` shows it; the ladder is rated
from that cup, the bundled samples and the fixture series, as `aoe ladder` in a terminal shows it. The same
inputs give the same pictures.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from aoe_tui.analysis.ladder import ladder_report  # noqa: E402
from aoe_tui.app.cup_app import CupApp  # noqa: E402
from aoe_tui.app.ladder_app import LadderApp  # noqa: E402
from aoe_tui.engine.cup import CupRunner  # noqa: E402
from aoe_tui.testing.clock import ManualSource  # noqa: E402
from tests.cup.helpers import ScriptedHeats, write_cup  # noqa: E402
from tests.series.helpers import SERIES  # noqa: E402

OUT = PROJECT / "screenshots"
START = datetime(2026, 9, 13, 2, 19, 18, tzinfo=UTC)
ENTRANTS = ["kimi", "glm", "deepseek", "qwen", "minimax", "grok"]
READY = {"kimi": 2000, "deepseek": 3000, "glm": 5000}
FOLDER = Path("cups/opencode-cup/2026-W37-20260913-021918")


async def main() -> None:
    with tempfile.TemporaryDirectory() as work:
        os.chdir(work)
        write_cup(Path(work), ENTRANTS, cup_id="opencode-cup")
        factory = ScriptedHeats(Path(work) / "arena" / "arena.json", READY)
        cup = CupRunner(Path("CUP.toml"), FOLDER, factory, report=lambda _: None, now=lambda: START)
        factory.cup = cup
        await cup.run()
        app = CupApp(FOLDER, clock=ManualSource().now)
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.pause()
            app.save_screenshot("cup.svg", path=str(OUT))
        print(OUT / "cup.svg")
        report = ladder_report([FOLDER, PROJECT / "aoe_tui" / "samples", SERIES], history=True)
        ladder = LadderApp(report, clock=ManualSource().now)
        async with ladder.run_test(size=(160, 48)) as pilot:
            await pilot.pause()
            await pilot.pause(0.2)
            ladder.save_screenshot("ladder.svg", path=str(OUT))
        print(OUT / "ladder.svg")
        os.chdir(PROJECT)


asyncio.run(main())
