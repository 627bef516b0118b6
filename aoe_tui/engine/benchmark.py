"""A benchmark suite: one seat-rotated series per arena, then standings by model configuration.

Each arena's series lives in `NN-<arena_id>/` and is an ordinary series (it
checkpoints and resumes on its own); `benchmark.json` (schema_version 2) is
replaced atomically after every arena and when the run stops. Resuming is
allowed only while every arena's compatibility key still matches the plan:
a suite whose arenas changed is a different benchmark.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aoe_tui.agents.protocol import write_json_atomic
from aoe_tui.analysis.standings import (
    benchmark_standings,
    series_seats,
    series_standings,
)
from aoe_tui.domain.errors import AoeError
from aoe_tui.engine.stop_signals import Stoppable
from aoe_tui.engine.host_pool import HostPool
from aoe_tui.engine.series import (
    DEFAULT_REPLAYS,
    Report,
    RunnerFactory,
    SeriesRunner,
    SeriesStopped,
    compatibility_key_of,
)
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.store.series_files import (
    BENCHMARK_FILE,
    BENCHMARK_SCHEMA,
    SERIES_FILE,
    SERIES_SCHEMA,
    arena_dir_name,
    read_checkpoint,
    read_suite,
    set_aside_name,
)
from aoe_tui.store.series_source import series_folder

FactoryFor = Callable[[Path], RunnerFactory]
"""Builds the round factory for one arena manifest."""


class BenchmarkRunner(Stoppable):
    def __init__(
        self,
        suite_path: Path,
        output: Path,
        factory_for: FactoryFor,
        fresh: bool = False,
        replays: int = DEFAULT_REPLAYS,
        report: Report = print,
        pool: HostPool | None = None,
    ) -> None:
        self.suite_path = Path(suite_path)
        self.suite, arenas = read_suite(self.suite_path)
        self.output = Path(output)
        self.factory_for = factory_for
        self.fresh = fresh
        self.replays = replays
        self.report = report
        self.pool = pool  # `--hosts`: each arena's series spreads its rounds over these hosts
        self.plan: list[dict[str, Any]] = []
        for index, (manifest_path, rounds) in enumerate(arenas, 1):
            manifest = load_manifest(manifest_path)
            self.plan.append(
                {
                    "arena_id": manifest.arena.id,
                    "manifest": str(manifest_path),
                    "compatibility_key": compatibility_key_of(manifest, manifest_path),
                    "rounds": rounds or len(manifest.territories),
                    "output": str(self.output / arena_dir_name(index, manifest.arena.id)),
                }
            )
        self.checkpoint: dict[str, Any] = {}
        self.current: SeriesRunner | None = None

    @property
    def path(self) -> Path:
        return self.output / BENCHMARK_FILE

    async def run(self) -> dict[str, Any]:
        self._task = asyncio.current_task()
        self._open()
        try:
            for entry in self.plan:
                await self._play_arena(entry)
        except asyncio.CancelledError:
            if self.stop_reason is None:
                raise
            self._take_back_cancel()
            self._update()
            raise SeriesStopped(self.stop_reason) from None
        except SeriesStopped:
            self._update()
            raise
        self.report(f"benchmark complete: {self.checkpoint['arenas_completed']}/{len(self.plan)} arenas; {self.path}")
        return self.checkpoint

    def _open(self) -> None:
        existing = read_checkpoint(self.path, BENCHMARK_SCHEMA) if self.path.exists() else None
        if existing is not None and self.fresh:
            kept = set_aside_name(self.output, "previous")
            os.replace(self.output, kept)
            self.report(f"--fresh: the earlier benchmark is kept as {kept}")
            existing = None
        if existing is not None:
            self._check_compatible(existing)
            self.report(
                f"resuming benchmark {self.suite.suite.id} in {self.output}: "
                f"{existing['arenas_completed']}/{len(self.plan)} arenas complete (kept)"
            )
        elif self.output.exists() and any(self.output.iterdir()):
            raise AoeError(f"{self.output}: exists and holds no {BENCHMARK_FILE}; choose another --output")
        else:
            self.output.mkdir(parents=True, exist_ok=True)
            self.report(f"benchmark {self.suite.suite.id}: {len(self.plan)} arenas into {self.output}")
        self.checkpoint = {
            "schema_version": BENCHMARK_SCHEMA,
            "suite_id": self.suite.suite.id,
            "arenas_requested": len(self.plan),
            "arenas_completed": 0,
            "plan": self.plan,
            "arenas": [],
            "standings": [],
        }
        self._update()

    def _check_compatible(self, existing: dict[str, Any]) -> None:
        planned = {(e.get("arena_id"), e.get("output")): e.get("compatibility_key") for e in existing.get("plan", [])}
        if existing.get("suite_id") != self.suite.suite.id or len(planned) != len(self.plan):
            raise AoeError(
                f"{self.path}: cannot resume, it holds suite {existing.get('suite_id')!r} with "
                f"{len(planned)} arenas; rerun with --fresh or choose another --output"
            )
        for entry in self.plan:
            if planned.get((entry["arena_id"], entry["output"])) != entry["compatibility_key"]:
                raise AoeError(
                    f"{self.path}: cannot resume, arena {entry['arena_id']} changed since the benchmark "
                    f"began (its compatibility key differs); rerun with --fresh (the old one is kept)"
                )

    async def _play_arena(self, entry: dict[str, Any]) -> None:
        arena_id = entry["arena_id"]
        series = SeriesRunner(
            Path(entry["manifest"]),
            Path(entry["output"]),
            self.factory_for(Path(entry["manifest"])),
            rounds=entry["rounds"],
            replays=self.replays,
            report=lambda line: self.report(f"[{arena_id}] {line}"),
            pool=self.pool,
        )
        self.current = series
        try:
            await series.run()
        finally:
            self.current = None
        self._update()

    def _update(self) -> None:
        """Refresh `benchmark.json` from the arenas' own series folders and round matches, atomically."""
        arenas, seats = [], []
        for entry in self.plan:
            folder = Path(entry["output"])
            path = folder / SERIES_FILE
            if not path.exists():
                continue
            series = read_checkpoint(path, SERIES_SCHEMA)
            arena_seats = series_seats(series_folder(folder))
            seats += arena_seats
            arenas.append(
                {
                    "arena_id": entry["arena_id"],
                    "output": entry["output"],
                    "rounds_requested": series["rounds_requested"],
                    "rounds_completed": series["rounds_completed"],
                    "aborted": series["rounds_completed"] < series["rounds_requested"],
                    "standings": series_standings(arena_seats),
                }
            )
        self.checkpoint.update(
            arenas=arenas, arenas_completed=sum(not a["aborted"] for a in arenas), standings=benchmark_standings(seats)
        )
        write_json_atomic(self.path, self.checkpoint)
