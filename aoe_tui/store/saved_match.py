"""One loader for every saved-match shape.

Whatever a user points at — a match directory we wrote, a published artifact
folder, a single-file `*.match.json`, a world-only file, or an `events.jsonl`
— comes back as one `SavedMatch`, so the app and the CLI never branch on
where a match came from.

Only the record itself is essential: the event log, the world, or the
single-file artifact. Every other file of a match folder (manifest,
provenance, transcripts, results, analyses, tool traces) only adds detail, so
one that cannot be read or parsed is skipped and named in `skipped` with the
reason — a damaged transcript must not hide a whole match.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple, TypeVar
from collections.abc import Callable

from pydantic import BaseModel, ValidationError

from aoe_tui.domain.analysis import Analysis
from aoe_tui.domain.cup_rules import CupContext, cup_context
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.events import EventBase
from aoe_tui.domain.manifest import Manifest, Visualization
from aoe_tui.domain.manifest_rules import format_location
from aoe_tui.domain.reducer import reduce
from aoe_tui.domain.transcript import ToolTraceEntry, Transcript
from aoe_tui.domain.world import World
from aoe_tui.store.event_log import parse_event_objects, read_log_bytes
from aoe_tui.store.log_lines import Splitter, split_lines
from aoe_tui.store.match_integrity import check_events_digest
from aoe_tui.store.match_layout import EVENTS, WORLD, AgentPaths, MatchLayout
from aoe_tui.store.model_calls import read_model_calls
from aoe_tui.store.timeline import TimelineIndex, copy_world

MatchShape = Literal["directory", "published", "single-file", "world-only"]
SINGLE_FILE_TYPE = "agents-of-empires.match"
PREVIEW_BYTES = 1 << 20  # what the app reads of a long log before its first frame (about 5 000 events)
T = TypeVar("T")


class SkippedFile(NamedTuple):
    """An optional file of a match that could not be read, and why (the loader's one-line error)."""

    path: Path
    reason: str


@dataclass
class AgentInfo:
    """What the match says about one agent, with "unavailable" where nothing does."""

    agent_id: str
    territory: str | None
    model: str | None
    adapter: str | None
    reasoning_effort: str | None
    adapter_version: str | None = None  # a real harness's package@version (provenance `harness_versions`)


@dataclass
class SavedMatch:
    source: Path
    shape: MatchShape
    name: str
    manifest: Manifest | None
    events: Sequence[EventBase]
    world: World
    recorded_world: World | None
    agents: dict[str, AgentInfo] = field(default_factory=dict)
    transcripts: dict[str, Transcript] = field(default_factory=dict)
    live_tool_traces: dict[str, list[ToolTraceEntry]] = field(default_factory=dict)
    analyses: dict[str, Analysis] = field(default_factory=dict)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    model_calls: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """A single-file match's records of the agents' model exchanges; a folder's are read when asked
    (`agent_model_calls`): they can be large, and only an export reads them whole."""
    provenance: dict[str, Any] | None = None
    visualization: Visualization | None = None
    directory: Path | None = None
    skipped: list[SkippedFile] = field(default_factory=list)
    match_info: dict[str, Any] = field(default_factory=dict)
    """A single-file match's `match` object (name, slug, listed, fog_of_war), kept so an export keeps it."""
    timeline: TimelineIndex | None = None
    """The index read with an event log (its events are `events`); None until a view builds one."""
    pending_log: Path | None = None
    """An event log of which only the start was read (`load_match(preview_bytes=...)`): the events, world
    and timeline are those of that start, and `load_match` without a preview reads the whole match."""

    @property
    def cup(self) -> CupContext | None:
        """Where this match stands in a cup (cup, season, round, heat, attempt), from its name; else None."""
        return cup_context(self.name)

    @property
    def has_timeline(self) -> bool:
        return bool(self.events)

    @property
    def hides_topology(self) -> bool:
        """A fog arena's service map shows a territory's milestone nodes only once observed (ARENAS §6)."""
        fog = self.manifest.fog_of_war if self.manifest is not None else None
        return fog is not None and fog.hide_topology_until_observed

    @property
    def arena_name(self) -> str:
        if self.manifest is not None:
            return self.manifest.arena.display_name
        if self.provenance and self.provenance.get("arena_id"):
            return str(self.provenance["arena_id"])
        return "unknown arena"

    def skipped_files(self) -> list[tuple[str, str]]:
        """(file, reason) for each skipped file, the file named inside the match folder."""
        return [
            (str(s.path.relative_to(self.source)) if s.path.is_relative_to(self.source) else str(s.path), s.reason)
            for s in self.skipped
        ]

    def tool_trace(self, agent_id: str) -> list[ToolTraceEntry]:
        """The agent's observable tool calls: the final transcript, else the live trace."""
        transcript = self.transcripts.get(agent_id)
        if transcript is not None and transcript.tool_trace:
            return list(transcript.tool_trace)
        return self.live_tool_traces.get(agent_id, [])

    def agent_model_calls(self, agent_id: str) -> list[dict[str, Any]]:
        """The agent's model exchanges as the referee's gateway recorded them (`store.model_calls`)."""
        if agent_id in self.model_calls or self.directory is None:
            return self.model_calls.get(agent_id, [])
        return read_model_calls(MatchLayout.published_or_nested(self.directory).agent(agent_id).model_calls)


def _read_json(path: Path, what: str) -> Any:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise AoeError(f"{path}: no such file") from None
    except OSError as error:
        raise AoeError(f"{path}: cannot read {what} ({error.strerror})") from None
    if not raw.strip():
        raise AoeError(f"{path}: empty file, expected {what}")
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise AoeError(f"{path}: not UTF-8 text, expected {what} (binary file?)") from None
    except json.JSONDecodeError as error:
        raise AoeError(f"{path} line {error.lineno}: bad JSON in {what} ({error.msg})") from None


def _read_object(path: Path, what: str) -> dict[str, Any]:
    data = _read_json(path, what)
    if not isinstance(data, dict):
        raise AoeError(f"{path}: expected a JSON object, found {type(data).__name__}, in {what}")
    return data


def _model(model_type: type[BaseModel], data: Any, where: str) -> Any:
    try:
        return model_type.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        raise AoeError(f"{where}: field {format_location(first['loc']) or '?'}: {first['msg']}") from None


def _read_tool_trace(path: Path) -> list[ToolTraceEntry]:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as error:
        raise AoeError(f"{path}: cannot read a tool trace ({error.strerror})") from None
    entries = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entries.append(ToolTraceEntry.model_validate(json.loads(line)))
        except (json.JSONDecodeError, ValidationError):
            if number == len(lines):
                break  # the adapter may be mid-append
            raise AoeError(f"{path} line {number}: bad tool trace entry") from None
    return entries


def load_match(
    path: Path | str,
    progress: Callable[[float], None] | None = None,
    preview_bytes: int | None = None,
    grown: Callable[[TimelineIndex], None] | None = None,
    split: Splitter = split_lines,
) -> SavedMatch:
    """The match at `path`; `progress` hears how much of an event log was read, and `grown` its timeline as it
    grows (`TimelineIndex.from_log`, its lines taken apart by `split`).

    With `preview_bytes`, an event log longer than that is read only up to it (its last whole line) and
    named in `pending_log`: the app opens a long match on its start and reads the rest in the background."""
    path = Path(path)
    if not path.exists():
        raise AoeError(f"{path}: no such file or directory")
    if path.is_dir():
        return _load_directory(path, progress, preview_bytes, grown, split)
    if path.name == EVENTS:
        return _load_directory(path.parent, progress, preview_bytes, grown, split)
    data = _read_json(path, "a saved match")
    if isinstance(data, dict) and data.get("artifact_type") == SINGLE_FILE_TYPE:
        return match_from_document(path, data)
    if isinstance(data, dict) and "match_state" in data and "territories" in data:
        world = _model(World, data, str(path))
        return SavedMatch(
            source=path,
            shape="world-only",
            name=path.name.split(".")[0],
            manifest=None,
            events=[],
            world=world,
            recorded_world=world,
            agents=_agents_from(None, world),
        )
    raise AoeError(
        f"{path}: not a saved match (expected a match directory, a *.match.json "
        f"with artifact_type '{SINGLE_FILE_TYPE}', or a {WORLD})"
    )


def match_from_document(path: Path, data: dict[str, Any]) -> SavedMatch:
    """A single-file match (SPEC §5.3) from its parsed JSON; `path` names it in errors (a file, or a bundle's round).

    Beyond §5.3 an export by `aoe export` carries the agents' `transcripts`, `live_tool_traces` and `results`
    (so its replay shows the same tool calls) and the events' digest (`store.match_integrity`), checked here."""
    version = data.get("schema_version")
    if version != 1:
        raise AoeError(f"{path}: schema_version {version!r} is not supported (expected 1)")
    check_events_digest(data, str(path))
    manifest = _model(Manifest, data["arena"], f"{path} arena") if data.get("arena") else None
    events = parse_event_objects(data.get("events") or [], str(path))
    recorded = _model(World, data["world"], f"{path} world") if data.get("world") else None
    world = reduce(events) if events else (recorded or World())
    visual = data.get("visualization")
    match_info = data.get("match") or {}
    return SavedMatch(
        source=path,
        shape="single-file" if events or recorded is None else "world-only",
        name=match_info.get("name") or path.name.removesuffix(".match.json"),
        manifest=manifest,
        events=events,
        world=world,
        recorded_world=recorded,
        agents=_agents_from(manifest, world, data.get("provenance")),
        transcripts=_per_agent(data, "transcripts", path, lambda value, where: _model(Transcript, value, where)),
        live_tool_traces=_per_agent(
            data,
            "live_tool_traces",
            path,
            lambda value, where: [_model(ToolTraceEntry, entry, f"{where}[{i}]") for i, entry in enumerate(value)],
        ),
        analyses=_per_agent(data, "analyses", path, lambda value, where: _model(Analysis, value, where)),
        results=_per_agent(data, "results", path, lambda value, where: _expect_object(value, where)),
        model_calls=_per_agent(data, "model_calls", path, _model_call_records),
        provenance=data.get("provenance"),
        visualization=_model(Visualization, visual, f"{path} visualization") if visual else _visual(manifest),
        match_info=dict(match_info),
    )


def _per_agent(data: dict[str, Any], key: str, path: Path, read: Callable[[Any, str], T]) -> dict[str, T]:
    """`{agent: read(value)}` of a single-file match's per-agent section (absent: empty)."""
    section = data.get(key) or {}
    if not isinstance(section, dict):
        raise AoeError(f"{path}: field {key}: expected an object of agents")
    return {agent: read(value, f"{path} {key}.{agent}") for agent, value in section.items()}


def _model_call_records(value: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(record, dict) for record in value):
        raise AoeError(f"{where}: expected a list of JSON objects")
    return value


def _expect_object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise AoeError(f"{where}: expected a JSON object, found {type(value).__name__}")
    return value


def _visual(manifest: Manifest | None) -> Visualization | None:
    return manifest.visualization if manifest is not None else None


def _agents_from(
    manifest: Manifest | None, world: World, provenance: dict[str, Any] | None = None
) -> dict[str, AgentInfo]:
    agents: dict[str, AgentInfo] = {}
    versions = (provenance or {}).get("harness_versions") or {}
    if manifest is not None:
        for spec in manifest.agents:
            version = versions.get(spec.adapter) if isinstance(versions, dict) else None
            agents[spec.id] = AgentInfo(
                spec.id, spec.territory, spec.model, spec.adapter, spec.reasoning_effort, _text_or_none(version)
            )
    for agent_id, state in world.agents.items():
        agents.setdefault(agent_id, AgentInfo(agent_id, state.territory, state.model, None, None))
    for territory_id, territory in world.territories.items():
        if territory.agent and territory.agent not in agents:
            agents[territory.agent] = AgentInfo(territory.agent, territory_id, None, None, None)
    return agents


def _read_timeline(
    path: Path,
    progress: Callable[[float], None] | None,
    preview_bytes: int | None,
    grown: Callable[[TimelineIndex], None] | None = None,
    split: Splitter = split_lines,
) -> tuple[TimelineIndex | None, bool]:
    """(the log's index, whether only its start was read) of an event log, or (None, False) when there is none."""
    if not path.exists():
        return None, False
    if preview_bytes is not None and path.stat().st_size > preview_bytes:
        with open(path, "rb") as log:
            start = log.read(preview_bytes)
        return TimelineIndex.from_log(start[: start.rfind(b"\n") + 1], str(path)), True
    return TimelineIndex.from_log(read_log_bytes(path), str(path), progress, grown, split=split), False


def _load_directory(
    directory: Path,
    progress: Callable[[float], None] | None = None,
    preview_bytes: int | None = None,
    grown: Callable[[TimelineIndex], None] | None = None,
    split: Splitter = split_lines,
) -> SavedMatch:
    layout = MatchLayout.published_or_nested(directory)
    events_path, world_path = layout.events, layout.world
    if not events_path.exists() and not world_path.exists():
        raise AoeError(f"{directory}: no match here (neither {events_path.name} nor {world_path.name})")
    timeline, preview = _read_timeline(events_path, progress, preview_bytes, grown, split)
    events = timeline.events if timeline is not None else []
    recorded = _model(World, _read_json(world_path, "a world"), str(world_path)) if world_path.exists() else None
    skipped: list[SkippedFile] = []
    arena_path, provenance_path = layout.arena, layout.provenance
    manifest = _optional(
        skipped, arena_path, lambda: _model(Manifest, _read_json(arena_path, "a manifest"), str(arena_path))
    )
    provenance = _optional(skipped, provenance_path, lambda: _read_object(provenance_path, "provenance"))
    world = copy_world(timeline.head) if timeline and events else (recorded or World())
    match = SavedMatch(
        source=directory,
        shape="published" if layout.flat else "directory",
        name=directory.name,
        manifest=manifest,
        events=events,
        world=world,
        recorded_world=recorded,
        agents=_agents_from(manifest, world, provenance),
        provenance=provenance,
        visualization=_visual(manifest),
        directory=directory,
        skipped=skipped,
        timeline=timeline if events else None,
        pending_log=events_path if preview else None,
    )
    if not events and recorded is not None:
        match.shape = "world-only"
    heat = _heat_file(directory)  # a cup's attempt: named in the published format
    if heat is not None:
        match.name = heat["name"]
        match.match_info = {
            "name": heat["name"],
            **({"slug": heat["slug"]} if isinstance(heat.get("slug"), str) else {}),
        }
    for agent_id in match.agents:
        _load_agent_files(match, agent_id, layout.agent(agent_id))
    return match


def _heat_file(directory: Path) -> dict[str, Any] | None:
    from aoe_tui.store.cup_files import read_heat_file

    return read_heat_file(directory)


def _optional(skipped: list[SkippedFile], path: Path, read: Callable[[], T]) -> T | None:
    """`read()` of an optional file: None when it is absent, and None plus a `skipped` entry when it is damaged.

    A symbolic link is never followed: an adapter writes these files, and a link
    to a file only root can read would put that file into the record and on screen."""
    if path.is_symlink():
        skipped.append(SkippedFile(path, "is a symbolic link (not followed)"))
        return None
    if not path.exists():
        return None
    try:
        return read()
    except AoeError as error:
        skipped.append(SkippedFile(path, str(error).removeprefix(f"{path}").lstrip(": ") or str(error)))
        return None


def _load_agent_files(match: SavedMatch, agent_id: str, files: AgentPaths) -> None:
    def load(path: Path, read: Callable[[Path], T]) -> T | None:
        return _optional(match.skipped, path, lambda: read(path))

    for path in (files.transcript, files.live_transcript):
        if agent_id not in match.transcripts:
            transcript = load(path, lambda path: _model(Transcript, _read_json(path, "a transcript"), str(path)))
            if transcript is not None:
                match.transcripts[agent_id] = transcript
    result = load(files.result, lambda path: _read_object(path, "an agent result"))
    if result is not None:
        match.results[agent_id] = result
    analysis = load(files.analysis, lambda path: _model(Analysis, _read_json(path, "an analysis"), str(path)))
    if analysis is not None:
        match.analyses[agent_id] = analysis
    trace = load(files.tool_trace, _read_tool_trace)
    if trace is not None:
        match.live_tool_traces[agent_id] = trace


def _text_or_none(value: object) -> str | None:
    return value[:200] if isinstance(value, str) else None
