"""Adapter names in a manifest -> how to start them.

Built-in scripted builders run as `python -m aoe_tui.agents.scripted NAME`
(a separate process, the same path as any external harness). Any other name
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

from aoe_tui.agents.scripted.plans import PLANS
from aoe_tui.domain.errors import AoeError

EXTERNAL_PREFIX = "aoe-adapter-"
_SCRIPTED_DIR = Path(__file__).resolve().parent / "scripted"
# Built-in model harnesses: adapter name -> package run with `python -m`.
HARNESSES = {"openai": "aoe_tui.agents.openai_harness"}


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
    return [*PLANS, *HARNESSES]


def resolve_adapter(name: str) -> Adapter:
    if name in PLANS:
        return Adapter(
            name,
            (sys.executable, "-m", "aoe_tui.agents.scripted", name),
            tuple(sorted(_SCRIPTED_DIR.glob("*.py"))),
            builtin=True,
        )
    if name in HARNESSES:
        package = Path(__file__).resolve().parent / HARNESSES[name].rsplit(".", 1)[1]
        return Adapter(name, (sys.executable, "-m", HARNESSES[name]), tuple(sorted(package.glob("*.py"))), builtin=True)
    executable = shutil.which(EXTERNAL_PREFIX + name)
    if executable is None:
        raise AoeError(
            f"adapter {name!r}: not built in ({', '.join(builtin_adapters())}) and no {EXTERNAL_PREFIX}{name} on PATH"
        )
    return Adapter(name, (executable,), (Path(executable).resolve(),), builtin=False)
