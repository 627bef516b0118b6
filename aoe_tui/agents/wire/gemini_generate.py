"""Gemini (`POST /v1beta/models/MODEL:generateContent`, and `:streamGenerateContent?alt=sse`).

Each streamed event is a `GenerateContentResponse` carrying the next parts of
the candidate; `usageMetadata` is repeated, growing, and the last one counts.
Thinking tokens are billed as output, so they are counted there.
"""

from __future__ import annotations

import json
from typing import Any

from aoe_tui.agents.wire.sse import ServerSentEvent
from aoe_tui.agents.wire.usage import SeenToolCall, TokenUsage, as_object, integer, json_event, plus

PATH_PREFIX = "/v1beta/models/"
_STATUSES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 429: "RESOURCE_EXHAUSTED"}


def body_usage(document: Any) -> TokenUsage | None:
    usage = as_object(document).get("usageMetadata")
    if not isinstance(usage, dict):
        return None
    candidates = integer(usage.get("candidatesTokenCount"))
    thoughts = integer(usage.get("thoughtsTokenCount"))
    return TokenUsage(
        integer(usage.get("promptTokenCount")),
        plus(candidates, thoughts) if candidates is not None or thoughts is not None else None,
        integer(usage.get("cachedContentTokenCount")),
    )


def _parts(document: Any) -> list[dict[str, Any]]:
    candidates = as_object(document).get("candidates")
    if not isinstance(candidates, list) or not candidates:
        return []
    parts = as_object(as_object(candidates[0]).get("content")).get("parts")
    return [part for part in parts if isinstance(part, dict)] if isinstance(parts, list) else []


def tool_calls(document: Any) -> list[SeenToolCall]:
    calls = [as_object(part.get("functionCall")) for part in _parts(document) if "functionCall" in part]
    return [
        SeenToolCall(
            str(call.get("id") or f"call-{index}"), str(call.get("name", "")), json.dumps(call.get("args", {}))
        )
        for index, call in enumerate(calls)
    ]


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"error": {"code": status, "message": message, "status": _STATUSES.get(status, "FAILED_PRECONDITION")}}


class Fold:
    def __init__(self) -> None:
        self._last: dict[str, Any] = {}
        self._parts: list[dict[str, Any]] = []
        self._finish: Any = None

    def add(self, event: ServerSentEvent) -> None:
        document = json_event(event.data)
        if document is None:
            return
        self._last = document
        for part in _parts(document):
            if "text" in part and self._parts and set(self._parts[-1]) == set(part) and "text" in self._parts[-1]:
                self._parts[-1] = {**part, "text": str(self._parts[-1]["text"]) + str(part["text"])}
            else:
                self._parts.append(part)
        candidates = document.get("candidates")
        if isinstance(candidates, list) and candidates and as_object(candidates[0]).get("finishReason"):
            self._finish = as_object(candidates[0])["finishReason"]

    @property
    def usage(self) -> TokenUsage | None:
        return body_usage(self._last)

    def document(self) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": self._parts}}
        if self._finish is not None:
            candidate["finishReason"] = self._finish
        document = {key: value for key, value in self._last.items() if key != "candidates"}
        return {**document, "candidates": [candidate]}
