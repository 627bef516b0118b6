"""The command-adapter protocol (docs/adapters.md): how the referee and any agent harness talk.

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
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator, model_validator

from aoe_tui.domain.untrusted import clean_text
from aoe_tui.store.atomic_file import write_text_atomic
from aoe_tui.store.match_layout import AgentPaths

RESULT_STATUSES = ("completed", "failed", "unavailable", "timed_out", "interrupted", "budget_exceeded", "harness_error")
ResultStatus = Literal[
    "completed", "failed", "unavailable", "timed_out", "interrupted", "budget_exceeded", "harness_error"
]

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
# The match's model gateway (docs/gateway.md): its base URL (each protocol's path after it) and this agent's token,
# presented where the protocol's SDK puts its key. An adapter never gets a provider key.
ENV_GATEWAY_URL = "AOE_GATEWAY_URL"
ENV_GATEWAY_TOKEN = "AOE_GATEWAY_TOKEN"


MAX_COUNT = 10**15
"""No honest counter gets near this; a bigger one is a broken or hostile adapter, not usage."""
SUMMARY_LIMIT = 2000
USAGE_FILE_LIMIT = 64 * 1024
RESULT_FILE_LIMIT = 16 * 1024 * 1024

Count = Annotated[StrictInt, Field(ge=0, le=MAX_COUNT)]
"""A self-reported counter: a JSON integer only (no bool, string or float), non-negative, bounded."""


class InvalidReport(ValueError):
    """An adapter's file exists but is not a valid report; the message says why (bounded, printable)."""


class Usage(BaseModel):
    """Cumulative usage; a missing token or cost count is unknown, not zero.

    Validated strictly because the referee charges and enforces budgets from
    it: `"resource_units": -5`, `true` or `"9"` must not pass as a number.
    Other keys an adapter adds (schema_version, agent, ...) are ignored.
    """

    model_config = ConfigDict(extra="ignore")

    resource_units: Count = 0
    input_tokens: Count | None = None
    output_tokens: Count | None = None
    cost_microusd: Count | None = None
    rounds: Count | None = None
    tool_calls: Count | None = None


class AgentResult(BaseModel):
    """An adapter's hand-in. Its summary is player text: cleaned and capped before anyone shows it."""

    model_config = ConfigDict(extra="allow")

    schema_version: int = 1
    agent: str
    territory: str
    status: ResultStatus
    summary: str | None = None
    usage: Usage = Usage()
    transcript: Any = None

    @model_validator(mode="before")
    @classmethod
    def _unknown_status(cls, data: Any) -> Any:
        """A status outside the protocol is the harness's error, kept in the summary, not a lost result."""
        if isinstance(data, dict) and data.get("status") not in RESULT_STATUSES:
            said = clean_text(repr(data.get("status")), 60)
            summary = data.get("summary")
            detail = f": {summary}" if isinstance(summary, str) and summary else ""
            data = {**data, "status": "harness_error", "summary": f"adapter reported unknown status {said}{detail}"}
        return data

    @field_validator("summary", mode="before")
    @classmethod
    def _clean_summary(cls, summary: Any) -> Any:
        return None if summary is None else clean_text(summary, SUMMARY_LIMIT)

    @field_validator("usage", mode="before")
    @classmethod
    def _lenient_usage(cls, usage: Any) -> Any:
        """A malformed usage object must not cost the agent its result; usage.json is what is charged."""
        try:
            return Usage.model_validate(usage)
        except ValidationError:
            return Usage()


@dataclass(frozen=True)
class AgentFiles(AgentPaths):
    """One agent's files inside a match directory (`agents/<id>/`, store.match_layout), handed over as env."""

    def env(self) -> dict[str, str]:
        return {
            ENV_INSTRUCTION_FILE: str(self.instruction),
            ENV_RESULT_FILE: str(self.result),
            ENV_USAGE_FILE: str(self.usage),
            ENV_STDOUT_FILE: str(self.stdout),
            ENV_STDERR_FILE: str(self.stderr),
            ENV_TOOL_TRACE_FILE: str(self.tool_trace),
            ENV_TRANSCRIPT_FILE: str(self.transcript),
        }


def write_json_atomic(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def append_jsonl(path: Path, entry: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry, separators=(",", ":"), ensure_ascii=False) + "\n")
        handle.flush()


def _read_report(path: Path, model: type[BaseModel], limit: int) -> Any:
    """The model in the file at `path`; None when there is no file; InvalidReport when it is not valid.

    At most `limit` bytes are read: the file is written by the adapter, which
    could make it as large as the disk.
    """
    path = Path(path)
    try:  # never through a link: the adapter could point it at a file only the referee may read
        with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise InvalidReport(f"{path.name}: cannot read it ({error.strerror})") from None
    if len(data) > limit:
        raise InvalidReport(f"{path.name}: larger than {limit} bytes")
    try:
        return model.model_validate_json(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
        raise InvalidReport(
            clean_text(f"{path.name}: {where + ': ' if where else ''}{first['msg']}{more}", 300)
        ) from None


def read_usage(path: Path) -> Usage | None:
    """The last checkpoint; None when absent (an adapter may not write one), InvalidReport when invalid."""
    return _read_report(path, Usage, USAGE_FILE_LIMIT)


def read_result(path: Path) -> AgentResult | None:
    """The hand-in, or None when there is none or it cannot be read as one."""
    try:
        return _read_report(path, AgentResult, RESULT_FILE_LIMIT)
    except InvalidReport:
        return None
