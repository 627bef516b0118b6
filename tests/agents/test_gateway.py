"""The model gateway on loopback, in front of a scripted provider speaking all four protocols.

Per protocol, streamed and not: the agent receives the provider's bytes exactly, the provider gets the
operator's key in its own header and never the agent's token, the referee is charged what the provider
reported (its own cost, else the price table's), a round without usage is charged with unknown tokens
(never 0), a spent budget is refused in the protocol's own error shape, and model_calls.jsonl keeps the
reassembled exchange without the key. Token counting and model listings cost nothing.
"""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import AsyncIterator

import httpx
import pytest

from aoe_tui.store.match_layout import MODEL_CALLS_NAME as MODEL_CALLS
from aoe_tui.store.model_calls import read_model_calls
from aoe_tui.agents.gateway.limits import GatewayLimits
from aoe_tui.agents.gateway.metering import Charge
from aoe_tui.agents.gateway.server import Gateway
from aoe_tui.agents.providers import Price, ProviderConfig
from aoe_tui.testing.model_server import ScriptedModelServer, Turn

KEY = "sk-live-DISTINCTIVE-123456"
MODEL = "m1"
PRICE = Price(input=3.0, output=15.0, cached_input=0.3)  # USD per million tokens
PROTOCOLS = ("openai-chat", "openai-responses", "anthropic-messages", "gemini")
TEXT = "Grüße, 世界 — done."
TURN = Turn(
    text=TEXT,
    tool_calls=(("bash", {"command": "ls -la"}),),
    input_tokens=1000,
    output_tokens=100,
    cached_tokens=200,
    cost_usd=0.0042,
)
# 800 uncached input tokens at 3 USD/M, 200 cached at 0.3, 100 output at 15: 2400 + 60 + 1500 µUSD.
PRICE_TABLE_COST = 3960
PROVIDER_COST = 4200  # 0.0042 USD, reported by the OpenAI family only (as routers do)
UPSTREAM_AUTH = {  # the header the provider must get the key in, and what it must hold
    "openai-chat": ("Authorization", f"Bearer {KEY}"),
    "openai-responses": ("Authorization", f"Bearer {KEY}"),
    "anthropic-messages": ("x-api-key", KEY),
    "gemini": ("x-goog-api-key", KEY),
}
TOOL_CALL_ID = {
    "openai-chat": "call_0",
    "openai-responses": "call_0",
    "anthropic-messages": "toolu_0",
    "gemini": "call-0",
}


@dataclass
class RecordingMeter:
    refuse: dict[str, str] = field(default_factory=dict)  # agent -> why its budget is spent
    charges: list[tuple[str, Charge]] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)

    def refusal(self, agent_id: str, rounds_in_flight: int) -> str | None:
        return self.refuse.get(agent_id)

    def charge(self, agent_id: str, charge: Charge) -> None:
        self.charges.append((agent_id, charge))

    def refused_over_budget(self, agent_id: str, reason: str) -> None:
        self.refused.append((agent_id, reason))

    def gateway_failed(self, agent_id: str, detail: str) -> None:
        self.failures.append((agent_id, detail))

    def of(self, agent_id: str) -> list[Charge]:
        return [charge for agent, charge in self.charges if agent == agent_id]


@dataclass
class Rig:
    upstream: ScriptedModelServer
    gateway: Gateway
    meter: RecordingMeter
    token: str
    client: httpx.AsyncClient
    directory: Path  # the agent's folder, where its model_calls.jsonl is

    def records(self) -> list[dict[str, Any]]:
        return read_model_calls(self.directory / MODEL_CALLS)


def provider_for(upstream: ScriptedModelServer, key: str | None = KEY) -> ProviderConfig:
    urls = {"openai": upstream.openai_base_url, "anthropic": upstream.base_url, "gemini": upstream.base_url}
    return ProviderConfig("scripted", key, urls, {"m*": PRICE})


@asynccontextmanager
async def running(
    tmp_path: Path,
    turns: list[Turn] | None = None,
    limits: GatewayLimits = GatewayLimits(),
    final: Turn = Turn(text="Nothing left to do."),
) -> AsyncIterator[Rig]:
    """A scripted provider, a gateway in front of it with agent a1 (model m1) registered, and a client."""
    async with ScriptedModelServer(turns, final) as upstream:
        meter = RecordingMeter()
        gateway = Gateway(meter, limits)
        await gateway.start()
        directory = tmp_path / "agents" / "a1"
        token = await gateway.add_agent("a1", MODEL, provider_for(upstream), directory)
        try:
            async with httpx.AsyncClient(base_url=gateway.url("a1"), timeout=20) as client:
                yield Rig(upstream, gateway, meter, token, client, directory)
        finally:
            await gateway.close()


