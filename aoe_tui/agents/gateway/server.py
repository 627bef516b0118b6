"""The gateway's HTTP side: aiohttp serves the agents on 127.0.0.1 and dials the providers.

Both sides are aiohttp, whose HTTP parser is compiled: a streamed answer is many small chunks, and the
per-chunk cost of a pure-Python parser (httpx's h11) halved the tokens a second an agent could receive
(`benchmarks/gateway.py`).

One request, start to end: route it (wire.protocols), find the agent by the
token it presents (in whichever header its SDK uses), hold it to its rate,
concurrency and budget, forward it with the provider's key in the provider's
header, stream the answer back chunk by chunk while a copy is read for usage,
charge the round through the referee's `Meter`, and append the exchange to the
agent's model-call record. Every refusal is written in the protocol's own
error shape, so each harness reports it as it would its provider's.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit
from typing import Any
from collections.abc import Callable

from aiohttp import ClientError, ClientResponse, ClientSession, ClientTimeout, TCPConnector, web

from aoe_tui.agents.gateway.call_log import ModelCallLog
from aoe_tui.agents.gateway.limits import GatewayLimits, TokenBucket
from aoe_tui.agents.gateway.metering import Meter, charge_for
from aoe_tui.agents.providers import ProviderConfig
from aoe_tui.agents.wire.protocols import Route, WireProtocol, model_listing, route
from aoe_tui.agents.wire.sse import EventTooLarge, SSEDecoder
from aoe_tui.agents.wire.usage import TokenUsage
from aoe_tui.store.match_layout import AgentPaths

TOKEN_PREFIX = "aoe-gw-"
LOOPBACK = "127.0.0.1"
# What a client's request may tell the provider besides its body; its credentials never pass.
_FORWARDED_HEADERS = {"content-type", "accept", "anthropic-version", "anthropic-beta", "openai-beta", "user-agent"}
_RETURNED_HEADERS = {"content-type", "retry-after", "request-id", "x-request-id"}
_AUTH_HEADERS = {"openai": "Authorization", "anthropic": "x-api-key", "gemini": "x-goog-api-key"}
_LINGER_S = 1.0  # how long the unread rest of a refused request body is drained


@dataclass
class GatewayAgent:
    agent_id: str
    model: str
    provider: ProviderConfig | None
    token: str
    port: int  # its own listening port: its token is good there only
    calls: ModelCallLog
    bucket: TokenBucket
    in_flight: int = 0
    rounds_in_flight: int = 0
    exchanges: int = 0


class Refusal(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Exchange:
    """What the record keeps of one exchange."""

    status: int = 0
    streamed: bool = False
    answer: Any = None
    usage: TokenUsage | None = None
    cut: str | None = None
    notes: list[str] = field(default_factory=list)


class Gateway:
    def __init__(
        self,
        meter: Meter,
        limits: GatewayLimits = GatewayLimits(),
        elapsed_ms: Callable[[], int] | None = None,
    ) -> None:
        self.meter = meter
        self.limits = limits
        self._elapsed_ms = elapsed_ms or (lambda: 0)
        self._agents: dict[str, GatewayAgent] = {}
        self._by_token: dict[str, GatewayAgent] = {}
        self._runner: web.AppRunner | None = None
        self._http: ClientSession | None = None
        self._proxies: dict[str, str | None] = {}
        self._records: asyncio.Queue[tuple[GatewayAgent, dict[str, Any]] | None] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None

    # -- life ----------------------------------------------------------------------------------------

    async def start(self) -> None:
        app = web.Application(client_max_size=self.limits.max_request_bytes)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        # No access log: the model-call record is the log, and a hostile client's burst must not flood stderr.
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, lingering_time=_LINGER_S)
        await self._runner.setup()
        self._writer = asyncio.create_task(self._write_records())
        self._http = ClientSession(
            connector=TCPConnector(limit=64, limit_per_host=16),
            timeout=ClientTimeout(sock_connect=self.limits.connect_s, sock_read=self.limits.first_byte_s),
            auto_decompress=False,  # the bytes read for usage are the bytes forwarded
            trust_env=False,  # the proxy is looked up once per provider (`_proxy`), not in a thread per request
            skip_auto_headers=("User-Agent",),  # the client's own, when it sent one
        )

    def _proxy(self, base_url: str) -> str | None:
        """The operator's proxy for a provider (HTTPS_PROXY, HTTP_PROXY, NO_PROXY), looked up once per base URL."""
        if base_url not in self._proxies:
            parts = urlsplit(base_url)
            bypass = parts.hostname is None or urllib.request.proxy_bypass(parts.hostname)
            self._proxies[base_url] = None if bypass else urllib.request.getproxies().get(parts.scheme)
        return self._proxies[base_url]

    def url(self, agent_id: str) -> str:
        """The base URL agent `agent_id` is given (each protocol's path goes after it, /v1 included)."""
        return f"http://{LOOPBACK}:{self._agents[agent_id].port}"

    def port(self, agent_id: str) -> int:
        return self._agents[agent_id].port

    async def close(self) -> None:
        """Stop serving, drop the upstream connections, put every model-call record back in place."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()
        http, self._http = self._http, None
        if http is not None:
            await http.close()
        writer, self._writer = self._writer, None
        if writer is not None:
            self._records.put_nowait(None)  # after every record already queued
            await writer
        for agent in self._agents.values():
            agent.calls.close()

    async def add_agent(self, agent_id: str, model: str, provider: ProviderConfig | None, agent_directory: Path) -> str:
        """Register an agent and open its own port; returns its token, good for this gateway (this match), this
        agent and this port only: a token that leaked to another agent is refused at that agent's port."""
        if self._runner is None:
            raise RuntimeError("the gateway has not started")
        site = web.TCPSite(self._runner, LOOPBACK, 0, backlog=256)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]  # aiohttp keeps no public port
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        known = [provider.api_key] if provider is not None else []
        agent = GatewayAgent(
            agent_id,
            model,
            provider,
            token,
            port,
            ModelCallLog(
                AgentPaths(agent_directory).model_calls, known, self.limits.record_field_chars, self.limits.record_bytes
            ),
            TokenBucket(self.limits.rate_per_s, self.limits.burst),
        )
        self._agents[agent_id] = agent
        self._by_token[token] = agent
        return token

    # -- one request ---------------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        found = route(request.method, request.path, request.headers)
        if found is None:
            return web.json_response(
                {"error": {"message": f"the gateway does not carry {request.method} {request.path}"}}, status=404
            )
        agent = self._agent_of(request)
        if agent is None:
            return _refusal(found.protocol, 401, "unknown or missing gateway token")
        if not agent.bucket.take():
            return _refusal(found.protocol, 429, "gateway rate limit: too many requests from this agent")
        if agent.in_flight >= self.limits.concurrent_per_agent:
            return _refusal(found.protocol, 429, "gateway limit: too many requests of this agent at once")
        if found.kind == "models":
            owner = agent.provider.name if agent.provider else "none"
            return web.json_response(model_listing(found.protocol, agent.model, owner))
        agent.in_flight += 1
        try:
            return await self._exchange(request, found, agent)
        except Refusal as refusal:
            return _refusal(found.protocol, refusal.status, refusal.message)
        except Exception as error:  # noqa: BLE001  (a bug of ours is the arena's failure, recorded, never the player's)
            detail = f"the model gateway failed: {type(error).__name__}: {error}"[:500]
            self.meter.gateway_failed(agent.agent_id, detail)
            return _refusal(found.protocol, 500, detail)
        finally:
            agent.in_flight -= 1

    def _agent_of(self, request: web.Request) -> GatewayAgent | None:
        presented = set()
        authorization = request.headers.get("Authorization", "")
        if authorization[:7].lower() == "bearer ":
            presented.add(authorization[7:].strip())
        for name in ("x-api-key", "x-goog-api-key"):
            if name in request.headers:
                presented.add(request.headers[name].strip())
        if "key" in request.query:
            presented.add(request.query["key"])
        if len(presented) != 1:  # none, or two different credentials: never guess which one is meant
            return None
        agent = self._by_token.get(presented.pop())
        arrived_at = request.transport.get_extra_info("sockname") if request.transport is not None else None
        if agent is None or not arrived_at or arrived_at[1] != agent.port:
            return None
        return agent

    async def _exchange(self, request: web.Request, found: Route, agent: GatewayAgent) -> web.StreamResponse:
        protocol = found.protocol
        body = await self._read_body(request)
        try:
            document = json.loads(body)
        except ValueError:
            raise Refusal(400, "the request body is not JSON") from None
        if not isinstance(document, dict):
            raise Refusal(400, "the request body is not a JSON object")
        model = found.path_model or document.get("model")
        if model != agent.model:
            raise Refusal(400, f"model {str(model)[:200]!r} is not this agent's model ({agent.model})")
        provider = agent.provider
        if provider is None:
            raise Refusal(503, f"no provider is configured for model {agent.model}")
        base_url = provider.base_urls.get(protocol.family)
        if base_url is None:
            raise Refusal(501, f"provider {provider.name} has no {protocol.family}_base_url ({protocol.name})")
        metered = found.kind == "round"
        if metered:
            if (reason := self.meter.refusal(agent.agent_id, agent.rounds_in_flight)) is not None:
                self.meter.refused_over_budget(agent.agent_id, reason)
                raise Refusal(402, reason)
            agent.rounds_in_flight += 1
        started_ms, started = self._elapsed_ms(), time.monotonic()
        exchange = Exchange()
        try:
            response = await self._forward(request, found, provider, base_url, body, exchange)
        finally:
            if metered:
                agent.rounds_in_flight -= 1
                if 200 <= exchange.status < 300:
                    self.meter.charge(agent.agent_id, charge_for(exchange.usage, provider, agent.model))
            if found.kind != "count":
                self._record(agent, found, document, exchange, started_ms, time.monotonic() - started)
        return response

    async def _read_body(self, request: web.Request) -> bytes:
        limit = self.limits.max_request_bytes
        if request.content_length is not None and request.content_length > limit:
            raise Refusal(413, f"request body over {limit} bytes")
        chunks, size = [], 0
        try:
            async with asyncio.timeout(self.limits.request_read_s):
                while chunk := await request.content.read(64 * 1024):
                    size += len(chunk)
                    if size > limit:
                        raise Refusal(413, f"request body over {limit} bytes")
                    chunks.append(chunk)
        except TimeoutError:
            raise Refusal(408, f"request body not received within {self.limits.request_read_s:g} s") from None
        return b"".join(chunks)

    async def _forward(
        self,
        request: web.Request,
        found: Route,
        provider: ProviderConfig,
        base_url: str,
        body: bytes,
        exchange: Exchange,
    ) -> web.StreamResponse:
        assert self._http is not None
        headers = {name: value for name, value in request.headers.items() if name.lower() in _FORWARDED_HEADERS}
        headers["Accept-Encoding"] = "identity"  # the bytes read for usage are the bytes forwarded
        if provider.api_key:
            family = found.protocol.family
            headers[_AUTH_HEADERS[family]] = f"Bearer {provider.api_key}" if family == "openai" else provider.api_key
        query = "&".join(f"{k}={v}" for k, v in request.query.items() if k != "key")
        url = found.upstream_url(base_url, request.path, query)
        deadline = asyncio.get_running_loop().time() + self.limits.exchange_s
        try:
            async with asyncio.timeout_at(deadline):
                upstream = await self._http.post(
                    url, data=body, headers=headers, allow_redirects=False, proxy=self._proxy(base_url)
                )
        except TimeoutError:
            raise Refusal(504, f"provider {provider.name}: no answer within {self.limits.exchange_s:g} s") from None
        except (ClientError, ValueError) as error:  # refused, reset, TLS, a bad URL
            detail = " ".join((str(error) or type(error).__name__).split())[:300]
            exchange.status, exchange.answer = 502, detail
            raise Refusal(502, f"provider {provider.name} unreachable: {detail}") from None
        exchange.status = upstream.status
        try:
            content_type = upstream.headers.get("content-type", "")
            returned = {k: v for k, v in upstream.headers.items() if k.lower() in _RETURNED_HEADERS}
            if upstream.status == 200 and content_type.startswith("text/event-stream"):
                return await self._stream(request, found.protocol, upstream, returned, exchange, deadline)
            return await self._whole(found.protocol, upstream, returned, exchange, deadline)
        finally:
            upstream.release()

    async def _whole(
        self,
        protocol: WireProtocol,
        upstream: ClientResponse,
        returned: dict[str, str],
        exchange: Exchange,
        deadline: float,
    ) -> web.Response:
        chunks, size = [], 0
        try:
            async with asyncio.timeout_at(deadline):
                async for chunk in upstream.content.iter_any():
                    size += len(chunk)
                    if size > self.limits.max_response_bytes:
                        exchange.status, exchange.cut = 502, "answer too large"
                        raise Refusal(502, f"the provider's answer is over {self.limits.max_response_bytes} bytes")
                    chunks.append(chunk)
        except TimeoutError:
            exchange.status, exchange.cut = 504, "answer not complete in time"
            raise Refusal(504, f"the provider's answer took over {self.limits.exchange_s:g} s") from None
        except ClientError as error:
            exchange.status, exchange.cut = 502, "provider connection broke"
            raise Refusal(502, f"the provider's answer broke off: {type(error).__name__}") from None
        data = b"".join(chunks)
        try:
            exchange.answer = json.loads(data)
        except ValueError:
            exchange.answer = data.decode("utf-8", errors="replace")
        if 200 <= upstream.status < 300:
            exchange.usage = protocol.wire.body_usage(exchange.answer)
        return web.Response(status=upstream.status, body=data, headers=returned)

    async def _stream(
        self,
        request: web.Request,
        protocol: WireProtocol,
        upstream: ClientResponse,
        returned: dict[str, str],
        exchange: Exchange,
        deadline: float,
    ) -> web.StreamResponse:
        exchange.streamed = True
        response = web.StreamResponse(status=200, headers={**returned, "Cache-Control": "no-cache"})
        await response.prepare(request)
        # Forwarding does nothing but copy: the copy kept (bounded like the answer) is read once the stream ended,
        # so the agent's tokens never wait for the referee's parsing.
        copy = bytearray()
        try:
            async with asyncio.timeout_at(deadline):
                async for chunk in upstream.content.iter_any():
                    room = self.limits.max_response_bytes - len(copy)
                    if len(chunk) > room:  # what fits is passed on, then the stream ends there
                        await response.write(chunk[:room])
                        copy += chunk[:room]
                        exchange.cut = f"stream over {self.limits.max_response_bytes} bytes, cut"
                        break
                    await response.write(chunk)
                    copy += chunk
        except TimeoutError:
            exchange.cut = f"stream still open after {self.limits.exchange_s:g} s, cut"
        except ConnectionError:
            exchange.cut = "the client went away"
        except ClientError as error:
            exchange.cut = f"the provider's stream broke off ({type(error).__name__})"
        if exchange.cut != "the client went away":
            try:
                await response.write_eof()
            except ConnectionError:
                pass
        exchange.usage, exchange.answer, too_large = _fold_stream(protocol, bytes(copy))
        exchange.cut = exchange.cut or too_large
        return response

    def _record(
        self, agent: GatewayAgent, found: Route, request: dict[str, Any], exchange: Exchange, at_ms: int, seconds: float
    ) -> None:
        agent.exchanges += 1
        usage = exchange.usage
        tool_calls = found.protocol.wire.tool_calls(exchange.answer) if isinstance(exchange.answer, dict) else []
        record = {
            "sequence": agent.exchanges,
            "agent": agent.agent_id,
            "protocol": found.protocol.name,
            "model": agent.model,
            "provider": agent.provider.name if agent.provider else None,
            "elapsed_ms": at_ms,
            "duration_ms": round(seconds * 1000),
            "status": exchange.status,
            "streamed": exchange.streamed,
            "cut": exchange.cut,
            "usage": None
            if usage is None
            else {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cached_tokens": usage.cached_tokens,
                "provider_cost_usd": usage.cost_usd,
            },
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in tool_calls],
            "request": request,
            "response": exchange.answer,
        }
        self._records.put_nowait((agent, record))

    async def _write_records(self) -> None:
        """Append each exchange's record, in order, after its answer went out: bounding, redacting and writing a
        record is the slowest part of an exchange, and the agent need not wait for it."""
        while (item := await self._records.get()) is not None:
            agent, record = item
            try:
                agent.calls.append(record)
            except OSError:
                pass  # a full disk loses the record, never the match: the event log has the charge


def _fold_stream(protocol: WireProtocol, data: bytes) -> tuple[TokenUsage | None, Any, str | None]:
    """The stream's usage and the document it stands for; and why the rest was not read, when an event was
    longer than an event may be."""
    decoder, fold, cut = SSEDecoder(), protocol.wire.Fold(), None
    try:
        for event in [*decoder.feed(data), *decoder.close()]:
            fold.add(event)
    except EventTooLarge as error:
        cut = f"{error}, cut"
    return fold.usage, fold.document(), cut


def _refusal(protocol: WireProtocol, status: int, message: str) -> web.Response:
    return web.json_response(protocol.error_body(status, message), status=status)
