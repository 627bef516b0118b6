"""An agent's transcript: what it was told, what it said, and every tool call it made.

Transcripts come from harnesses we do not control (the earlier Rust controller,
third-party agents), so every model is lenient: unknown fields are kept, optional
fields default to None. Fields are declared in the order the earlier controller
wrote them, so that `canonical_json()` of a parsed fixture reproduces its bytes
exactly and `source_sha256` values recorded by the earlier analyzer still match.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict


class _Lenient(BaseModel):
    """Keeps unknown fields so that a round trip never loses data."""

    model_config = ConfigDict(extra="allow")


class TranscriptOutcome(_Lenient):
    """How the harness says the agent ended (`running` while still live)."""

    status: str | None = None
    result: Any = None


class TranscriptUsage(_Lenient):
    """Token and cost totals; `int | float` so a cost of `0` stays `0` when re-serialized."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_creation_tokens: int | None = None
    cost_usd: int | float | None = None


class ToolTraceEntry(_Lenient):
    """One tool call. A live tool trace file (`tool_trace.jsonl`) is one of these per line."""

    id: str | None = None
    name: str | None = None
    input: Any = None
    output: Any = None
    is_error: bool | None = None
    read_only: bool | None = None
    started_after_ms: int | None = None
    duration_ms: int | None = None

    @property
    def finished_after_ms(self) -> int | None:
        """When the call's result was observed, if the harness timed it."""
        if self.started_after_ms is None:
            return None
        return self.started_after_ms + (self.duration_ms or 0)


class ModelRound(_Lenient):
    """One request/response round with the model provider."""

    index: int | None = None
    started_after_ms: int | None = None
    duration_ms: int | None = None
    status: str | None = None
    usage: TranscriptUsage | None = None


class TranscriptTiming(_Lenient):
    total_duration_ms: int | None = None
    model_rounds: list[ModelRound] | None = None


class Transcript(_Lenient):
    """A whole transcript. `messages` stay raw: private model reasoning is never parsed."""

    schema_version: int | None = None
    model: str | None = None
    outcome: TranscriptOutcome | None = None
    usage: TranscriptUsage | None = None
    messages: list[Any] | None = None
    tool_trace: list[ToolTraceEntry] | None = None
    timing: TranscriptTiming | None = None

    @property
    def tool_calls(self) -> list[ToolTraceEntry]:
        return list(self.tool_trace or [])

    def canonical_json(self) -> str:
        """The transcript as the earlier controller wrote it: 2-space indent, UTF-8, field order kept.

        Only fields that were present (or explicitly set) are written, so a parsed
        file serializes back to its own bytes.
        """
        return json.dumps(self.model_dump(mode="json", exclude_unset=True), indent=2, ensure_ascii=False)

    def sha256(self) -> str:
        """Identity of this transcript; analyses record it as `source_sha256`."""
        return hashlib.sha256(self.canonical_json().encode("utf-8")).hexdigest()


REASONING_BLOCK_TYPES = frozenset({"reasoning", "thinking", "redacted_thinking"})
"""Content blocks that hold a model's private reasoning (the fixtures' `reasoning`, Anthropic's `thinking`)."""
REASONING_FIELDS = ("reasoning", "reasoning_content", "reasoning_details", "thinking")
"""Message fields that hold it in the OpenAI-style shape some providers echo."""


def without_private_reasoning(messages: list[Any]) -> tuple[list[Any], int]:
    """`messages` with every private reasoning block and field taken out, and how many were.

    Reasoning is recognised by its block type or field name only; its text is
    never read. Everything else of a message is kept as it was."""
    removed = 0
    kept: list[Any] = []
    for message in messages:
        if not isinstance(message, dict):
            kept.append(message)
            continue
        public = {key: value for key, value in message.items() if key not in REASONING_FIELDS}
        removed += len(message) - len(public)
        content = public.get("content")
        if isinstance(content, list):
            blocks = [b for b in content if not (isinstance(b, dict) and b.get("type") in REASONING_BLOCK_TYPES)]
            removed += len(content) - len(blocks)
            public["content"] = blocks
        kept.append(public)
    return kept, removed