def model_request(
    protocol: str, streamed: bool, token: str, model: str = MODEL
) -> tuple[str, dict[str, Any], dict[str, str]]:
    """Path (with query), JSON body and headers of one model round, as each protocol's SDK sends it."""
    if protocol == "openai-chat":
        body: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": "hi"}]}
        if streamed:
            body |= {"stream": True, "stream_options": {"include_usage": True}}
        return "/v1/chat/completions", body, {"Authorization": f"Bearer {token}"}
    if protocol == "openai-responses":
        return (
            "/v1/responses",
            {"model": model, "input": "hi", "stream": streamed},
            {"Authorization": f"Bearer {token}"},
        )
    if protocol == "anthropic-messages":
        body = {"model": model, "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}], "stream": streamed}
        return "/v1/messages", body, {"x-api-key": token, "anthropic-version": "2023-06-01"}
    action = "streamGenerateContent?alt=sse" if streamed else "generateContent"
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    return f"/v1beta/models/{model}:{action}", body, {"x-goog-api-key": token}


async def ask(rig: Rig, protocol: str, streamed: bool, token: str | None = None, model: str = MODEL) -> httpx.Response:
    path, body, headers = model_request(protocol, streamed, rig.token if token is None else token, model)
    return await rig.client.post(path, json=body, headers=headers)


def answer_text(protocol: str, document: dict[str, Any]) -> str:
    """The model's text in a (reassembled) answer, read by hand from each protocol's shape."""
    if protocol == "openai-chat":
        return document["choices"][0]["message"]["content"]
    if protocol == "openai-responses":
        return document["output"][0]["content"][0]["text"]
    if protocol == "anthropic-messages":
        return document["content"][0]["text"]
    return document["candidates"][0]["content"]["parts"][0]["text"]


def error_of(protocol: str, response: httpx.Response) -> tuple[str, str]:
    """(kind, message) of a refusal, read from the protocol's own error shape."""
    document = response.json()
    if protocol.startswith("openai"):
        return document["error"]["type"], document["error"]["message"]
    if protocol == "anthropic-messages":
        assert document["type"] == "error"
        return document["error"]["type"], document["error"]["message"]
    assert document["error"]["code"] == response.status_code
    return document["error"]["status"], document["error"]["message"]


# -- a round, every protocol, streamed and not --------------------------------------------------------------


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_round_crosses_the_gateway_byte_for_byte_and_is_charged_and_recorded(tmp_path, protocol, streamed):
    async with running(tmp_path, [TURN]) as rig:
        response = await ask(rig, protocol, streamed)
        assert response.status_code == 200, response.text
        assert len(rig.upstream.sent) == 1
        assert response.content == rig.upstream.sent[-1]
        if streamed:
            assert response.headers["content-type"].startswith("text/event-stream")
            assert response.content.count(b"\n\n") > 3  # pieces of a stream, not one document
        else:
            assert answer_text(protocol, json.loads(response.content)) == TEXT

        (seen,) = rig.upstream.requests
        header, value = UPSTREAM_AUTH[protocol]
        assert seen.headers[header] == value
        for other in {"Authorization", "x-api-key", "x-goog-api-key"} - {header}:
            assert other not in seen.headers
        assert rig.token not in json.dumps(seen.headers) + json.dumps(seen.query) + json.dumps(seen.body)
        assert "key" not in seen.query
        if protocol == "gemini" and streamed:
            assert seen.query == {"alt": "sse"}

        cost = PROVIDER_COST if protocol.startswith("openai") else PRICE_TABLE_COST
        assert rig.meter.charges == [("a1", Charge(1000, 100, cost, 1))]

    (record,) = rig.records()
    assert record["protocol"] == protocol
    assert record["agent"] == "a1" and record["model"] == MODEL and record["provider"] == "scripted"
    assert (record["status"], record["streamed"], record["cut"]) == (200, streamed, None)
    assert record["usage"] == {
        "input_tokens": 1000,
        "output_tokens": 100,
        "cached_tokens": 200,
        "provider_cost_usd": 0.0042 if protocol.startswith("openai") else None,
    }
    assert record["tool_calls"] == [
        {"id": TOOL_CALL_ID[protocol], "name": "bash", "arguments": '{"command": "ls -la"}'}
    ]
    assert answer_text(protocol, record["response"]) == TEXT  # a stream is kept reassembled, not as its events
    assert record["request"]["contents" if protocol == "gemini" else "model"] is not None


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_round_without_usage_is_charged_with_unknown_tokens_never_zero(tmp_path, protocol, streamed):
    async with running(tmp_path, [Turn(text="hi", report_usage=False)]) as rig:
        response = await ask(rig, protocol, streamed)
        assert response.status_code == 200
        assert response.content == rig.upstream.sent[-1]
        assert rig.meter.charges == [("a1", Charge(None, None, None, 1))]
    (record,) = rig.records()
    assert record["usage"] is None


async def test_a_chat_stream_not_asking_for_usage_is_a_round_of_unknown_tokens(tmp_path):
    async with running(tmp_path, [TURN]) as rig:
        body = {"model": MODEL, "messages": [], "stream": True}
        response = await rig.client.post(
            "/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {rig.token}"}
        )
        assert response.status_code == 200 and response.content == rig.upstream.sent[-1]
        assert b'"usage"' not in response.content
        assert rig.meter.charges == [("a1", Charge(None, None, None, 1))]


