"""The gateway against hostile clients and upstreams: every bound turns abuse into a refusal or a cut, fast.

A client may send a gigabyte, trickle a byte a second, present another match's token, forge a provider key,
present two credentials, or fire a thousand requests at once; an upstream may never end its stream or answer
with more than the gateway keeps. None of it may stall the gateway for another agent or charge the wrong one.
"""

from __future__ import annotations

import asyncio
import json
import time
import tracemalloc

import aiohttp
import httpx

from aoe_tui.store.match_layout import MODEL_CALLS_NAME as MODEL_CALLS
from aoe_tui.store.model_calls import read_model_calls
from aoe_tui.agents.gateway.limits import GatewayLimits
from aoe_tui.agents.gateway.server import Gateway
from tests.agents.test_gateway import MODEL, RecordingMeter, Turn, ask, model_request, provider_for, running

GIGABYTE = 1024**3


async def _raw_exchange(port: int, head: bytes, body_pieces, read_timeout: float = 10.0) -> tuple[bytes, int]:
    """Send `head` then the body pieces (an iterator of (bytes, pause)) while reading the answer; stop sending
    as soon as the answer's status line is in. Returns (what was read, bytes of body sent)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    sent = 0
    answered = asyncio.Event()

    async def send() -> None:
        nonlocal sent
        writer.write(head)
        for piece, pause in body_pieces:
            if answered.is_set():
                return
            writer.write(piece)
            sent += len(piece)
            await writer.drain()
            if pause:
                await asyncio.sleep(pause)

    sender = asyncio.create_task(send())
    try:
        async with asyncio.timeout(read_timeout):
            answer = await reader.readuntil(b"\r\n\r\n")
            answered.set()
    finally:
        sender.cancel()
        writer.close()
    try:
        await sender
    except (asyncio.CancelledError, ConnectionError):
        pass
    return answer, sent


# -- hostile clients ----------------------------------------------------------------------------------------


async def test_a_1gb_body_streamed_without_a_length_is_refused_413_quickly_with_little_memory(tmp_path):
    limits = GatewayLimits(max_request_bytes=4 * 1024 * 1024)
    async with running(tmp_path, limits=limits) as rig:
        piece = b"x" * (1024 * 1024)  # one megabyte, sent 1024 times: nothing of the gigabyte is allocated
        yielded = 0

        async def gigabyte():
            nonlocal yielded
            for _ in range(GIGABYTE // len(piece)):
                yielded += len(piece)
                yield piece

        tracemalloc.start()
        started = time.monotonic()
        try:
            async with aiohttp.ClientSession() as session:
                async with session.post(
                    rig.gateway.url("a1") + "/v1/chat/completions",
                    data=gigabyte(),
                    headers={"Authorization": f"Bearer {rig.token}", "Content-Type": "application/json"},
                ) as response:
                    status, document = response.status, await response.json()
            elapsed = time.monotonic() - started
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert status == 413
        assert document["error"]["message"] == f"request body over {4 * 1024 * 1024} bytes"
        assert elapsed < 5.0
        assert yielded < GIGABYTE // 4  # the client was answered long before it could send it all
        assert peak < 64 * 1024 * 1024
        assert rig.upstream.requests == [] and rig.meter.charges == []
        # The refused body is drained a moment for the client to read its refusal, not aiohttp's 10 s: closing
        # the gateway at the end of a match waited for that drain (10 s, and the client was long gone).
        closing = time.monotonic()
        await rig.gateway.close()
        assert time.monotonic() - closing < 2.5


async def test_a_declared_1gb_body_is_refused_413_before_any_of_it_is_read(tmp_path):
    async with running(tmp_path) as rig:  # the default 32 MB bound
        head = (
            f"POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: {rig.token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {GIGABYTE}\r\n\r\n"
        ).encode()
        started = time.monotonic()
        answer, _ = await _raw_exchange(rig.gateway.port("a1"), head, iter([(b"{", 0.5)] * 20))
        assert answer.startswith(b"HTTP/1.1 413 ")
        assert time.monotonic() - started < 2.0
        assert rig.upstream.requests == []


async def test_a_client_sending_one_byte_a_second_is_refused_408(tmp_path):
    async with running(tmp_path, limits=GatewayLimits(request_read_s=1.2)) as rig:
        body = json.dumps({"model": MODEL, "messages": []}).encode()
        head = (
            f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {rig.token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        started = time.monotonic()
        answer, sent = await _raw_exchange(
            rig.gateway.port("a1"), head, ((body[i : i + 1], 1.0) for i in range(len(body)))
        )
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        assert 1.0 < time.monotonic() - started < 3.0
        assert sent < len(body)
        # Meanwhile and after, another request of the same agent is served.
        response = await ask(rig, "openai-chat", False)
        assert response.status_code == 200
        assert len(rig.upstream.requests) == 1


# -- hostile upstreams --------------------------------------------------------------------------------------


async def test_a_stream_that_never_ends_is_cut_and_the_gateway_serves_others_meanwhile(tmp_path):
    turns = [Turn(text="thinking forever", endless=True), Turn(text="second answer")]
    async with running(tmp_path, turns, limits=GatewayLimits(exchange_s=1.5)) as rig:
        started = time.monotonic()
        endless = asyncio.create_task(ask(rig, "openai-chat", True))
        while not rig.upstream.requests:
            await asyncio.sleep(0.01)
        quick_started = time.monotonic()
        quick = await ask(rig, "anthropic-messages", False)
        assert quick.status_code == 200 and quick.json()["content"][0]["text"] == "second answer"
        assert time.monotonic() - quick_started < 0.5
        assert not endless.done()
        response = await endless
        elapsed = time.monotonic() - started
        assert 1.4 < elapsed < 4.0
        assert response.status_code == 200
        assert b"data: [DONE]" in response.content and response.content.endswith(b": still thinking\n\n")
        assert len(rig.meter.charges) == 2  # the cut stream is still a round, charged what it reported
    records = read_model_calls(rig.directory / MODEL_CALLS)
    endless_record = next(r for r in records if r["protocol"] == "openai-chat")
    assert endless_record["cut"] == "stream still open after 1.5 s, cut"
    assert endless_record["response"]["choices"][0]["message"]["content"] == "thinking forever"


async def test_a_huge_whole_answer_is_refused_502_and_not_passed_on(tmp_path):
    limits = GatewayLimits(max_response_bytes=100_000)
    async with running(tmp_path, [Turn(text="big", padding_bytes=1_000_000)], limits=limits) as rig:
        response = await ask(rig, "anthropic-messages", False)
        assert response.status_code == 502
        assert response.json()["error"]["message"] == "the provider's answer is over 100000 bytes"
        assert len(response.content) < 1000
        assert rig.meter.charges == []
    (record,) = read_model_calls(rig.directory / MODEL_CALLS)
    assert (record["status"], record["cut"]) == (502, "answer too large")


async def test_a_huge_streamed_answer_is_cut_at_the_bound(tmp_path):
    limits = GatewayLimits(max_response_bytes=100_000)
    async with running(tmp_path, [Turn(text="big", padding_bytes=200_000)], limits=limits) as rig:
        response = await ask(rig, "openai-chat", True)
        assert response.status_code == 200
        assert 50_000 < len(response.content) <= 100_000
        for _ in range(200):
            if rig.upstream.sent:
                break
            await asyncio.sleep(0.01)
        assert rig.upstream.sent[-1].startswith(response.content)
        assert rig.meter.charges and rig.meter.charges[0][1].input_tokens is None  # cut before the usage chunk
    (record,) = read_model_calls(rig.directory / MODEL_CALLS)
    assert record["cut"] == "stream over 100000 bytes, cut"


# -- hostile adapters ---------------------------------------------------------------------------------------


async def test_tokens_forged_missing_foreign_or_doubled_are_refused_401(tmp_path):
    async with running(tmp_path, [Turn(text="ok")]) as rig:
        other = Gateway(RecordingMeter())  # another match's gateway, with an agent of the same name
        await other.start()
        try:
            foreign = await other.add_agent("a1", MODEL, provider_for(rig.upstream), tmp_path / "other" / "a1")
        finally:
            await other.close()
        b_token = await rig.gateway.add_agent("b", MODEL, provider_for(rig.upstream), tmp_path / "agents" / "b")
        path, body, _ = model_request("openai-chat", False, rig.token)
        refused = [
            {},
            {"Authorization": f"Bearer {foreign}"},
            {"Authorization": f"Bearer {b_token}"},  # B's own token, leaked to A: good at B's port only
            {"Authorization": "Bearer sk-live-DISTINCTIVE-123456"},
            {"Authorization": "Bearer sk-proj-forged0000000000000000"},
            {"Authorization": rig.token},  # no Bearer: not a credential at all
            {"Authorization": f"Bearer {rig.token}", "x-api-key": b_token},
            {"Authorization": f"Bearer {rig.token}", "x-goog-api-key": "sk-forged"},
            {"x-api-key": rig.token, "x-goog-api-key": b_token},
        ]
        for headers in refused:
            response = await rig.client.post(path, json=body, headers=headers)
            assert response.status_code == 401, headers
            assert response.json()["error"]["type"] == "invalid_api_key"
        response = await rig.client.post(
            path, json=body, params={"key": b_token}, headers={"x-goog-api-key": rig.token}
        )
        assert response.status_code == 401
        assert rig.upstream.requests == [] and rig.meter.charges == []
        # The same token in two places is one credential.
        response = await rig.client.post(
            path, json=body, headers={"Authorization": f"Bearer {rig.token}", "x-api-key": rig.token}
        )
        assert response.status_code == 200
        assert [agent for agent, _ in rig.meter.charges] == ["a1"]


async def test_a_burst_of_1000_requests_is_mostly_refused_429_and_never_slows_or_charges_another_agent(tmp_path):
    limits = GatewayLimits(concurrent_per_agent=8, rate_per_s=20.0, burst=40)
    async with running(tmp_path, limits=limits, final=Turn(text="slowly", delay_s=0.2)) as rig:
        b_token = await rig.gateway.add_agent("b", MODEL, provider_for(rig.upstream), tmp_path / "agents" / "b")
        b_headers = {"Authorization": f"Bearer {b_token}"}
        async with httpx.AsyncClient(base_url=rig.gateway.url("b"), timeout=10) as b_client:
            assert (await b_client.get("/v1/models", headers=b_headers)).status_code == 200  # B's connection is open
            path, body, headers = model_request("openai-chat", False, rig.token)
            connector = aiohttp.TCPConnector(limit=0, force_close=True)
            async with aiohttp.ClientSession(connector=connector) as session:

                async def one() -> int:
                    async with session.post(rig.gateway.url("a1") + path, json=body, headers=headers) as response:
                        await response.read()
                        return response.status

                burst = [asyncio.create_task(one()) for _ in range(1000)]
                while len(rig.upstream.requests) < 4:  # A's burst is under way
                    await asyncio.sleep(0.005)
                b_started = time.monotonic()
                b_response = await b_client.post(path, json={**body}, headers=b_headers)
                b_elapsed = time.monotonic() - b_started
                statuses = await asyncio.gather(*burst)
        assert b_response.status_code == 200, b_response.text
        # B's round takes 0.2 s upstream; queued behind A's thousand (8 at a time, 0.2 s each) it would take 25 s.
        # The bound leaves room for the test's own client, which shares the loop with the gateway on a loaded host.
        assert b_elapsed < 3.0
        assert set(statuses) <= {200, 429}
        assert statuses.count(429) >= 900
        assert statuses.count(200) <= 40  # at most the bucket's burst (it refills 20/s over a burst's second)
        assert len(rig.meter.of("a1")) == statuses.count(200)
        assert len(rig.meter.of("b")) == 1  # B's own round, nothing of A's
