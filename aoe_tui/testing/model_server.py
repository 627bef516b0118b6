"""A scripted model provider on 127.0.0.1 that speaks all four protocols the gateway carries, as providers do.

Each model request takes the next `Turn` of the script and answers it in the
protocol the path asks for (OpenAI Chat Completions, OpenAI Responses,
Anthropic Messages, Gemini), whole or streamed as server-sent events exactly
as the provider streams it (Chat Completions' usage chunk only when asked
for with `stream_options.include_usage`). It records every request (path,
headers, body) and the exact bytes of every answer it sent, so a test can
check what crossed the gateway both ways. Hostile turns: an endless stream,
a slow trickle, a huge answer.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Awaitable, Callable, Iterator

from aiohttp import web

from aoe_tui.agents.wire.protocols import ANTHROPIC_MESSAGES, GEMINI, OPENAI_CHAT, OPENAI_RESPONSES, route


@dataclass(frozen=True)
class Turn:
    text: str | None = None
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    input_tokens: int = 1000
    output_tokens: int = 100
    cached_tokens: int = 200
    cost_usd: float | None = None  # reported as `usage.cost` (OpenAI-family), as routers do
    report_usage: bool = True
    status: int = 200
    error: str = "scripted failure"
    delay_s: float = 0.0
    chunk_delay_s: float = 0.0
    endless: bool = False  # a stream that never ends
    padding_bytes: int = 0  # a huge answer: this much extra text


@dataclass
class SeenRequest:
    path: str
    headers: dict[str, str]
    body: Any
    query: dict[str, str] = field(default_factory=dict)


class ScriptedModelServer:
    def __init__(
        self, turns: list[Turn] | None = None, final: Turn = Turn(text="Nothing left to do."), streams: bool = True
    ) -> None:
        self.turns = list(turns or [])
        self.final = final
        self.streams = streams  # False: `stream` is ignored and every answer is whole, as some local servers do
        self.requests: list[SeenRequest] = []
        # Awaited before each answer: a model that takes its time until something happened elsewhere (a race's
        # rivals reaching a milestone), rather than for a fixed delay that is too short on a slow host.
        self.hold: Callable[[], Awaitable[None]] | None = None
        self.sent: list[bytes] = []  # each answer's body exactly as written
        self._runner: web.AppRunner | None = None
        self.port = 0

    async def __aenter__(self) -> ScriptedModelServer:
        app = web.Application(client_max_size=1024**3)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.port = self._runner.addresses[0][1]
        return self

    async def __aexit__(self, *_exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base_url(self) -> str:
        """Anthropic's and Gemini's base URL convention (the client appends /v1/messages, /v1beta/...)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", errors="replace")
        self.requests.append(SeenRequest(request.path, dict(request.headers), body, dict(request.query)))
        found = route(request.method, request.path, request.headers)
        if found is None or found.kind == "models":
            return web.json_response({"error": {"message": "not scripted"}}, status=404)
        if found.kind == "count":
            return web.json_response(
                {"input_tokens": 42} if found.protocol is ANTHROPIC_MESSAGES else {"totalTokens": 42}
            )
        if self.hold is not None:
            await self.hold()
        turn = self.turns.pop(0) if self.turns else self.final
        if turn.delay_s:
            await asyncio.sleep(turn.delay_s)
        if turn.status != 200:
            return self._whole(web.Response, turn.status, found.protocol.error_body(turn.status, turn.error))
        model = found.path_model or (body or {}).get("model", "scripted")
        renderer = _RENDERERS[found.protocol.name]
        document = renderer.whole(turn, model)
        streamed = request.path.endswith(":streamGenerateContent") or (isinstance(body, dict) and body.get("stream"))
        if not streamed or not self.streams:
            return self._whole(web.Response, 200, document)
        include_usage = isinstance(body, dict) and bool((body.get("stream_options") or {}).get("include_usage"))
        return await self._stream(request, renderer.events(turn, model, include_usage), turn)

    def _whole(self, response: type[web.Response], status: int, document: Any) -> web.Response:
        data = json.dumps(document).encode()
        self.sent.append(data)
        return response(status=status, body=data, content_type="application/json")

    async def _stream(self, request: web.Request, events: Iterator[bytes], turn: Turn) -> web.StreamResponse:
        response = web.StreamResponse(
            status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        sent = bytearray()
        try:
            for chunk in events:
                sent += chunk
                await response.write(chunk)
                if turn.chunk_delay_s:
                    await asyncio.sleep(turn.chunk_delay_s)
            while turn.endless:
                await response.write(b": still thinking\n\n")
                await asyncio.sleep(0.05)
            await response.write_eof()
        except ConnectionError:
            pass
        finally:
            self.sent.append(bytes(sent))
        return response


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data) if not isinstance(data, str) else data}\n\n".encode()


