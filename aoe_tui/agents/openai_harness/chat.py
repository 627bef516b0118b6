"""One model round against a chat-completions endpoint, with bounded retries.

Transient failures (429, 5xx, no answer in time, dropped connection) are
retried with exponential backoff, honouring Retry-After; anything else (401,
402, 403, 404, 400) cannot get better by waiting and fails at once. Every
message that leaves this module has been through the scrubber, because some
providers quote the request's Authorization header back in their errors.

The transport is one httpx client for the whole run: it keeps the connection
alive between rounds, honours HTTP(S)_PROXY / NO_PROXY and SSL_CERT_FILE, and
is cancellable at every await, so the controller's SIGTERM stops the harness at
once even in the middle of a five-minute reasoning call. The request timeout
bounds the whole exchange (connect, send, wait, read), not each socket read.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from aoe_tui.agents.providers import ProviderConfig
from aoe_tui.agents.openai_harness.scrub import Scrubber
from aoe_tui.agents.wire import openai_chat
from aoe_tui.agents.wire.sse import EventTooLarge, SSEDecoder
from aoe_tui.agents.wire.usage import TokenUsage, arguments_text

_TRANSIENT_STATUSES = {408, 409, 425, 429}
_NO_EFFORT = {"", "none", "unavailable"}
_DETAIL_LIMIT = 300
# Fields of an assistant message that some providers need echoed back to keep
# reasoning continuous across tool calls (DeepSeek, OpenRouter).
_ECHOED_FIELDS = ("reasoning", "reasoning_content", "reasoning_details")


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    first_delay_s: float = 2.0
    max_delay_s: float = 60.0
    request_timeout_s: float = 300.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        backoff = min(self.first_delay_s * 2 ** (attempt - 1), self.max_delay_s)
        return min(max(backoff, retry_after or 0.0), self.max_delay_s)


class ProviderError(Exception):
    def __init__(self, detail: str, status: int | None, transient: bool, retry_after: float | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.status = status
        self.transient = transient
        self.retry_after = retry_after


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ChatReply:
    content: str | None
    reasoning: str | None
    tool_calls: list[ToolCall]
    usage: TokenUsage
    finish_reason: str | None
    echoed: dict[str, Any] = field(default_factory=dict)

    def as_request_message(self) -> dict[str, Any]:
        """The assistant message to send back in the next request's history."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content or ""}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        message.update(self.echoed)
        return message


RetryListener = Callable[[int, ProviderError, float], None]


