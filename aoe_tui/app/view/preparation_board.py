"""What each territory of a match being prepared has reached: the runner's `Progress` folded into stages.

The preparation view draws this board; it holds no Textual so the folding
can be tested (and reasoned about) without an app.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aoe_tui.engine.recorder import Progress

STAGES = ("image", "boot", "ssh", "agent")
LOG_LINES = 8


@dataclass
class TerritoryPreparation:
    stages: dict[str, str] = field(default_factory=lambda: {stage: "waiting" for stage in STAGES})
    message: str = "waiting"

    def reach(self, stage: str) -> None:
        """`stage` began; every earlier stage is therefore done."""
        for earlier in STAGES[: STAGES.index(stage)]:
            self.stages[earlier] = "done"
        if self.stages[stage] == "waiting":
            self.stages[stage] = "running"

    def finish(self, stage: str) -> None:
        self.reach(stage)
        self.stages[stage] = "done"


class PreparationBoard:
    """Folds the runner's `Progress` updates into a per-territory stage table (no Textual here)."""

    def __init__(self, territory_ids: list[str]) -> None:
        self.territories = {tid: TerritoryPreparation() for tid in territory_ids}
        self.log: list[str] = []
        self.error: str | None = None

    def apply(self, update: Progress) -> None:
        self.log = (self.log + [f"{update.territory}: {update.message}" if update.territory else update.message])[
            -LOG_LINES:
        ]
        if update.stage == "image":
            for each in self.territories.values():
                each.reach("image")
                each.message = update.message
            return
        territory = self.territories.get(update.territory or "")
        if territory is None or update.stage not in STAGES:
            return
        territory.message = update.message
        if update.stage == "boot":
            territory.reach("boot")
        elif update.stage == "ssh":
            territory.finish("ssh")
        elif update.stage == "agent":
            territory.finish("agent")

    @property
    def ready(self) -> bool:
        """Every agent started: the race is on."""
        return all(t.stages["agent"] == "done" for t in self.territories.values())

    def fail(self, error: str) -> None:
        self.error = error
        for territory in self.territories.values():
            for stage, state in territory.stages.items():
                if state == "running":
                    territory.stages[stage] = "failed"

    def unbooted(self) -> list[str]:
        """Territories that never passed SSH preflight: their console says why."""
        return [tid for tid, t in self.territories.items() if t.stages["ssh"] != "done"]
