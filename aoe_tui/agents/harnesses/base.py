"""What every real harness module says about itself, and the bounded line reader its parser sits on.

A harness (Claude Code, Codex CLI, opencode, Gemini CLI, mini-swe-agent) is
described by a `Harness`: how it is installed (registry, package, exact
version), which protocol it speaks to the model gateway, the configuration
files and environment that point its model traffic at the gateway with the
agent's gateway token and turn its telemetry, update checks and plugin or
model fetches off, its command line, and a pure parser from its native event
stream to our live tool trace (`ToolTraceEntry`), its result text, its own
last error line and the tokens it reports.

Every byte a parser reads came from a program driven by an untrusted model:
lines and strings are bounded, anything that is not the expected shape is
skipped (a torn last line too), nothing read is ever opened as a path.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any, Literal

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.transcript import ToolTraceEntry, TranscriptUsage

RECIPE = Path(__file__).resolve().parent / "recipe.toml"  # the one owner of each harness's package and version

Registry = Literal["npm", "pypi"]

MAX_LINE_BYTES = 8 * 1024 * 1024  # one event line; a longer one is skipped whole
MAX_STRING_CHARS = 64 * 1024  # each string kept of a call (command, output) or of the result
MAX_ERROR_CHARS = 2000  # the harness's last error line
MAX_CALLS = 10_000  # tool calls kept in one run's trace
MAX_PENDING = 1_000  # calls started and not yet finished
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024  # a whole trajectory file


@dataclass(frozen=True)
class HarnessContext:
    """One run of a harness: where it runs, what it is told, and how it reaches its model."""

    prompt: str  # the arena's brief, verbatim
    model: str
    gateway_url: str  # AOE_GATEWAY_URL: http://127.0.0.1:PORT, without a path
    gateway_token: str  # AOE_GATEWAY_TOKEN: the only credential the harness holds
    home: str  # the harness's HOME; its configuration files go under it
    workdir: str  # the working folder it starts in
    max_turns: int = 200


@dataclass(frozen=True)
class ConfigFile:
    path: str  # absolute, under the context's home
    text: str
    mode: int = 0o600


@dataclass(frozen=True)
class RecipeEntry:
    """One harness as `recipe.toml` pins it."""

    adapter_id: str
    registry: Registry
    package: str
    version: str
    protocol: str  # a wire.protocols name
    executable: str  # the program the package installs

    @property
    def spec(self) -> str:
        return f"{self.package}@{self.version}" if self.registry == "npm" else f"{self.package}=={self.version}"


def read_recipe(path: Path) -> tuple[RecipeEntry, ...]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise AoeError(f"{path}: cannot read the harness recipe: {error}") from None
    entries = []
    for adapter_id, fields in (data.get("harnesses") or {}).items():
        try:
            entries.append(RecipeEntry(adapter_id, **fields))
        except TypeError as error:
            raise AoeError(f"{path}: harnesses.{adapter_id}: {error}") from None
    return tuple(entries)


@cache
def pinned(adapter_id: str) -> RecipeEntry:
    """`adapter_id` as the project's recipe pins it."""
    return next(entry for entry in read_recipe(RECIPE) if entry.adapter_id == adapter_id)


@dataclass(frozen=True)
class Harness:
    recipe: RecipeEntry  # registry, package, exact version, protocol, executable
    quiet_env: Mapping[str, str]  # telemetry, update checks, plugin and model fetches off
    files: Callable[[HarnessContext], tuple[ConfigFile, ...]]
    env: Callable[[HarnessContext], dict[str, str]]
    argv: Callable[[HarnessContext], tuple[str, ...]]
    parser: Callable[[], HarnessParser]
    trajectory: str | None = None  # the file (relative to its HOME) its record is read from; None: stdout
    # Its command line to carry on session `session_id` (cut by the referee's reboot) with a new prompt; None: it
    # cannot resume one headless.
    resume_argv: Callable[[HarnessContext, str], tuple[str, ...]] | None = None

    @property
    def adapter_id(self) -> str:
        return self.recipe.adapter_id

    @property
    def package(self) -> str:
        return self.recipe.package

    @property
    def version(self) -> str:
        return self.recipe.version

    @property
    def protocol(self) -> str:
        return self.recipe.protocol

    @property
    def spec(self) -> str:
        return self.recipe.spec


RESUME_PROMPT = (
    "The referee rebooted this host to check that your service survives it, and that cut your session. "
    "The host is back. Carry on with the task where you left off."
)


@dataclass
class HarnessReport:
    """What a harness's own record says of a run."""

    tool_trace: list[ToolTraceEntry] = field(default_factory=list)
    result: str | None = None  # its final answer
    completed: bool = False  # it said it finished without error
    last_error: str | None = None  # its own last error line
    usage: TranscriptUsage | None = None  # tokens as it reports them (the gateway's count is authoritative)
    session_id: str | None = None  # to resume it after the referee's reboot
    model_rounds: int | None = None
    skipped_lines: int = 0  # lines that were not an event it knows (garbage, torn, oversized)


class HarnessParser:
    """Reads a harness's record; `feed` returns the calls that finished, `finish` the whole report."""

    report: HarnessReport  # what it has read so far (the session id to resume, before the record ends)

    def feed(self, data: bytes, now_ms: int | None = None) -> list[ToolTraceEntry]:
        raise NotImplementedError

    def finish(self) -> HarnessReport:
        raise NotImplementedError


def parse(harness: Harness, data: bytes) -> HarnessReport:
    """The whole record at once (a finished run's stdout or trajectory file)."""
    parser = harness.parser()
    parser.feed(data)
    return parser.finish()


