"""`agents/<id>/model_calls.jsonl`: the referee's gateway's record of an agent's model exchanges, read back.

The gateway (`agents.gateway.call_log`) appends one JSON object per exchange:
`sequence`, `agent`, `protocol`, `model`, `provider`, `elapsed_ms`,
`duration_ms`, `status`, `streamed`, `cut`, `usage`, `tool_calls`, `request`,
`response`. The store may not import the agents' package, so this is the
reader the app and the exports use: tolerant (a torn last line of a live
match, a garbage line, a value of the wrong type: skipped, never an error)
and bounded (a record holds a whole request, so a long match's file can be
large: a read stops at a byte budget, and the live view reads only what was
appended since its last look, keeping a summary of the last exchanges).

Everything in a record is player or provider text: callers clean it before
showing it (`domain.untrusted`) and the exports pass it through the redactor.
Private reasoning stays in the file (it is the match's own); `public_record`
takes it out of a record for anything that leaves the match.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

READ_LIMIT = 64 * 1024 * 1024  # bytes of one agent's file read for an export (its first whole lines)
TAIL_FIRST_BYTES = 4 * 1024 * 1024  # a live view's first look: only the file's last bytes
TAIL_CHUNK_BYTES = 4 * 1024 * 1024  # and at most this much of what was appended, per look
TAIL_KEEP = 200  # exchanges a live view keeps a summary of

# Private reasoning under the names the four protocols give it: keys of a message or item, and the types of a
# content block, output item or input item. A Gemini part with `"thought": true` is reasoning too.
REASONING_KEYS = frozenset({"reasoning", "reasoning_content", "reasoning_details", "reasoning_text", "thinking"})
REASONING_TYPES = frozenset({"reasoning", "thinking", "redacted_thinking"})

PROTOCOLS = ("openai-chat", "openai-responses", "anthropic-messages", "gemini")


@dataclass(frozen=True)
class ModelCallSummary:
    """What a one-line view of an exchange needs; strings as recorded (untrusted: clean them to show)."""

    sequence: int | None
    elapsed_ms: int | None
    duration_ms: int | None
    protocol: str
    model: str
    status: int | None
    streamed: bool | None
    cut: str | None
    input_tokens: int | None
    output_tokens: int | None
    cached_tokens: int | None
    cost_usd: float | None
    tool_names: tuple[str, ...]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def summarize(record: dict[str, Any]) -> ModelCallSummary:
    """The summary of a record whatever its fields hold (a wrong type reads as unknown)."""
    usage = _object(record.get("usage"))
    cost = usage.get("provider_cost_usd")
    calls = _list(record.get("tool_calls"))
    cut = record.get("cut")
    return ModelCallSummary(
        sequence=_int(record.get("sequence")),
        elapsed_ms=_int(record.get("elapsed_ms")),
        duration_ms=_int(record.get("duration_ms")),
        protocol=_text(record.get("protocol")),
        model=_text(record.get("model")),
        status=_int(record.get("status")),
        streamed=record.get("streamed") if isinstance(record.get("streamed"), bool) else None,
        cut=None if cut is None else (cut if isinstance(cut, str) else json.dumps(cut, ensure_ascii=False)),
        input_tokens=_int(usage.get("input_tokens")),
        output_tokens=_int(usage.get("output_tokens")),
        cached_tokens=_int(usage.get("cached_tokens")),
        cost_usd=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
        tool_names=tuple(_text(call.get("name")) for call in calls if isinstance(call, dict)),
    )


def parse_lines(data: bytes) -> list[dict[str, Any]]:
    """The JSON objects among `data`'s lines; any other line (torn, garbage, not an object) is skipped."""
    records = []
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def read_model_calls(path: Path, limit: int = READ_LIMIT) -> list[dict[str, Any]]:
    """The records of a model_calls.jsonl, up to `limit` bytes of it; none when it is absent, unreadable or a
    symbolic link (the agent's folder is the adapter's to write: a link is never followed)."""
    try:
        if path.is_symlink():
            return []
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError:
        return []
    if len(data) > limit:
        data = data[: data.rfind(b"\n", 0, limit) + 1]  # whole lines only
    return parse_lines(data)


