"""The continuity monitor's achieved sample rate per territory with 3 territories, and the referee's own latency.

The Zero-Downtime Rollout judges a cutover by the referee's continuity monitor
(`aoe_tui.engine.monitor.RunningMonitor`, one per territory, a sample of 4
sequential GETs every 50 ms). This runs three of them at once, as a match does,
against three loopback stand-ins of the rollout's public endpoint (threaded
`http.server`, each in its own thread, answering the four bodies at once), and
in the same run a baseline: three bare httpx loops with the same 50 ms schedule
and the same client settings (one connection per GET), plus one unthrottled
loop for the client's ceiling. For each it prints the achieved samples/s
against the 20/s schedule, each check's latency (p50/p95 ms, as the referee saw
it), the sample start lateness against its slot and the referee's own
event-loop lag (p50/p95/max ms) from the shared `LoopLagMeter`.

    .venv/bin/python benchmarks/continuity_monitor.py [--seconds S]

Prints figures; not a test. Only loopback traffic, bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

import httpx

from aoe_tui.engine.clock import MatchClock
from aoe_tui.engine.monitor import LoopLagMeter, RunningMonitor
from aoe_tui.store.manifest_file import load_manifest

ARENA = PROJECT / "arenas" / "zero-downtime-rollout" / "arena.toml"
BODIES = {
    "/health": b"ready",
    "/version": b"v1",
    "/records/customer-alpha-73c": b"alpha-original",
    "/records/customer-beta-a19": b"beta-original",
}


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        body = BODIES.get(self.path, b"")
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a check the monitor gave up on closed its connection


def _serve() -> ThreadingHTTPServer:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _url(server: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def _pct(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(len(ordered) * fraction), len(ordered) - 1)] if ordered else 0.0


async def _monitors(urls: list[str], seconds: float) -> list[dict]:
    spec = load_manifest(ARENA).monitors[0]
    clock = MatchClock()
    clock.start()
    lag = LoopLagMeter()
    monitors = [RunningMonitor(spec, url, clock, lag) for url in urls]
    for monitor in monitors:
        monitor.start()
    await asyncio.sleep(seconds)
    return [(await m.stop("judged")).model_dump() for m in monitors]


async def _bare_loop(url: str, seconds: float, interval: float | None) -> dict:
    """The same 4 GETs per sample with a bare httpx client: on the 50 ms schedule, or back to back (None)."""
    latencies: list[float] = []
    samples = failures = 0
    limits = httpx.Limits(max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=1.0, limits=limits, trust_env=False, verify=False) as client:
        began = slot = time.monotonic()
        while time.monotonic() - began < seconds:
            if interval is not None and time.monotonic() < slot:
                await asyncio.sleep(slot - time.monotonic())
            for path in BODIES:
                start = time.monotonic()
                try:
                    await client.get(url + path)
                except httpx.HTTPError:
                    failures += 1
                latencies.append((time.monotonic() - start) * 1000)
            samples += 1
            if interval is not None:
                slot = max(slot + interval, time.monotonic())
        elapsed = time.monotonic() - began
    return {
        "per_second": samples / elapsed,
        "p50": _pct(latencies, 0.5),
        "p95": _pct(latencies, 0.95),
        "failures": failures,
    }


async def _baseline(urls: list[str], seconds: float) -> list[dict]:
    return list(await asyncio.gather(*(_bare_loop(url, seconds, 0.05) for url in urls)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="how long each part of a round runs (default 5)")
    parser.add_argument("--rounds", type=int, default=3, help="monitor and baseline rounds, interleaved (default 3)")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    servers = [_serve() for _ in range(3)]
    urls = [_url(s) for s in servers]
    rounds = []
    try:
        for _ in range(args.rounds):  # interleaved, so a load spike from other work hits both alike
            rounds.append((asyncio.run(_monitors(urls, args.seconds)), asyncio.run(_baseline(urls, args.seconds))))
        ceiling = asyncio.run(_bare_loop(urls[0], min(args.seconds, 5.0), None))
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
    print(f"load average at the start: {load:.1f} on {os.cpu_count()} cores (other work on this machine)")
    print(
        f"continuity monitor, 3 territories at once, {args.rounds} rounds of {args.seconds:g} s interleaved with "
        "the baseline, schedule 20 samples/s (4 GETs each):"
    )
    none = {"p50": "-", "p95": "-", "max": "-"}
    for number, (summaries, baseline) in enumerate(rounds, 1):
        print(f" round {number}:")
        for index, summary in enumerate(summaries, 1):
            latency, late, lag = (summary[k] or none for k in ("check_latency_ms", "start_lateness_ms", "loop_lag_ms"))
            print(
                f"  monitor {index}: {summary['samples']} samples, {summary['achieved_per_second']:.2f}/s; "
                f"check latency p50 {latency['p50']} / p95 {latency['p95']} ms; start lateness p95 {late['p95']} ms; "
                f"referee loop lag p50 {lag['p50']} / p95 {lag['p95']} / max {lag['max']} ms; "
                f"failures {summary['failures']}, excused {summary['excused']}, host loaded {summary['host_loaded']}"
            )
        for index, loop in enumerate(baseline, 1):
            print(
                f"  bare httpx loop {index} (same schedule): {loop['per_second']:.2f} samples/s; GET latency "
                f"p50 {loop['p50']:.1f} / p95 {loop['p95']:.1f} ms; failed GETs {loop['failures']}"
            )
    monitor = [s["achieved_per_second"] for summaries, _ in rounds for s in summaries]
    bare = [loop["per_second"] for _, baseline in rounds for loop in baseline]
    print(
        f"median achieved: monitor {statistics.median(monitor):.2f}/s per territory (spread within a round "
        f"{max(max(r) - min(r) for r in ([s['achieved_per_second'] for s in m] for m, _ in rounds)):.2f}/s), "
        f"bare httpx loop {statistics.median(bare):.2f}/s, schedule 20/s"
    )
    print(
        f"bare httpx loop ceiling (one loop, back to back): {ceiling['per_second']:.1f} samples/s "
        f"({4 * ceiling['per_second']:.0f} GETs/s); GET latency p50 {ceiling['p50']:.1f} / p95 {ceiling['p95']:.1f} ms"
    )


if __name__ == "__main__":
    main()