class JsonLinesParser(HarnessParser):
    """One JSON object a line, fed in chunks as they arrive; `on_event` reads each.

    A line over MAX_LINE_BYTES is dropped to its end; a line that is not a JSON
    object is counted and skipped; the last line, when the stream ended without
    its newline, is torn and skipped. Calls are timed by `now_ms`, when the feeder
    gives the time each chunk arrived (the streams carry no clock of their own).
    """

    def __init__(self) -> None:
        self.report = HarnessReport()
        self._buffer = bytearray()
        self._dropping = False
        self._pending: dict[str, tuple[ToolTraceEntry, int | None]] = {}
        self._finished: list[ToolTraceEntry] = []

    def feed(self, data: bytes, now_ms: int | None = None) -> list[ToolTraceEntry]:
        self._finished = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            self._take(data[start:end], now_ms)
            start = end + 1
        rest = data[start:]
        if self._dropping:
            return self._finished
        if len(self._buffer) + len(rest) > MAX_LINE_BYTES:
            self._buffer.clear()
            self._dropping = True
            self.report.skipped_lines += 1
        else:
            self._buffer += rest
        return self._finished

    def _take(self, piece: bytes, now_ms: int | None) -> None:
        if self._dropping:
            self._dropping = False
            return
        if len(self._buffer) + len(piece) > MAX_LINE_BYTES:
            self._buffer.clear()
            self.report.skipped_lines += 1
            return
        line = bytes(self._buffer) + piece
        self._buffer.clear()
        if not line.strip():
            return
        try:
            event = json.loads(line.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            self.report.skipped_lines += 1
            return
        if not isinstance(event, dict):
            self.report.skipped_lines += 1
            return
        self.on_event(event, now_ms)

    def finish(self) -> HarnessReport:
        if self._buffer.strip() or self._dropping:
            self.report.skipped_lines += 1  # torn: the stream ended inside a line
        self._buffer.clear()
        self._dropping = False
        for call_id in list(self._pending):
            entry, _ = self._pending.pop(call_id)
            entry.output = "(no result: the harness's record ended before this call finished)"
            entry.is_error = True
            self._keep(entry)
        return self.report

    def on_event(self, event: dict[str, Any], now_ms: int | None) -> None:
        raise NotImplementedError

    # -- calls ---------------------------------------------------------------------------------------

    def started(self, call_id: str, name: str, tool_input: dict[str, Any], now_ms: int | None) -> None:
        if len(self._pending) >= MAX_PENDING or call_id in self._pending:
            return
        entry = ToolTraceEntry(
            id=bounded(call_id, 200), name=name, input=tool_input, read_only=read_only(name), started_after_ms=now_ms
        )
        self._pending[call_id] = (entry, now_ms)

    def ended(self, call_id: str, output: str, is_error: bool, now_ms: int | None) -> None:
        found = self._pending.pop(call_id, None)
        if found is None:
            return
        entry, started = found
        entry.output = bounded(output)
        entry.is_error = is_error
        if started is not None and now_ms is not None:
            entry.duration_ms = max(0, now_ms - started)
        self._keep(entry)

    def timed(self, call_id: str, started_ms: int | None, ended_ms: int | None) -> None:
        """The duration of a call just ended, from the stream's own clock, when the feeder gave none."""
        last = self.report.tool_trace[-1] if self.report.tool_trace else None
        if last is None or last.id != call_id or last.duration_ms is not None:
            return
        if started_ms is not None and ended_ms is not None and 0 <= ended_ms - started_ms < 10**9:
            last.duration_ms = ended_ms - started_ms

    def whole_call(self, entry: ToolTraceEntry) -> None:
        """A call the stream reports once, started and finished."""
        self._keep(entry)

    def _keep(self, entry: ToolTraceEntry) -> None:
        if len(self.report.tool_trace) < MAX_CALLS:
            self.report.tool_trace.append(entry)
            self._finished.append(entry)

    def error(self, text: object) -> None:
        line = error_line(text)
        if line:
            self.report.last_error = line


READ_ONLY_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "TodoWrite"})


def read_only(name: str) -> bool:
    return name in READ_ONLY_TOOLS


def bounded(text: object, limit: int = MAX_STRING_CHARS) -> str:
    value = text if isinstance(text, str) else "" if text is None else json.dumps(text, ensure_ascii=False, default=str)
    return value if len(value) <= limit else value[:limit] + f"\n[... {len(value) - limit} characters cut]"


def error_line(text: object) -> str | None:
    """The last non-empty line of an error text, bounded."""
    if not isinstance(text, str):
        return None
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:MAX_ERROR_CHARS] if lines else None


def as_dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def as_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**15 else None


def as_number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 <= value < 1e12 else None


def bounded_input(value: object) -> dict[str, Any]:
    """A tool's input kept as it came, every string in it bounded (an input that is no object is kept as text)."""
    if not isinstance(value, dict):
        return {"raw_arguments": bounded(value)}
    return {bounded(key, 200): _bounded_value(item, 0) for key, item in list(value.items())[:50]}


def _bounded_value(value: object, depth: int) -> Any:
    if isinstance(value, str):
        return bounded(value)
    if isinstance(value, bool | int | float) or value is None:
        return value
    if depth >= 4:
        return bounded(value)
    if isinstance(value, list):
        return [_bounded_value(item, depth + 1) for item in value[:100]]
    if isinstance(value, dict):
        return {bounded(str(k), 200): _bounded_value(v, depth + 1) for k, v in list(value.items())[:50]}
    return None


def epoch_ms(value: object) -> int | None:
    """An ISO 8601 timestamp from a stream, in epoch milliseconds (None when it is not one)."""
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except (ValueError, OverflowError):
        return None


def json_text(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
