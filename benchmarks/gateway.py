"""Model gateway overhead: latency added per request, and streamed-token throughput, direct against through it.

Three processes, as in a match: one scripted model server (`aoe_tui.testing.model_server`), as a provider is
elsewhere; the gateway, as the referee runs it; and the client here, as an agent's harness is a process of
its own that shares nothing with the gateway but loopback.

(a) Latency: N sequential non-streamed Chat Completions requests, alternately direct and through the
    gateway (so both see the same machine noise), each on its own kept-alive connection; p50 and p99 of
    each and the difference. Target: at most 2 ms added at p99.
(b) Throughput: a long streamed reply (the scripted server sends 8 characters of text per SSE chunk),
    direct and through the gateway in turns, best of R; chunks per second each and the ratio.
    Target: through the gateway at least 0.9x direct.

The gateway runs with its usual bounds except the per-agent rate (a benchmark's 1,000 sequential requests
would be refused past the bucket's 40) and records every exchange to model_calls.jsonl as in a match.

    .venv/bin/python benchmarks/gateway.py [--requests 500] [--stream-chars 800000] [--streams 3]

Prints a table; exits 1 when a target is missed. Loopback only, about 15 s.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

import aiohttp

MODEL = "bench-model"
LATENCY_TARGET_MS = 2.0
THROUGHPUT_TARGET = 0.9
WARMUP = 50

# The scripted server, in a process of its own: the turns in order, its port on stdout, until stdin closes.
SERVER = """
import asyncio, sys
from aoe_tui.testing.model_server import ScriptedModelServer, Turn
short, long, chars = (int(a) for a in sys.argv[1:4])
turns = [Turn(text="ok", input_tokens=12, output_tokens=1)] * short
turns += [Turn(text="", padding_bytes=chars, output_tokens=chars // 4)] * long
async def main():
    async with ScriptedModelServer(turns) as server:
        print(server.port, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
asyncio.run(main())
"""


# The gateway, in a process of its own: in front of the server at argv[1], its usual bounds but the per-agent rate
# (a benchmark's 1,000 sequential requests would be refused past the bucket's 40), every exchange recorded to
# model_calls.jsonl under argv[2] as in a match, for the model argv[3]; its URL and the agent's token on stdout, until stdin closes.
GATEWAY = """
import asyncio, sys
from pathlib import Path
from aoe_tui.agents.gateway.limits import GatewayLimits
from aoe_tui.agents.gateway.server import Gateway
from aoe_tui.agents.providers import ProviderConfig
class Meter:
    def refusal(self, agent_id, rounds_in_flight): return None
    def charge(self, agent_id, charge): pass
    def refused_over_budget(self, agent_id, reason): pass
    def gateway_failed(self, agent_id, detail): raise SystemExit(detail)
async def main():
    gateway = Gateway(Meter(), GatewayLimits(rate_per_s=1e6, burst=10**6))
    await gateway.start()
    provider = ProviderConfig("scripted", "sk-bench-provider-key", {"openai": sys.argv[1]})
    token = await gateway.add_agent("bench", sys.argv[3], provider, Path(sys.argv[2]) / "bench")
    print(gateway.url("bench"), token, flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await gateway.close()
asyncio.run(main())
"""


def started(script: str, *arguments: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *arguments],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=PROJECT,
    )


def stopped(process: subprocess.Popen[str]) -> None:
    if process.stdin is not None:
        process.stdin.close()
    process.wait(timeout=30)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def latency(direct_url: str, gateway_url: str, token: str, requests: int) -> tuple[list[float], list[float]]:
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
    times: dict[str, list[float]] = {"direct": [], "gateway": []}
    targets = {
        "direct": (direct_url + "/chat/completions", {"Authorization": "Bearer sk-bench-provider-key"}),
        "gateway": (gateway_url + "/v1/chat/completions", {"Authorization": f"Bearer {token}"}),
    }
    sessions = {name: aiohttp.ClientSession() for name in targets}
    try:
        for index in range(WARMUP + requests):
            order = ("direct", "gateway") if index % 2 == 0 else ("gateway", "direct")
            for name in order:
                url, headers = targets[name]
                started = time.perf_counter()
                async with sessions[name].post(url, json=body, headers=headers) as response:
                    await response.read()
                    if response.status != 200:
                        raise SystemExit(f"{name}: status {response.status}: {await response.text()}")
                if index >= WARMUP:
                    times[name].append((time.perf_counter() - started) * 1000)
    finally:
        for session in sessions.values():
            await session.close()
    return times["direct"], times["gateway"]


async def one_stream(session: aiohttp.ClientSession, url: str, headers: dict[str, str]) -> tuple[int, float]:
    body = {"model": MODEL, "messages": [], "stream": True, "stream_options": {"include_usage": True}}
    started = time.perf_counter()
    size, tail, last, chunks = 0, b"", b"", 0
    async with session.post(url, json=body, headers=headers) as response:
        if response.status != 200:
            raise SystemExit(f"stream: status {response.status}")
        async for data in response.content.iter_any():
            size += len(data)
            joined = tail + data
            chunks += joined.count(b"\n\ndata: ")
            tail = joined[-7:]  # shorter than the marker: no chunk is counted twice
            last = (last + data)[-16:]
    elapsed = time.perf_counter() - started
    if not last.endswith(b"data: [DONE]\n\n"):
        raise SystemExit("stream: did not end with [DONE]")
    return chunks + 1, elapsed  # the first event has no blank line before it


async def throughput(direct_url: str, gateway_url: str, token: str, streams: int) -> tuple[list[float], list[float]]:
    rates: dict[str, list[float]] = {"direct": [], "gateway": []}
    targets = {
        "direct": (direct_url + "/chat/completions", {"Authorization": "Bearer sk-bench-provider-key"}),
        "gateway": (gateway_url + "/v1/chat/completions", {"Authorization": f"Bearer {token}"}),
    }
    async with aiohttp.ClientSession() as session:
        for index in range(streams):
            for name in ("direct", "gateway") if index % 2 == 0 else ("gateway", "direct"):
                chunks, elapsed = await one_stream(session, *targets[name])
                rates[name].append(chunks / elapsed)
    return rates["direct"], rates["gateway"]


async def run(arguments: argparse.Namespace) -> int:
    short = 2 * (WARMUP + arguments.requests)
    server = started(SERVER, str(short), str(2 * arguments.streams), str(arguments.stream_chars))
    with tempfile.TemporaryDirectory() as folder:
        try:
            assert server.stdout is not None
            direct_url = f"http://127.0.0.1:{int(server.stdout.readline())}/v1"
            gateway = started(GATEWAY, direct_url, folder, MODEL)
            try:
                assert gateway.stdout is not None
                gateway_url, token = gateway.stdout.readline().split()
                direct, via = await latency(direct_url, gateway_url, token, arguments.requests)
                direct_rates, via_rates = await throughput(direct_url, gateway_url, token, arguments.streams)
            finally:
                stopped(gateway)
        finally:
            stopped(server)
        with open(Path(folder) / "bench" / "model_calls.jsonl") as calls:
            records = sum(1 for _ in calls)

    added_p50 = percentile(via, 0.5) - percentile(direct, 0.5)
    added_p99 = percentile(via, 0.99) - percentile(direct, 0.99)
    best_direct, best_via = max(direct_rates), max(via_rates)
    ratio = best_via / best_direct
    latency_ok, throughput_ok = added_p99 <= LATENCY_TARGET_MS, ratio >= THROUGHPUT_TARGET
    chunks = arguments.stream_chars // 8
    print(f"model gateway: {arguments.requests} requests each way, {arguments.streams} streams of ~{chunks} chunks")
    print(f"(the gateway wrote {records} model-call records)")
    print()
    print(f"{'latency (ms)':<28}{'p50':>10}{'p99':>10}{'mean':>10}")
    print(
        f"{'direct':<28}{percentile(direct, 0.5):>10.3f}{percentile(direct, 0.99):>10.3f}"
        f"{statistics.fmean(direct):>10.3f}"
    )
    print(
        f"{'through the gateway':<28}{percentile(via, 0.5):>10.3f}{percentile(via, 0.99):>10.3f}"
        f"{statistics.fmean(via):>10.3f}"
    )
    print(
        f"{'added':<28}{added_p50:>10.3f}{added_p99:>10.3f}{statistics.fmean(via) - statistics.fmean(direct):>10.3f}"
        f"   target <= {LATENCY_TARGET_MS:g} ms p99 added: {'met' if latency_ok else 'MISSED'}"
    )
    print()
    print(f"{'streamed chunks/s (best)':<28}{'rate':>10}{'runs':>32}")
    print(f"{'direct':<28}{best_direct:>10.0f}{'  ' + ' '.join(f'{r:.0f}' for r in direct_rates):>32}")
    print(f"{'through the gateway':<28}{best_via:>10.0f}{'  ' + ' '.join(f'{r:.0f}' for r in via_rates):>32}")
    print(
        f"{'ratio':<28}{ratio:>10.2f}x   target >= {THROUGHPUT_TARGET:g}x direct: "
        f"{'met' if throughput_ok else 'MISSED'}"
    )
    return 0 if latency_ok and throughput_ok else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500, help="non-streamed requests each way (default 500)")
    parser.add_argument("--stream-chars", type=int, default=800_000, help="text of one streamed reply (8 per chunk)")
    parser.add_argument("--streams", type=int, default=3, help="streamed replies each way (default 3)")
    raise SystemExit(asyncio.run(run(parser.parse_args())))


if __name__ == "__main__":
    main()