class ChatClient:
    def __init__(
        self,
        provider: ProviderConfig,
        model: str,
        reasoning_effort: str,
        policy: RetryPolicy,
        scrub: Scrubber,
        on_retry: RetryListener | None = None,
        stream: bool = False,
    ) -> None:
        self.provider = provider
        self.model = model
        self.reasoning_effort = reasoning_effort
        self.policy = policy
        self.stream = stream
        self._url = provider.base_url.rstrip("/") + "/chat/completions"
        self._scrub = scrub
        self._on_retry = on_retry or (lambda _attempt, _error, _delay: None)
        # No per-operation timeouts: the policy's request timeout bounds each exchange as a whole.
        # The system's CA store (as curl and OpenSSL use it, SSL_CERT_FILE included), not httpx's certifi copy.
        self._http = httpx.AsyncClient(
            timeout=None, verify=ssl.create_default_context(), headers={"Accept": "application/json"}
        )

    async def aclose(self) -> None:
        """Close the kept-alive connection (the run is over)."""
        await self._http.aclose()

    def request_body(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "tools": tools, "tool_choice": "auto"}
        if self.reasoning_effort.strip().lower() not in _NO_EFFORT:
            body["reasoning_effort"] = self.reasoning_effort
        if self.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        """One round; raises ProviderError once retries are used up or the failure is permanent."""
        body = self.request_body(messages, tools)
        attempt = 1
        while True:
            try:
                return await self._attempt(body)
            except ProviderError as error:
                if not error.transient or attempt >= self.policy.max_attempts:
                    if error.transient:
                        error.detail = f"{error.detail} (gave up after {attempt} attempts)"
                    raise
                delay = self.policy.delay(attempt, error.retry_after)
                self._on_retry(attempt, error, delay)
                await asyncio.sleep(delay)
                attempt += 1

    async def _attempt(self, body: dict[str, Any]) -> ChatReply:
        headers = {"Authorization": f"Bearer {self.provider.api_key}"} if self.provider.api_key else {}
        try:
            async with asyncio.timeout(self.policy.request_timeout_s):
                async with self._http.stream("POST", self._url, json=body, headers=headers) as response:
                    if response.status_code == 200 and response.headers.get("content-type", "").startswith(
                        "text/event-stream"
                    ):
                        document: Any = await _folded_stream(response)
                    else:
                        content = await response.aread()
                        if response.status_code != 200:
                            raise self._http_error(response.status_code, response.headers, content)
                        document = json.loads(content)
        except TimeoutError:
            raise self._no_answer(f"no response within {self.policy.request_timeout_s:g} s") from None
        except (httpx.HTTPError, httpx.InvalidURL, EventTooLarge) as failure:  # refused, reset, TLS, bad URL, reply
            raise self._no_answer(" ".join((str(failure) or type(failure).__name__).split())) from None
        except ValueError:
            raise ProviderError(f"{self.provider.name}: reply is not JSON", 200, transient=True) from None
        if isinstance(document, dict) and document.get("error"):
            raise self._error_in_body(document["error"])
        return self._parse(document)

    def _no_answer(self, why: str) -> ProviderError:
        """No HTTP response at all: always worth another attempt."""
        return ProviderError(self._scrub(f"{self.provider.name}: {why}"), None, transient=True)

    def _http_error(self, status: int, headers: httpx.Headers, content: bytes) -> ProviderError:
        transient = status in _TRANSIENT_STATUSES or status >= 500
        detail = self._scrub(f"{self.provider.name}: HTTP {status}: {_error_message(content)}")
        return ProviderError(detail, status, transient, parse_retry_after(headers.get("retry-after")))

    def _error_in_body(self, error: Any) -> ProviderError:
        """A 200 whose body is an error (routers do this when the upstream model fails mid-way)."""
        code = error.get("code") if isinstance(error, dict) else None
        status = code if isinstance(code, int) else None
        transient = status is None or status in _TRANSIENT_STATUSES or status >= 500
        message = error.get("message") if isinstance(error, dict) else error
        return ProviderError(self._scrub(f"{self.provider.name}: {_clip(str(message))}"), status, transient)

    def _parse(self, document: Any) -> ChatReply:
        try:
            choice = document["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            raise ProviderError(f"{self.provider.name}: reply has no choices[0].message", 200, transient=True) from None
        calls = [
            ToolCall(
                str(c.get("id") or f"call-{index}"),
                str(c["function"].get("name", "")),
                arguments_text(c["function"].get("arguments")),
            )
            for index, c in enumerate(message.get("tool_calls") or [])
            if isinstance(c.get("function"), dict)
        ]
        reasoning = message.get("reasoning") or message.get("reasoning_content")
        echoed = {name: message[name] for name in _ECHOED_FIELDS if message.get(name)}
        return ChatReply(
            message.get("content"),
            reasoning if isinstance(reasoning, str) else None,
            calls,
            openai_chat.body_usage(document) or TokenUsage(),
            choice.get("finish_reason"),
            echoed,
        )


async def _folded_stream(response: httpx.Response) -> dict[str, Any]:
    """A streamed reply read to its end and reassembled into the document it stands for (wire.openai_chat)."""
    decoder, fold = SSEDecoder(), openai_chat.Fold()
    async for chunk in response.aiter_raw():
        for event in decoder.feed(chunk):
            fold.add(event)
    for event in decoder.close():
        fold.add(event)
    return fold.document()


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After as seconds: either a number or an HTTP date."""
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        return max(email.utils.parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError):
        return None


def _error_message(body: bytes) -> str:
    try:
        document = json.loads(body)
        error = document.get("error", document) if isinstance(document, dict) else document
        text = error.get("message", error) if isinstance(error, dict) else error
    except ValueError:
        text = body.decode("utf-8", errors="replace")
    return _clip(str(text)) or "no detail"


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _DETAIL_LIMIT else flat[: _DETAIL_LIMIT - 3] + "..."
