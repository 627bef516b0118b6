"""The transcript in the fixtures' format (schema 2), built as the run goes.

Requests to the provider use OpenAI's message shape; the transcript uses the
content-block shape of the fixtures (`text`, `reasoning`, `tool_use`,
`tool_result`) so the app, the analyzer and replays read our runs exactly like
the earlier controller's.
"""

from __future__ import annotations

import json
from typing import Any

from aoe_tui.agents.openai_harness.chat import ChatReply
from aoe_tui.agents.wire.usage import TokenUsage
from aoe_tui.agents.openai_harness.guest_tools import ToolResult
from aoe_tui.agents.openai_harness.usage import UsageTotals

SCHEMA_VERSION = 2


class TranscriptRecorder:
    def __init__(self, model: str) -> None:
        self.model = model
        self.messages: list[dict[str, Any]] = []
        self.tool_trace: list[dict[str, Any]] = []
        self.model_rounds: list[dict[str, Any]] = []

    def user_text(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    def model_round(self, started_after_ms: int, duration_ms: int, status: str, usage: TokenUsage | None) -> None:
        entry: dict[str, Any] = {
            "index": len(self.model_rounds) + 1,
            "started_after_ms": started_after_ms,
            "duration_ms": duration_ms,
            "status": status,
        }
        if usage is not None:
            entry["usage"] = {
                "input_tokens": usage.input_tokens or 0,
                "output_tokens": usage.output_tokens or 0,
                "cache_read_tokens": usage.cached_tokens or 0,
                "cache_creation_tokens": 0,
                "cost_usd": usage.cost_usd or 0,
            }
        self.model_rounds.append(entry)

    def assistant(self, reply: ChatReply) -> None:
        blocks: list[dict[str, Any]] = []
        if reply.reasoning:
            blocks.append({"type": "reasoning", "text": reply.reasoning})
        if reply.content:
            blocks.append({"type": "text", "text": reply.content})
        for call in reply.tool_calls:
            blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": _arguments(call.arguments)})
        self.messages.append({"role": "assistant", "content": blocks})

    def tool_result(self, call_id: str, result: ToolResult, started_after_ms: int, duration_ms: int) -> dict[str, Any]:
        """Record one finished call; returns its tool_trace entry (also the live feed's line)."""
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": result.output}
        if result.is_error:
            block["is_error"] = True
        if self.messages and self.messages[-1]["role"] == "user" and isinstance(self.messages[-1]["content"], list):
            self.messages[-1]["content"].append(block)
        else:
            self.messages.append({"role": "user", "content": [block]})
        entry = {
            "id": call_id,
            "name": result.name,
            "input": result.input,
            "output": result.output,
            "is_error": result.is_error,
            "read_only": result.read_only,
            "started_after_ms": started_after_ms,
            "duration_ms": duration_ms,
        }
        self.tool_trace.append(entry)
        return entry

    def document(self, status: str, result: str | None, totals: UsageTotals, total_duration_ms: int) -> dict[str, Any]:
        outcome: dict[str, Any] = {"status": status}
        if result is not None:
            outcome["result"] = result
        return {
            "schema_version": SCHEMA_VERSION,
            "model": self.model,
            "outcome": outcome,
            "usage": totals.transcript_usage(),
            "messages": self.messages,
            "tool_trace": self.tool_trace,
            "timing": {"total_duration_ms": total_duration_ms, "model_rounds": self.model_rounds},
        }


def _arguments(text: str) -> Any:
    try:
        return json.loads(text or "{}")
    except ValueError:
        return {"raw_arguments": text}
