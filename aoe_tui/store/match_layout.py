"""Where every file of a match lives: the one owner of the match-folder layout.

A match we write is a directory with the record at its top (`events.jsonl`,
`world.json`, `arena.json`, `match.json`, `ports.json`) and one folder per
agent (`agents/<id>/`), per territory (`territories/<id>/`: console log,
overlay, verifier scratch), per territory's SSH identity (`ssh/<id>/`) and per
territory's evidence (`evidence/<territory>/<milestone>.json`). A published
folder keeps the record at its top but flattens the agent files to
`<id>-<name>` (`builder-transcript.json`). Writers (engine, runtime, agents)
and readers (store, app) ask this module for a path instead of joining names
themselves, so the layout can change in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

EVENTS = "events.jsonl"
WORLD = "world.json"
LIVE_SUFFIX = ".live.json"
MODEL_CALLS_NAME = "model_calls.jsonl"


def live_variant(transcript: Path) -> Path:
    """The transcript a harness rewrites while it runs, beside the final one (`transcript.live.json`)."""
    return transcript.with_name(transcript.name.removesuffix(".json") + LIVE_SUFFIX)


def holds_match(path: Path) -> bool:
    """Whether `path` is a match folder: it holds the record (an event log or a world)."""
    return (path / EVENTS).is_file() or (path / WORLD).is_file()


@dataclass(frozen=True)
class AgentPaths:
    """One agent's files: `<directory>/<name>` nested, `<directory>/<id>-<name>` when published flat."""

    directory: Path
    prefix: str = ""

    def _file(self, name: str) -> Path:
        return self.directory / f"{self.prefix}{name}"

    @property
    def instruction(self) -> Path:
        return self._file("instruction.md")

    @property
    def result(self) -> Path:
        return self._file("result.json")

    @property
    def usage(self) -> Path:
        return self._file("usage.json")

    @property
    def stdout(self) -> Path:
        return self._file("stdout.log")

    @property
    def stderr(self) -> Path:
        return self._file("stderr.log")

    @property
    def tool_trace(self) -> Path:
        return self._file("tool_trace.jsonl")

    @property
    def transcript(self) -> Path:
        return self._file("transcript.json")

    @property
    def model_calls(self) -> Path:
        """The referee's gateway's record of every exchange with the model (`model_calls.jsonl`)."""
        return self._file(MODEL_CALLS_NAME)

    @property
    def live_transcript(self) -> Path:
        return live_variant(self.transcript)

    @property
    def analysis(self) -> Path:
        return self._file("analysis.json")


CONSOLE_LOG_NAME = "console.log"
OVERLAY_NAME = "overlay.qcow2"
"""The names of a guest's console log and disk in its folder: here, or in a remote host's work directory."""


@dataclass(frozen=True)
class TerritoryPaths:
    """One territory's folder (`territories/<id>/`): the guest's disk and console, the verifiers' scratch."""

    directory: Path

    @property
    def console_log(self) -> Path:
        return self.directory / CONSOLE_LOG_NAME

    @property
    def overlay(self) -> Path:
        return self.directory / OVERLAY_NAME

    @property
    def verifier_scratch(self) -> Path:
        return self.directory / "verifier"

    @property
    def warm_state(self) -> Path:
        """A warm start's copy of its template's saved state, there only until the guest is restored."""
        return self.directory / "warm.save"


@dataclass(frozen=True)
class MatchLayout:
    """The files of one match folder rooted at `root`; `flat` for a published folder's agent files."""

    root: Path
    flat: bool = False

    @classmethod
    def of_agent_directory(cls, directory: Path) -> MatchLayout:
        """The match whose `agents/<id>/` folder `directory` is (an adapter knows only its own folder)."""
        return cls(Path(directory).parent.parent)

    @classmethod
    def published_or_nested(cls, root: Path) -> MatchLayout:
        """The layout of a folder on disk: nested when it has an `agents/` folder, else the published one."""
        return cls(root, flat=not (Path(root) / "agents").is_dir())

    @property
    def events(self) -> Path:
        return self.root / EVENTS

    @property
    def world(self) -> Path:
        return self.root / WORLD

    @property
    def arena(self) -> Path:
        """The manifest exactly as run (`arena.json`)."""
        return self.root / "arena.json"

    @property
    def provenance(self) -> Path:
        """What was run, for honest comparison (`match.json`)."""
        return self.root / "match.json"

    @property
    def ports(self) -> Path:
        """Which loopback ports this match's guests were given (chosen at boot), for humans and tools."""
        return self.root / "ports.json"

    def agent_directory(self, agent_id: str) -> Path:
        return self.root if self.flat else self.root / "agents" / agent_id

    def agent(self, agent_id: str) -> AgentPaths:
        return AgentPaths(self.root, f"{agent_id}-") if self.flat else AgentPaths(self.agent_directory(agent_id))

    def territory_directory(self, territory_id: str) -> Path:
        return self.root / "territories" / territory_id

    def territory(self, territory_id: str) -> TerritoryPaths:
        return TerritoryPaths(self.territory_directory(territory_id))

    def territories(self) -> list[TerritoryPaths]:
        """Every territory folder present on disk."""
        return [TerritoryPaths(path) for path in sorted((self.root / "territories").glob("*"))]

    def ssh_directory(self, territory_id: str) -> Path:
        """The territory's own SSH identity (private key, known_hosts)."""
        return self.root / "ssh" / territory_id

    def evidence_directory(self, territory_id: str) -> Path:
        return self.root / "evidence" / territory_id

    def evidence(self, territory_id: str, milestone_id: str) -> Path:
        """The evidence of a milestone's last passing check."""
        return self.evidence_directory(territory_id) / f"{milestone_id}.json"
