"""The command-adapter protocol (SPEC §7): how the referee and any agent harness talk.

Everything crosses a process boundary as environment variables and files, so
a harness in any language can compete. The files an adapter writes are
replaced atomically (write a temporary file, rename) because the referee reads
them while the adapter is still running; the live tool trace is append-only
JSONL for the same reason.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

RESULT_STATUSES = ("completed", "failed", "unavailable", "timed_out", "interrupted", "budget_exceeded",
                   "harness_error")
ResultStatus = Literal["completed", "failed", "unavailable", "timed_out", "interrupted", "budget_exceeded",
                       "harness_error"]

ENV_AGENT_ID = "AOE_AGENT_ID"
ENV_TERRITORY_ID = "AOE_TERRITORY_ID"
ENV_TERRITORY_HOST = "AOE_TERRITORY_HOST"
ENV_SSH_PORT = "AOE_SSH_PORT"
ENV_SSH_KEY = "AOE_SSH_KEY"
ENV_KNOWN_HOSTS = "AOE_KNOWN_HOSTS"
ENV_SSH_USER = "AOE_SSH_USER"
ENV_MODEL = "AOE_MODEL"
ENV_REASONING_EFFORT = "AOE_REASONING_EFFORT"
ENV_INSTRUCTION_FILE = "AOE_INSTRUCTION_FILE"
ENV_RESULT_FILE = "AOE_RESULT_FILE"
ENV_USAGE_FILE = "AOE_USAGE_FILE"
ENV_STDOUT_FILE = "AOE_STDOUT_FILE"
ENV_STDERR_FILE = "AOE_STDERR_FILE"
ENV_TOOL_TRACE_FILE = "AOE_TOOL_TRACE_FILE"
ENV_TRANSCRIPT_FILE = "AOE_TRANSCRIPT_FILE"
ENV_BUDGET_RESOURCE_UNITS = "AOE_BUDGET_RESOURCE_UNITS"
ENV_BUDGET_MAX_COST_MICROUSD = "AOE_BUDGET_MAX_COST_MICROUSD"


class Usage(BaseModel):
    """Cumulative usage; a missing token or cost count is unknown, not zero."""

    model_config = ConfigDict(extra="allow")

    resource_units: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_microusd: int | None = None
    rounds: int | None = None
    tool_calls: int | None = None


class AgentResult(BaseModel):
    model_config = ConfigDict(extra="allow")

    schema_version: int = 1
    agent: str
    territory: str
    status: ResultStatus
    summary: str | None = None
    usage: Usage = Usage()
    transcript: Any = None


@dataclass(frozen=True)
class AgentFiles:
    """Where one agent's files live inside a match directory (`agents/<id>/`)."""

    directory: Path

    @property
    def instruction(self) -> Path:
        return self.directory / "instruction.md"

    @property
    def result(self) -> Path:
        return self.directory / "result.json"

    @property
    def usage(self) -> Path:
        return self.directory / "usage.json"

    @property
    def stdout(self) -> Path:
        return self.directory / "stdout.log"

    @property
    def stderr(self) -> Path:
        return self.directory / "stderr.log"

    @property
    def tool_trace(self) -> Path:
        return self.directory / "tool_trace.jsonl"

    @property
    def transcript(self) -> Path:
        return self.directory / "transcript.json"

    def env(self) -> dict[str, str]:
        return {ENV_INSTRUCTION_FILE: str(self.instruction), ENV_RESULT_FILE: str(self.result),
                ENV_USAGE_FILE: str(self.usage), ENV_STDOUT_FILE: str(self.stdout),
                ENV_STDERR_FILE: str(self.stderr), ENV_TOOL_TRACE_FILE: str(self.tool_trace),
                ENV_TRANSCRIPT_FILE: str(self.transcript)}


def write_json_atomic(path: Path, data: Any) -> None:
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, ensure_ascii=False)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def append_jsonl(path: Path, entry: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry, separators=(",", ":"), ensure_ascii=False) + "\n")
        handle.flush()


def _read_model(path: Path, model: type[BaseModel]) -> Any:
    try:
        return model.model_validate_json(Path(path).read_bytes())
    except (OSError, ValidationError, ValueError):
        return None


def read_usage(path: Path) -> Usage | None:
    """The last checkpoint, or None when absent or unreadable (an adapter may not write one)."""
    return _read_model(path, Usage)


def read_result(path: Path) -> AgentResult | None:
    return _read_model(path, AgentResult)