class ModelCallTail:
    """The summaries of the last exchanges of a file another process appends to, read a bounded piece a look.

    The first look skips to the file's last `first_bytes`; each look reads at most `chunk_bytes` more, and
    only whole lines (the gateway may be mid-append). A file that shrank (replaced) is read again."""

    def __init__(
        self,
        path: Path,
        keep: int = TAIL_KEEP,
        first_bytes: int = TAIL_FIRST_BYTES,
        chunk_bytes: int = TAIL_CHUNK_BYTES,
    ) -> None:
        self.path = path
        self.first_bytes, self.chunk_bytes = first_bytes, chunk_bytes
        self.summaries: deque[ModelCallSummary] = deque(maxlen=keep)
        self.offset: int | None = None  # None: never looked
        self.seen = 0  # exchanges read
        self.skipped_bytes = 0  # of the file's start, never read
        self._mid_line = False

    def read_new(self) -> list[ModelCallSummary]:
        """The exchanges appended since the last look (also kept in `summaries`)."""
        try:
            if self.path.is_symlink():
                return []
            with open(self.path, "rb") as handle:
                size = handle.seek(0, 2)
                if self.offset is None or size < self.offset:
                    self._restart(size)
                assert self.offset is not None
                handle.seek(self.offset)
                data = handle.read(self.chunk_bytes)
        except OSError:
            return []
        if self._mid_line:  # the look starts in the byte before the skipped part: from the first line after it
            start = data.find(b"\n") + 1
            if start == 0:
                self.offset += len(data)
                return []
            data, self.offset, self._mid_line = data[start:], self.offset + start, False
        end = data.rfind(b"\n")
        if end < 0:
            if len(data) >= self.chunk_bytes:
                self.offset += len(data)  # one line longer than a look: never shown, never blocking
                self._mid_line = True
            return []
        self.offset += end + 1
        new = [summarize(record) for record in parse_lines(data[:end])]
        self.summaries.extend(new)
        self.seen += len(new)
        return new

    def _restart(self, size: int) -> None:
        self.summaries.clear()
        self.seen = 0
        self.skipped_bytes = max(size - self.first_bytes, 0)
        self._mid_line = self.skipped_bytes > 0
        self.offset = self.skipped_bytes - 1 if self._mid_line else 0


def public_record(record: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """`record` without private reasoning (keys and blocks of `REASONING_*`, Gemini thought parts), and
    how many pieces were taken out: what may leave the match (an export)."""
    removed = 0

    def strip(value: Any) -> Any:
        nonlocal removed
        if isinstance(value, dict):
            kept = {}
            for key, item in value.items():
                if key in REASONING_KEYS:
                    removed += 1
                    continue
                kept[key] = strip(item)
            return kept
        if isinstance(value, list):
            items = []
            for item in value:
                if isinstance(item, dict) and (item.get("type") in REASONING_TYPES or item.get("thought") is True):
                    removed += 1
                    continue
                items.append(strip(item))
            return items
        return value

    return strip(record), removed


# -- the conversation in a record, per protocol: what the model answered, and what the next request brought ------


@dataclass(frozen=True)
class Said:
    """One piece of a request's new input: a user or system text, or a tool's result (`call_id`, `name`)."""

    source: str  # "user", "system" or "tool"
    text: str
    call_id: str | None = None
    name: str | None = None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _is_reasoning(block: Any) -> bool:
    return isinstance(block, dict) and (block.get("type") in REASONING_TYPES or block.get("thought") is True)


def _block_text(content: Any, kinds: frozenset[str] = frozenset({"text", "input_text", "output_text"})) -> str:
    """The text of a content that is a str, or a list of text blocks (other blocks, reasoning included, skipped)."""
    if isinstance(content, str):
        return content
    texts = [
        str(block.get("text") or "")
        for block in _list(content)
        if isinstance(block, dict) and block.get("type") in kinds and not _is_reasoning(block)
    ]
    return "\n\n".join(text for text in texts if text)


def _result_text(content: Any) -> str:
    """A tool result's content as text: a str, text blocks, else its JSON."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(b, dict) and "text" in b for b in content):
        return "\n".join(str(b.get("text") or "") for b in content)
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def _after_last(items: list[Any], is_answer: Any) -> tuple[list[Any], bool]:
    """The items after the last one the model said (its earlier turns, sent back as history), and whether
    there was one (the first request of a conversation has none)."""
    last = max((i for i, item in enumerate(items) if isinstance(item, dict) and is_answer(item)), default=-1)
    return items[last + 1 :], last >= 0


def answer_text(protocol: str, response: Any) -> str:
    """The model's public text in a response document (reasoning never)."""
    document = _object(response)
    if protocol == "openai-chat":
        choices = _list(document.get("choices"))
        message = _object(_object(choices[0]).get("message")) if choices else {}
        return _block_text(message.get("content"))
    if protocol == "openai-responses":
        messages = [item for item in _list(document.get("output")) if _object(item).get("type") == "message"]
        kinds = frozenset({"output_text", "text", "refusal"})
        parts = [_block_text(m.get("content"), kinds) or str(m.get("refusal") or "") for m in messages]
        return "\n\n".join(part for part in parts if part)
    if protocol == "anthropic-messages":
        return _block_text(document.get("content"), frozenset({"text"}))
    if protocol == "gemini":
        candidates = _list(document.get("candidates"))
        pieces = _list(_object(_object(candidates[0]).get("content")).get("parts")) if candidates else []
        texts = [str(p["text"]) for p in pieces if isinstance(p, dict) and "text" in p and not _is_reasoning(p)]
        return "".join(texts)
    return ""


def new_input(protocol: str, request: Any) -> list[Said]:
    """What a request adds to the conversation: everything after the model's last turn in it (the tool results
    of the previous exchange, a new user text); the system prompt only with the first request."""
    document = _object(request)
    if protocol == "openai-chat":
        return _chat_input(document)
    if protocol == "openai-responses":
        return _responses_input(document)
    if protocol == "anthropic-messages":
        return _anthropic_input(document)
    if protocol == "gemini":
        return _gemini_input(document)
    return []


def _chat_input(document: dict[str, Any]) -> list[Said]:
    tail, _ = _after_last(_list(document.get("messages")), lambda m: m.get("role") == "assistant")
    said = []
    for message in tail:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role in ("tool", "function"):
            call_id = message.get("tool_call_id")
            said.append(
                Said(
                    "tool", _result_text(message.get("content")), str(call_id) if call_id else None, message.get("name")
                )
            )
        elif role in ("user", "system", "developer"):
            said.append(Said("user" if role == "user" else "system", _block_text(message.get("content"))))
    return said


_RESPONSES_ANSWERS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "reasoning"})
_RESPONSES_RESULTS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output"})


