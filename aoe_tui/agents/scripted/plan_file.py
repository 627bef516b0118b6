"""An arena's own scripted builder: a plan written as TOML beside its manifest (`adapters/NAME.toml`).

Why a plan file, and not a built-in plan or an adapter script of the arena's: a person writing a new
arena knows which commands a careful (or careless) engineer would type in the guest, and that is
all a plan is. As data in the arena folder it is edited without touching aoe's package and travels
with the folder; it runs on the same scripted builder as the built-in plans (`builder.py`: the
adapter protocol, tool trace, usage, SIGTERM), which an adapter script would have to do again.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from aoe_tui.agents.scripted.base import Plan, Step
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.manifest_rules import shape_problems
from aoe_tui.store.manifest_file import read_manifest_data


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlanStep(_Strict):
    description: str
    command: str
    think_seconds: float = Field(default=1.0, ge=0, le=600)
    on_host: bool = False

    @field_validator("description", "command")
    @classmethod
    def _not_blank(cls, text: str) -> str:
        if not text.strip():
            raise ValueError("must not be blank")
        return text


class PlanFile(_Strict):
    summary: str
    steps: list[PlanStep] = Field(min_length=1)


def read_plan(path: Path) -> tuple[Plan | None, list[str]]:
    """The plan at `path` (named after its file), or None and every problem, each naming the file and key."""
    try:
        parsed = PlanFile.model_validate(read_manifest_data(path, "scripted plan"))
    except AoeError as error:
        return None, [str(error)]
    except ValidationError as error:
        return None, [f"{path}: {problem}" for problem in shape_problems(error)]
    steps = tuple(Step(s.command, s.description, s.think_seconds, s.on_host) for s in parsed.steps)
    return Plan(path.stem, store=f"as its plan says ({path.name})", summary=parsed.summary, steps=steps), []


def load_plan(path: Path) -> Plan:
    """The plan at `path`; AoeError naming its first problem."""
    plan, problems = read_plan(path)
    if plan is None:
        raise AoeError(problems[0])
    return plan