def _pieces(text: str, size: int = 8) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or []


def _text(turn: Turn) -> str | None:
    if turn.padding_bytes:
        return (turn.text or "") + "x" * turn.padding_bytes
    return turn.text


class _OpenAIChat:
    @staticmethod
    def usage(turn: Turn) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "prompt_tokens": turn.input_tokens,
            "completion_tokens": turn.output_tokens,
            "total_tokens": turn.input_tokens + turn.output_tokens,
            "prompt_tokens_details": {"cached_tokens": turn.cached_tokens},
        }
        if turn.cost_usd is not None:
            usage["cost"] = turn.cost_usd
        return usage

    @classmethod
    def whole(cls, turn: Turn, model: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": _text(turn)}
        if turn.tool_calls:
            message["tool_calls"] = [
                {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                for i, (name, args) in enumerate(turn.tool_calls)
            ]
        document: dict[str, Any] = {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if turn.tool_calls else "stop"}],
        }
        if turn.report_usage:
            document["usage"] = cls.usage(turn)
        return document

    @classmethod
    def events(cls, turn: Turn, model: str, include_usage: bool) -> Iterator[bytes]:
        head = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0, "model": model}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            return _sse({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

        yield chunk({"role": "assistant", "content": ""})
        for piece in _pieces(_text(turn) or ""):
            yield chunk({"content": piece})
        for i, (name, args) in enumerate(turn.tool_calls):
            yield chunk(
                {
                    "tool_calls": [
                        {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": ""}}
                    ]
                }
            )
            for piece in _pieces(json.dumps(args), 16):
                yield chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
        yield chunk({}, "tool_calls" if turn.tool_calls else "stop")
        if include_usage and turn.report_usage:
            yield _sse({**head, "choices": [], "usage": cls.usage(turn)})
        yield _sse("[DONE]")


class _OpenAIResponses:
    @staticmethod
    def whole(turn: Turn, model: str, status: str = "completed") -> dict[str, Any]:
        output: list[dict[str, Any]] = []
        if _text(turn):
            output.append(
                {
                    "type": "message",
                    "id": "msg_0",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": _text(turn), "annotations": []}],
                }
            )
        for i, (name, args) in enumerate(turn.tool_calls):
            output.append(
                {
                    "type": "function_call",
                    "id": f"fc_{i}",
                    "call_id": f"call_{i}",
                    "name": name,
                    "arguments": json.dumps(args),
                    "status": "completed",
                }
            )
        document: dict[str, Any] = {
            "id": "resp_scripted",
            "object": "response",
            "created_at": 0,
            "status": status,
            "model": model,
            "output": output,
        }
        if turn.report_usage:
            document["usage"] = {
                "input_tokens": turn.input_tokens,
                "input_tokens_details": {"cached_tokens": turn.cached_tokens},
                "output_tokens": turn.output_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": turn.input_tokens + turn.output_tokens,
                **({"cost": turn.cost_usd} if turn.cost_usd is not None else {}),
            }
        return document

    @classmethod
    def events(cls, turn: Turn, model: str, include_usage: bool) -> Iterator[bytes]:
        """As OpenAI streams it: each output item announced and finished (`response.output_item.added` /
        `.done`, Codex reads the items from those) between `response.created` and `response.completed`."""
        sequence = iter(range(10**6))

        def event(kind: str, **fields: Any) -> bytes:
            return _sse({"type": kind, "sequence_number": next(sequence), **fields}, kind)

        final = cls.whole(turn, model)
        yield event(
            "response.created", response={**cls.whole(Turn(report_usage=False), model, "in_progress"), "output": []}
        )
        for index, item in enumerate(final["output"]):
            opened = {**item, "content": []} if item["type"] == "message" else {**item, "arguments": ""}
            yield event("response.output_item.added", output_index=index, item=opened)
            if item["type"] == "message":
                for piece in _pieces(item["content"][0]["text"]):
                    yield event(
                        "response.output_text.delta",
                        item_id=item["id"],
                        output_index=index,
                        content_index=0,
                        delta=piece,
                    )
            yield event("response.output_item.done", output_index=index, item=item)
        yield event("response.completed", response=final)


class _Anthropic:
    @staticmethod
    def usage(turn: Turn) -> dict[str, Any]:
        return {
            "input_tokens": turn.input_tokens - turn.cached_tokens,
            "cache_read_input_tokens": turn.cached_tokens,
            "cache_creation_input_tokens": 0,
            "output_tokens": turn.output_tokens,
        }

    @staticmethod
    def blocks(turn: Turn) -> list[dict[str, Any]]:
        content: list[dict[str, Any]] = [{"type": "text", "text": _text(turn)}] if _text(turn) else []
        content += [
            {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": args}
            for i, (name, args) in enumerate(turn.tool_calls)
        ]
        return content

    @classmethod
    def whole(cls, turn: Turn, model: str) -> dict[str, Any]:
        document: dict[str, Any] = {
            "id": "msg_scripted",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": cls.blocks(turn),
            "stop_reason": "tool_use" if turn.tool_calls else "end_turn",
            "stop_sequence": None,
        }
        if turn.report_usage:
            document["usage"] = cls.usage(turn)
        return document

    @classmethod
    def events(cls, turn: Turn, model: str, include_usage: bool) -> Iterator[bytes]:
        usage = cls.usage(turn) if turn.report_usage else {}
        start = {
            **cls.whole(turn, model),
            "content": [],
            "stop_reason": None,
            "usage": {**usage, "output_tokens": 1} if usage else {},
        }
        yield _sse({"type": "message_start", "message": start}, "message_start")
        for index, block in enumerate(cls.blocks(turn)):
            if block["type"] == "text":
                yield _sse(
                    {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
                    "content_block_start",
                )
                for piece in _pieces(block["text"]):
                    yield _sse(
                        {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}},
                        "content_block_delta",
                    )
            else:
                yield _sse(
                    {"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}},
                    "content_block_start",
                )
                for piece in _pieces(json.dumps(block["input"]), 16):
                    yield _sse(
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": piece},
                        },
                        "content_block_delta",
                    )
            yield _sse({"type": "content_block_stop", "index": index}, "content_block_stop")
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use" if turn.tool_calls else "end_turn", "stop_sequence": None},
        }
        if usage:
            delta["usage"] = {"output_tokens": turn.output_tokens}
        yield _sse(delta, "message_delta")
        yield _sse({"type": "message_stop"}, "message_stop")


class _Gemini:
    @staticmethod
    def usage(turn: Turn) -> dict[str, Any]:
        return {
            "promptTokenCount": turn.input_tokens,
            "candidatesTokenCount": turn.output_tokens,
            "cachedContentTokenCount": turn.cached_tokens,
            "totalTokenCount": turn.input_tokens + turn.output_tokens,
        }

    @staticmethod
    def parts(turn: Turn) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = [{"text": _text(turn)}] if _text(turn) else []
        return parts + [{"functionCall": {"name": name, "args": args}} for name, args in turn.tool_calls]

    @classmethod
    def whole(cls, turn: Turn, model: str) -> dict[str, Any]:
        document: dict[str, Any] = {
            "candidates": [
                {"content": {"role": "model", "parts": cls.parts(turn)}, "finishReason": "STOP", "index": 0}
            ],
            "modelVersion": model,
        }
        if turn.report_usage:
            document["usageMetadata"] = cls.usage(turn)
        return document

    @classmethod
    def events(cls, turn: Turn, model: str, include_usage: bool) -> Iterator[bytes]:
        parts = cls.parts(turn)
        text_pieces = _pieces(parts[0]["text"]) if parts and "text" in parts[0] else []
        calls = [part for part in parts if "functionCall" in part]
        for piece in text_pieces:
            yield _sse(
                {
                    "candidates": [{"content": {"role": "model", "parts": [{"text": piece}]}, "index": 0}],
                    "modelVersion": model,
                }
            )
        last: dict[str, Any] = {
            "candidates": [{"content": {"role": "model", "parts": calls}, "finishReason": "STOP", "index": 0}],
            "modelVersion": model,
        }
        if turn.report_usage:
            last["usageMetadata"] = cls.usage(turn)
        yield _sse(last)


_RENDERERS: dict[str, Any] = {
    OPENAI_CHAT.name: _OpenAIChat,
    OPENAI_RESPONSES.name: _OpenAIResponses,
    ANTHROPIC_MESSAGES.name: _Anthropic,
    GEMINI.name: _Gemini,
}
