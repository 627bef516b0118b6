"""A real chat-completions server on 127.0.0.1 that plays a scripted "model".

Each request consumes the next step of the script; the server records every
request (headers and body) so tests can check what the harness actually sent.
It closes each connection after one answer unless told to keep it alive, and
counts the connections it accepted.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import ssl
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Step:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


_ids = itertools.count(1)


def usage(prompt: int = 1000, completion: int = 100, cost: float | None = 0.0015, cached: int = 200) -> dict[str, Any]:
    document: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }
    if cost is not None:
        document["cost"] = cost
    return document


def tool_calls(
    *calls: tuple[str, dict[str, Any]], text: str | None = None, cost: float | None = 0.0015, delay_s: float = 0.0
) -> Step:
    """A reply calling tools: each call is (tool name, arguments)."""
    message = {
        "role": "assistant",
        "content": text,
        "reasoning": "Next I will act on the host.",
        "tool_calls": [
            {
                "id": f"call-{next(_ids)}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for name, arguments in calls
        ],
    }
    return Step(body=_completion(message, "tool_calls", cost), delay_s=delay_s)


def bash(command: str, description: str = "", **extra: Any) -> tuple[str, dict[str, Any]]:
    return "bash", {"command": command, "description": description, **extra}


def final(text: str, cost: float | None = 0.001) -> Step:
    return Step(body=_completion({"role": "assistant", "content": text}, "stop", cost))


def error(status: int, message: str, retry_after: str | None = None) -> Step:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return Step(status=status, body={"error": {"message": message, "code": status}}, headers=headers)


def _completion(message: dict[str, Any], finish_reason: str, cost: float | None) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": usage(cost=cost),
    }


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class ScriptedProvider:
    def __init__(self, script: list[Step], keep_alive: bool = False, tls: ssl.SSLContext | None = None) -> None:
        self.script = list(script)
        self.keep_alive = keep_alive
        self.tls = tls
        self.requests: list[Request] = []
        self.connections = 0
        self._server: asyncio.base_events.Server | None = None

    async def __aenter__(self) -> ScriptedProvider:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        return self

    async def __aexit__(self, *_exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{port}/v1"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while await self._answer_one(reader, writer) and self.keep_alive:
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the harness gave up on this request (timeout or SIGTERM)
        finally:
            writer.close()

    async def _answer_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Answer the next request on this connection; False when the client closed it instead."""
        request_line = (await reader.readline()).decode().split()
        if not request_line:
            return False
        headers: dict[str, str] = {}
        while line := (await reader.readline()).decode().strip():
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        body = json.loads(await reader.readexactly(int(headers.get("content-length", "0"))) or b"{}")
        self.requests.append(Request(request_line[1], headers, body))
        step = self.script.pop(0) if self.script else final("Nothing left to do.")
        if step.delay_s:
            await asyncio.sleep(step.delay_s)
        payload = json.dumps(step.body).encode()
        head = [
            f"HTTP/1.1 {step.status} Scripted",
            "Content-Type: application/json",
            f"Content-Length: {len(payload)}",
            *([] if self.keep_alive else ["Connection: close"]),
            *(f"{k}: {v}" for k, v in step.headers.items()),
        ]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
        await writer.drain()
        return True
