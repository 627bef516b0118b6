"""The host-side load generator's own ceiling on this machine, and how close together a burst really starts.

The Traffic Surge verifiers judge a guest under load made by
`aoe_tui.runtime.load_generator`, so the generator must never be what is slow.
This measures it against a trivial loopback server in its own process (asyncio,
answers at once, listen backlog 1024, records when each request line arrived
on the shared monotonic clock and its own CPU time), and against a baseline
made in the same run: N curl processes started together, as a shell verifier
would start them.

- ceiling: back-to-back bursts of 24 for a few seconds: requests/s, the
  generator's and the server's CPU per request (the server is not the limit
  when its share is small);
- added latency: sequential requests, the generator's own timing against
  curl's `time_total` for the same server;
- burst start spread for N = 8, 16, 24: first to last request arriving at the
  server (and, for the generator, first to last headers sent as it reports),
  median of the repeats, generator against N curl processes;
- start-up: the wall time of one `python -m aoe_tui.runtime.load_generator`
  run (what a verifier pays before its burst).

    .venv/bin/python benchmarks/load_generator.py [--repeats N] [--seconds S]

Prints figures; not a test. Only loopback traffic, bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from aoe_tui.runtime.load_generator import LoadGenerator, parse_plan

SERVER = r"""
import asyncio, json, sys, time
arrivals = []
async def client(reader, writer):
    try:
        line = await reader.readline()
        arrivals.append(time.monotonic())
        while (await reader.readline()) not in (b"\r\n", b"\n", b""):
            pass
        if line.startswith(b"GET /__stats"):
            body = json.dumps({"arrivals": arrivals[:-1], "cpu": time.process_time()}).encode()
            arrivals.clear()
        else:
            body = b"ok"
        writer.write(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
    except OSError:
        pass
    finally:
        writer.close()
async def main():
    server = await asyncio.start_server(client, "127.0.0.1", 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()
asyncio.run(main())
"""


class Server:
    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.url = f"http://127.0.0.1:{int(self.process.stdout.readline())}"

    def stats(self) -> dict:
        with urllib.request.urlopen(self.url + "/__stats", timeout=10) as answer:
            return json.loads(answer.read())

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def spread_ms(times: list[float]) -> float:
    return (max(times) - min(times)) * 1000 if len(times) > 1 else 0.0


async def ceiling(server: Server, seconds: float) -> tuple[float, float, float]:
    generator = LoadGenerator(server.url)
    plan = parse_plan({"load": {"count": 24, "path": "/c/{i}", "timeout": 5}, "wait_for_load": True})
    server.stats()
    server_cpu = server.stats()["cpu"]
    cpu, started, done = time.process_time(), time.perf_counter(), 0
    while time.perf_counter() - started < seconds:
        report = await generator.run(plan)
        done += sum(r.status == "200" for r in report.load)
    wall = time.perf_counter() - started
    done = max(done, 1)  # a starved machine may answer none in time: the figures then say so
    ours = (time.process_time() - cpu) / done * 1000
    theirs = (server.stats()["cpu"] - server_cpu) / done * 1000
    return done / wall, ours, theirs


async def generator_latency(server: Server, count: int) -> list[float]:
    report = await LoadGenerator(server.url).run(
        parse_plan({"load": {"count": count, "path": "/l/{i}", "timeout": 5, "mode": "stream"}, "wait_for_load": True})
    )
    return [r.elapsed_ms for r in report.load]


def curl_latency(server: Server, count: int) -> list[float]:
    times = []
    for i in range(count):
        out = subprocess.run(
            ["curl", "-s", "-o", "/dev/null", "-w", "%{time_total}", f"{server.url}/l/{i}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        times.append(float(out) * 1000)
    return times


async def generator_burst(server: Server, n: int) -> tuple[float, float, int]:
    """Server-side arrival spread, the generator's own sent spread, and how many requests got no answer."""
    server.stats()
    report = await LoadGenerator(server.url).run(
        parse_plan({"load": {"count": n, "path": "/b/{i}", "timeout": 5}, "wait_for_load": True})
    )
    failed = sum(r.status != "200" for r in report.load)
    return spread_ms(server.stats()["arrivals"]), report.start_spread_ms or 0.0, failed


def curl_burst(server: Server, n: int) -> float:
    server.stats()
    processes = [
        subprocess.Popen(["curl", "-s", "-o", "/dev/null", "--max-time", "5", f"{server.url}/b/{i}"]) for i in range(n)
    ]
    for process in processes:
        process.wait()
    return spread_ms(server.stats()["arrivals"])


def start_up(server: Server, repeats: int) -> float:
    plan = json.dumps({"requests": [{"path": "/s"}]})
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "aoe_tui.runtime.load_generator", server.url, plan],
            capture_output=True,
            check=True,
            env={"PYTHONPATH": str(PROJECT), "PATH": "/usr/bin:/bin"},
        )
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _p(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="bursts per size and per side (median reported)")
    parser.add_argument("--seconds", type=float, default=3.0, help="how long the ceiling is measured")
    args = parser.parse_args()
    one, five, fifteen = os.getloadavg()
    print(f"load average (1, 5, 15 min): {one:.1f} {five:.1f} {fifteen:.1f} on {os.cpu_count() or 0} cores")
    server = Server()
    try:
        rate, ours, theirs = asyncio.run(ceiling(server, args.seconds))
        print(
            f"ceiling: {rate:.0f} requests/s in bursts of 24 "
            f"(generator CPU {ours:.2f} ms/request, server CPU {theirs:.2f} ms/request)"
        )
        gen = asyncio.run(generator_latency(server, 200))
        curl = curl_latency(server, 30)
        print(
            f"latency against an instant server: generator median {statistics.median(gen):.2f} ms, "
            f"p95 {_p(gen, 0.95):.2f} ms; curl median {statistics.median(curl):.2f} ms, p95 {_p(curl, 0.95):.2f} ms"
        )
        print("burst start spread, median of", args.repeats, "(first to last request at the server):")
        for n in (8, 16, 24):
            bursts = [asyncio.run(generator_burst(server, n)) for _ in range(args.repeats)]
            curls = [curl_burst(server, n) for _ in range(args.repeats)]
            failed = sum(b[2] for b in bursts)
            print(
                f"  N={n:>2}: generator {statistics.median(b[0] for b in bursts):6.2f} ms "
                f"(headers sent within {statistics.median(b[1] for b in bursts):.2f} ms"
                f"{f', {failed} unanswered' if failed else ''}); "
                f"{n} curl processes {statistics.median(curls):6.2f} ms"
            )
        print(f"start-up of one load generator run: {start_up(server, 5):.0f} ms (median of 5)")
    finally:
        server.close()


if __name__ == "__main__":
    main()
