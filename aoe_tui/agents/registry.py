"""Adapter names in a manifest -> how to start them.

An arena's own scripted plan comes first: `adapters/NAME.toml` in the arena
folder runs as `python -m aoe_tui.agents.scripted --plan FILE` (the arena
folder is looked at first, as for verifiers, so an arena carries its oracle).
Built-in scripted builders run as `python -m aoe_tui.agents.scripted NAME`
(a separate process, the same path as any external harness). The real
third-party harnesses (`claude-code`, `codex`, `opencode`, `gemini-cli`,
`mini-swe-agent`) run as `python -m aoe_tui.agents.harnesses NAME`, which runs
the harness inside the agent's guest from the harness bundle. Any other name
resolves to an executable `aoe-adapter-NAME` on PATH, so a third-party
harness competes by installing one program. The sha256 of what runs is
recorded in match.json provenance.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from aoe_tui.agents.harnesses import HARNESS_MODULES, RECIPE
from aoe_tui.agents.scripted.plans import PLANS
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.manifest_rules import ID_PATTERN

EXTERNAL_PREFIX = "aoe-adapter-"
ARENA_PLANS = "adapters"  # an arena's own scripted plans: <arena folder>/adapters/NAME.toml
_SCRIPTED_DIR = Path(__file__).resolve().parent / "scripted"
# Built-in model harnesses: adapter name -> package run with `python -m`.
HARNESSES = {"openai": "aoe_tui.agents.openai_harness"}
# The wire protocols (wire.protocols) each model harness needs its provider to serve, checked before any guest boots.
HARNESS_PROTOCOLS = {
    "openai": ("openai-chat",),
    **{adapter_id: (harness.protocol,) for adapter_id, harness in HARNESS_MODULES.items()},
}
_GUEST_HARNESS_DIR = Path(__file__).resolve().parent / "harnesses"


@dataclass(frozen=True)
class Adapter:
    name: str
    command: tuple[str, ...]
    sources: tuple[Path, ...]
    builtin: bool

    def sha256(self) -> str:
        digest = hashlib.sha256()
        for source in self.sources:
            digest.update(source.name.encode() + b"\0" + source.read_bytes())
        return digest.hexdigest()


def builtin_adapters() -> list[str]:
    return [*PLANS, *HARNESSES, *HARNESS_MODULES]


def runs_in_guest(name: str) -> bool:
    """A real harness, run inside its guest from the harness bundle (which the guest then needs attached)."""
    return name in HARNESS_MODULES


def arena_plan(name: str, arena_dir: Path) -> Path | None:
    """The arena's own plan file for adapter `name`, if it has one (only plain ids are looked up)."""
    path = Path(arena_dir).resolve() / ARENA_PLANS / f"{name}.toml"
    return path if ID_PATTERN.match(name) and path.is_file() else None


def resolve_adapter(name: str, arena_dir: Path | None = None) -> Adapter:
    """What runs for adapter `name` of the arena in `arena_dir` (None: built-in and PATH adapters only)."""
    scripted = tuple(sorted(_SCRIPTED_DIR.glob("*.py")))
    plan = arena_plan(name, arena_dir) if arena_dir is not None else None
    if plan is not None:
        return Adapter(
            name,
            (sys.executable, "-m", "aoe_tui.agents.scripted", "--plan", str(plan)),
            (plan, *scripted),
            builtin=False,
        )
    if name in PLANS:
        return Adapter(name, (sys.executable, "-m", "aoe_tui.agents.scripted", name), scripted, builtin=True)
    if name in HARNESSES:
        package = Path(__file__).resolve().parent / HARNESSES[name].rsplit(".", 1)[1]
        return Adapter(name, (sys.executable, "-m", HARNESSES[name]), tuple(sorted(package.glob("*.py"))), builtin=True)
    if name in HARNESS_MODULES:
        module = _GUEST_HARNESS_DIR / f"{name.replace('-', '_')}.py"
        shared = [_GUEST_HARNESS_DIR / part for part in ("base.py", "runner.py", "bundle.py")]
        command = (sys.executable, "-m", "aoe_tui.agents.harnesses", name)
        return Adapter(name, command, (module, *shared, RECIPE), builtin=True)
    executable = shutil.which(EXTERNAL_PREFIX + name)
    if executable is None:
        raise AoeError(
            f"adapter {name!r}: no {ARENA_PLANS}/{name}.toml in the arena folder, not built in "
            f"({', '.join(builtin_adapters())}) and no {EXTERNAL_PREFIX}{name} on PATH"
        )
    return Adapter(name, (executable,), (Path(executable).resolve(),), builtin=False)
