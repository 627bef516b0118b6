"""Series folders for the standings tests, built from the fixture series' real round matches."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import FIXTURES
from tests.engine.helpers import arena_data

SERIES = FIXTURES / "series" / "first-build-real-20260814-075912"
STORED = json.loads((SERIES / "series.json").read_text())


def copy_series(target: Path) -> Path:
    shutil.copytree(SERIES, target)
    for path in [target, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target


def edit_events(events: Path, edit) -> None:
    """Rewrite an event log line by line: `edit(event)` changes the event in place."""
    lines = []
    for line in events.read_text().splitlines():
        event = json.loads(line)
        edit(event)
        lines.append(json.dumps(event))
    events.write_text("\n".join(lines) + "\n")


def write_round_arena(round_dir: Path, adapter: str = "claux", effort: dict[str, str] | None = None) -> None:
    """An arena.json for a fixture round: its seats (from world.json) with an adapter and reasoning effort."""
    world = json.loads((round_dir / "world.json").read_text())
    data = arena_data()
    data["agents"] = [{"id": agent, "territory": state["territory"], "adapter": adapter, "model": state["model"],
                       "reasoning_effort": (effort or {}).get(agent, "high")}
                      for agent, state in sorted(world["agents"].items())]
    (round_dir / "arena.json").write_text(json.dumps(data))