async def test_without_a_price_and_without_a_reported_cost_the_cost_is_unknown(tmp_path):
    async with ScriptedModelServer([TURN]) as upstream:
        meter = RecordingMeter()
        gateway = Gateway(meter)
        await gateway.start()
        try:
            provider = ProviderConfig("scripted", KEY, {"anthropic": upstream.base_url}, {"other-*": PRICE})
            token = await gateway.add_agent("a1", MODEL, provider, tmp_path / "a1")
            path, body, headers = model_request("anthropic-messages", False, token)
            async with httpx.AsyncClient(base_url=gateway.url("a1")) as client:
                response = await client.post(path, json=body, headers=headers)
            assert response.status_code == 200
            assert meter.charges == [("a1", Charge(1000, 100, None, 1))]
        finally:
            await gateway.close()


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_spent_budget_is_refused_402_in_the_protocols_shape_before_the_provider_is_asked(tmp_path, protocol):
    reason = "budget spent: 5.00 of 5.00 USD"
    async with running(tmp_path, [TURN]) as rig:
        rig.meter.refuse["a1"] = reason
        for streamed in (False, True):
            response = await ask(rig, protocol, streamed)
            assert response.status_code == 402
            kind, message = error_of(protocol, response)
            assert message == reason
            assert (
                kind
                == {
                    "openai-chat": "insufficient_quota",
                    "openai-responses": "insufficient_quota",
                    "anthropic-messages": "billing_error",
                    "gemini": "FAILED_PRECONDITION",
                }[protocol]
            )
        assert rig.upstream.requests == []
        assert rig.meter.refused == [("a1", reason), ("a1", reason)]
        assert rig.meter.charges == []


async def test_an_error_of_the_provider_is_passed_through_and_not_charged(tmp_path):
    turns = [Turn(status=429, error="slow down"), Turn(status=500, error="boom")]
    async with running(tmp_path, turns) as rig:
        response = await ask(rig, "anthropic-messages", True)
        assert response.status_code == 429
        assert response.content == rig.upstream.sent[-1]
        assert response.json()["error"] == {"type": "rate_limit_error", "message": "slow down"}
        response = await ask(rig, "openai-chat", False)
        assert response.status_code == 500 and response.content == rig.upstream.sent[-1]
        assert rig.meter.charges == []
    assert [record["status"] for record in rig.records()] == [429, 500]


# -- what is not a round ------------------------------------------------------------------------------------


async def test_token_counting_is_forwarded_with_the_key_and_not_charged(tmp_path):
    async with running(tmp_path) as rig:
        response = await rig.client.post(
            "/v1/messages/count_tokens",
            json={"model": MODEL, "messages": [{"role": "user", "content": "hi"}]},
            headers={"x-api-key": rig.token, "anthropic-version": "2023-06-01"},
        )
        assert response.status_code == 200 and response.json() == {"input_tokens": 42}
        response = await rig.client.post(
            f"/v1beta/models/{MODEL}:countTokens", json={"contents": []}, headers={"x-goog-api-key": rig.token}
        )
        assert response.status_code == 200 and response.json() == {"totalTokens": 42}
        assert [r.path for r in rig.upstream.requests] == [
            "/v1/messages/count_tokens",
            f"/v1beta/models/{MODEL}:countTokens",
        ]
        assert rig.upstream.requests[0].headers["x-api-key"] == KEY
        assert rig.upstream.requests[1].headers["x-goog-api-key"] == KEY
        rig.meter.refuse["a1"] = "spent"  # counting is no round: a spent budget does not stop it
        response = await rig.client.post(
            f"/v1beta/models/{MODEL}:countTokens", json={"contents": []}, headers={"x-goog-api-key": rig.token}
        )
        assert response.status_code == 200
        assert rig.meter.charges == [] and rig.meter.refused == []
    assert rig.records() == []