def _responses_input(document: dict[str, Any]) -> list[Said]:
    given = document.get("input")
    items = [{"role": "user", "content": given}] if isinstance(given, str) else _list(given)
    tail, answered = _after_last(items, lambda i: i.get("type") in _RESPONSES_ANSWERS or (i.get("role") == "assistant"))
    said = []
    if not answered and isinstance(document.get("instructions"), str) and document["instructions"]:
        said.append(Said("system", document["instructions"]))
    for item in tail:
        if not isinstance(item, dict):
            continue
        if item.get("type") in _RESPONSES_RESULTS:
            call_id = item.get("call_id")
            said.append(Said("tool", _result_text(item.get("output")), str(call_id) if call_id else None))
        elif item.get("type", "message") == "message" and item.get("role") in ("user", "system", "developer"):
            said.append(Said("user" if item["role"] == "user" else "system", _block_text(item.get("content"))))
    return said


def _anthropic_input(document: dict[str, Any]) -> list[Said]:
    tail, answered = _after_last(_list(document.get("messages")), lambda m: m.get("role") == "assistant")
    said = []
    system = document.get("system")
    if not answered and (text := _block_text(system, frozenset({"text"}))):
        said.append(Said("system", text))
    for message in tail:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else _list(content)
        texts = []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                call_id = block.get("tool_use_id")
                said.append(Said("tool", _result_text(block.get("content")), str(call_id) if call_id else None))
            elif block.get("type") == "text" and block.get("text"):
                texts.append(str(block["text"]))
        if texts:
            said.append(Said("user", "\n\n".join(texts)))
    return said


def _gemini_input(document: dict[str, Any]) -> list[Said]:
    tail, answered = _after_last(_list(document.get("contents")), lambda c: c.get("role") == "model")
    said = []
    system = _object(document.get("systemInstruction") or document.get("system_instruction"))
    if not answered and (text := _gemini_text(system.get("parts"))):
        said.append(Said("system", text))
    for content in tail:
        if not isinstance(content, dict):
            continue
        parts = _list(content.get("parts"))
        for part in parts:
            response = _object(part).get("functionResponse")
            if isinstance(response, dict):
                call_id = response.get("id")
                said.append(
                    Said(
                        "tool",
                        _result_text(response.get("response")),
                        str(call_id) if call_id else None,
                        str(response.get("name") or "") or None,
                    )
                )
        if text := _gemini_text(parts):
            said.append(Said("user", text))
    return said


def _gemini_text(parts: Any) -> str:
    return "".join(str(p["text"]) for p in _list(parts) if isinstance(p, dict) and "text" in p and not _is_reasoning(p))


HISTORY_LEFT_OUT = "aoe_history_left_out"
"""The key a shared request gets: how many items of its conversation (earlier turns) were cut."""

_CONVERSATIONS: dict[str, tuple[str, Any]] = {
    "openai-chat": ("messages", lambda m: m.get("role") == "assistant"),
    "openai-responses": ("input", lambda i: i.get("type") in _RESPONSES_ANSWERS or i.get("role") == "assistant"),
    "anthropic-messages": ("messages", lambda m: m.get("role") == "assistant"),
    "gemini": ("contents", lambda c: c.get("role") == "model"),
}


def request_without_history(protocol: str, request: dict[str, Any]) -> dict[str, Any]:
    """`request` with its conversation cut to what follows the model's last turn (`new_input`'s part), the
    number cut in `HISTORY_LEFT_OUT`; cutting a cut request changes nothing."""
    key, is_answer = _CONVERSATIONS.get(protocol, (None, None))
    items = request.get(key) if key else None
    if key is None or not isinstance(items, list):
        return request
    tail, _ = _after_last(items, is_answer)
    if len(tail) == len(items):
        return request
    return {**request, key: tail, HISTORY_LEFT_OUT: len(items) - len(tail)}