async def test_model_listings_are_answered_by_the_gateway_with_the_agents_model_only(tmp_path):
    async with running(tmp_path) as rig:
        openai = await rig.client.get("/v1/models", headers={"Authorization": f"Bearer {rig.token}"})
        assert openai.status_code == 200
        assert [m["id"] for m in openai.json()["data"]] == [MODEL]
        assert openai.json()["object"] == "list"
        anthropic = await rig.client.get(
            "/v1/models", headers={"x-api-key": rig.token, "anthropic-version": "2023-06-01"}
        )
        assert anthropic.json()["data"] == [{"id": MODEL, "type": "model", "display_name": MODEL}]
        gemini = await rig.client.get("/v1beta/models", params={"key": rig.token})
        assert [m["name"] for m in gemini.json()["models"]] == [f"models/{MODEL}"]
        unknown = await rig.client.get("/v1/models")
        assert unknown.status_code == 401
        assert rig.upstream.requests == []
        assert rig.meter.charges == []


# -- refusals of a request that is wrong ---------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_another_model_is_refused_400(tmp_path, protocol):
    async with running(tmp_path) as rig:
        response = await ask(rig, protocol, False, model="gpt-expensive")
        assert response.status_code == 400
        kind, message = error_of(protocol, response)
        assert "gpt-expensive" in message and MODEL in message
        assert kind == {"anthropic-messages": "invalid_request_error", "gemini": "INVALID_ARGUMENT"}.get(
            protocol, "invalid_request"
        )
        assert rig.upstream.requests == [] and rig.meter.charges == []


async def test_a_body_that_is_not_json_is_refused_400(tmp_path):
    async with running(tmp_path) as rig:
        headers = {"x-api-key": rig.token, "anthropic-version": "2023-06-01", "content-type": "application/json"}
        response = await rig.client.post("/v1/messages", content=b"{not json", headers=headers)
        assert response.status_code == 400
        assert response.json()["error"]["type"] == "invalid_request_error"
        response = await rig.client.post("/v1/messages", content=b"[1, 2]", headers=headers)
        assert response.status_code == 400
        assert rig.upstream.requests == [] and rig.meter.charges == []


async def test_a_path_the_gateway_does_not_carry_is_404_and_never_forwarded(tmp_path):
    async with running(tmp_path) as rig:
        for method, path in (("POST", "/v1/embeddings"), ("GET", "/v1/chat/completions"), ("POST", "/admin")):
            response = await rig.client.request(method, path, headers={"Authorization": f"Bearer {rig.token}"})
            assert response.status_code == 404
        assert rig.upstream.requests == []


async def test_the_gemini_query_key_is_a_credential_and_the_rest_of_the_query_is_forwarded(tmp_path):
    async with running(tmp_path, [TURN]) as rig:
        response = await rig.client.post(
            f"/v1beta/models/{MODEL}:streamGenerateContent",
            params={"alt": "sse", "key": rig.token},
            json={"contents": []},
        )
        assert response.status_code == 200 and response.content == rig.upstream.sent[-1]
        (seen,) = rig.upstream.requests
        assert seen.query == {"alt": "sse"}
        assert seen.headers["x-goog-api-key"] == KEY


async def test_a_provider_that_is_down_is_a_502_in_the_protocols_shape_and_not_charged(tmp_path):
    async with ScriptedModelServer() as upstream:
        url = upstream.base_url
    meter = RecordingMeter()
    gateway = Gateway(meter)
    await gateway.start()
    try:
        provider = ProviderConfig("scripted", KEY, {"anthropic": url})
        token = await gateway.add_agent("a1", MODEL, provider, tmp_path / "a1")
        path, body, headers = model_request("anthropic-messages", False, token)
        async with httpx.AsyncClient(base_url=gateway.url("a1")) as client:
            response = await client.post(path, json=body, headers=headers)
        assert response.status_code == 502
        assert response.json()["type"] == "error" and "unreachable" in response.json()["error"]["message"]
        assert meter.charges == []
    finally:
        await gateway.close()


# -- the record keeps no key --------------------------------------------------------------------------------


async def test_the_provider_key_is_in_no_file_even_when_the_model_repeats_it(tmp_path):
    echo = Turn(text=f"your key is {KEY} and again {KEY}", tool_calls=(("bash", {"command": f"echo {KEY}"}),))
    async with running(tmp_path, [echo] * 8) as rig:
        for protocol in PROTOCOLS:
            for streamed in (False, True):
                response = await ask(rig, protocol, streamed)
                assert response.status_code == 200
                if not streamed:  # (a stream has the text in 8-character pieces)
                    assert KEY.encode() in response.content  # the agent gets the answer as the model wrote it
    records = rig.records()
    assert len(records) == 8
    for record in records:  # streams reassembled: the key whole again, and redacted
        assert answer_text(record["protocol"], record["response"]) == "your key is [redacted] and again [redacted]"
        assert record["tool_calls"][0]["arguments"] == '{"command": "echo [redacted]"}'
    files = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert rig.directory / MODEL_CALLS in files
    for path in files:
        assert KEY.encode() not in path.read_bytes(), path
        assert rig.token.encode() not in path.read_bytes(), path
