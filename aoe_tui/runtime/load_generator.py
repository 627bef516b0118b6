"""Load from the host on a guest's public port: a burst of concurrent GETs, then timed requests, as JSON.

Arenas about saturation (Traffic Surge, ARENAS §4) judge a service while it
is under load: N optional GETs in flight at once, and a priority write sent a
moment later that must still answer in time. A shell verifier cannot start 24
curl processes within a millisecond of each other, so it runs this program
(`python -m aoe_tui.runtime.load_generator URL PLAN`, the referee's own
interpreter in `AOE_PYTHON`) and reads what happened from its JSON.

A plan (JSON) has a `load` (`count` GETs of `path` with `{i}` = 1..count,
each within `timeout` seconds; `mode` "burst" starts them together, "stream"
one after another), then, `after` seconds after the load started, the
`requests`, one after another (`method`, `path`, optional `body`,
`timeout`, `expect`: the statuses that let the next request go). With
`wait_for_load` the load's results are awaited and reported; without it, the
load still in flight is dropped once the requests are done (it only made
pressure).

The guest is untrusted: every body is read to at most `BODY_LIMIT` bytes
(raw, no content decoding), shown literally (undecodable bytes as `\\xNN`), and
every failure is worded as curl words it, with status "000", so the details
a player sees match the original arena's (`curl: (28) Operation timed out
after 1500 milliseconds with 0 bytes received`). Every request gets its own
connection (as N curl processes would), no proxy, no redirect, no
environment. Each result says when its request really went out (its headers
sent, from httpcore's trace), so the burst's start spread is evidence too.
"""

from __future__ import annotations

import asyncio
import errno
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

import anyio._backends._asyncio  # noqa: F401  (imported by httpcore at the first connection: not in a burst)
import h11  # noqa: F401
import httpx

BODY_LIMIT = 64 * 1024
"""Bytes of a body ever read (as the shell helpers' `body`): a guest may answer without end."""
MAX_COUNT = 256
MAX_REQUESTS = 64
MAX_TIMEOUT_SECONDS = 60.0
NO_STATUS = "000"
DROPPED = "dropped unanswered: the requests after the load were done"

Mode = Literal["burst", "stream"]


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    timeout: float
    body: bytes | None = None
    expect: tuple[int, ...] = ()


@dataclass(frozen=True)
class Load:
    count: int
    path: str
    timeout: float
    mode: Mode = "burst"

    def requests(self) -> list[Request]:
        return [Request("GET", self.path.replace("{i}", str(i)), self.timeout) for i in range(1, self.count + 1)]


@dataclass(frozen=True)
class Plan:
    load: Load | None = None
    after: float = 0.0
    requests: tuple[Request, ...] = ()
    wait_for_load: bool = False


@dataclass
class Result:
    """One request as the verifier sees it: status ("000" without an answer), body, curl's wording of a failure."""

    i: int
    method: str
    path: str
    status: str = NO_STATUS
    body: str = ""
    body_bytes: int = 0
    truncated: bool = False
    error: str | None = None
    started_ms: float = 0.0
    sent_ms: float | None = None
    elapsed_ms: float = 0.0


@dataclass
class Report:
    load: list[Result] = field(default_factory=list)
    requests: list[Result] = field(default_factory=list)
    load_started: int = 0
    start_spread_ms: float | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class PlanError(ValueError):
    """A plan that is not of the documented form (the arena's fault, never the player's)."""


def _number(data: dict, key: str, default: float | None = None, low: float = 0.0, high: float = MAX_TIMEOUT_SECONDS):
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise PlanError(f"{key} must be a number from {low:g} to {high:g}, not {value!r}")
    return float(value)


def _path(data: dict) -> str:
    path = data.get("path")
    if not isinstance(path, str) or not path.startswith("/") or len(path) > 2048:
        raise PlanError(f"path must be an absolute URL path, not {path!r}")
    return path


def _request(data: Any) -> Request:
    if not isinstance(data, dict):
        raise PlanError("each request must be an object")
    method = data.get("method", "GET")
    if method not in ("GET", "PUT", "POST", "DELETE", "HEAD"):
        raise PlanError(f"method {method!r} is not one of GET, PUT, POST, DELETE, HEAD")
    body = data.get("body")
    if body is not None and not isinstance(body, str):
        raise PlanError("body must be a string")
    expect = data.get("expect", [])
    if not isinstance(expect, list) or not all(isinstance(s, int) and 100 <= s <= 599 for s in expect):
        raise PlanError("expect must be a list of HTTP statuses")
    timeout = _number(data, "timeout", 5.0, 0.001)
    return Request(method, _path(data), timeout, None if body is None else body.encode(), tuple(expect))


def parse_plan(data: Any) -> Plan:
    if not isinstance(data, dict):
        raise PlanError("a plan must be a JSON object")
    load = None
    if (raw := data.get("load")) is not None:
        if not isinstance(raw, dict):
            raise PlanError("load must be an object")
        mode = raw.get("mode", "burst")
        if mode not in ("burst", "stream"):
            raise PlanError(f"load mode must be burst or stream, not {mode!r}")
        count = int(_number(raw, "count", None, 1, MAX_COUNT))
        load = Load(count, _path(raw), _number(raw, "timeout", 5.0, 0.001), mode)
    requests = data.get("requests", [])
    if not isinstance(requests, list) or len(requests) > MAX_REQUESTS:
        raise PlanError(f"requests must be a list of at most {MAX_REQUESTS}")
    return Plan(
        load, _number(data, "after", 0.0), tuple(_request(r) for r in requests), bool(data.get("wait_for_load"))
    )


def literal(data: bytes) -> str:
    """Bytes as text, exactly when they are UTF-8; any other byte shown as `\\xNN` (never interpreted)."""
    return data.decode("utf-8", errors="backslashreplace")


def _curl_error(error: BaseException, base: httpx.URL, elapsed_ms: float, received: int) -> str:
    """A failure worded as curl 7.88 words it on stderr (the original arena's details were curl's)."""
    if isinstance(error, TimeoutError | httpx.TimeoutException):
        return f"curl: (28) Operation timed out after {int(elapsed_ms)} milliseconds with {received} bytes received"
    if isinstance(error, httpx.ConnectError):
        return (
            f"curl: (7) Failed to connect to {base.host} port {base.port} after {int(elapsed_ms)} ms: "
            "Couldn't connect to server"
        )
    if isinstance(error, httpx.RemoteProtocolError) and "without sending" in str(error):
        return "curl: (52) Empty reply from server"
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, OSError) and cause.errno == errno.ECONNRESET:
            return "curl: (56) Recv failure: Connection reset by peer"
        cause = cause.__cause__ or cause.__context__
    if isinstance(error, httpx.ReadError | httpx.WriteError):
        return "curl: (56) Recv failure: Connection reset by peer"
    return f"curl: (56) {type(error).__name__}: {str(error)[:200]}"


class LoadGenerator:
    """One plan against one base URL; times are milliseconds from the plan's start (`time.perf_counter`)."""

    def __init__(self, base_url: str) -> None:
        self.base = httpx.URL(base_url)
        if self.base.scheme != "http" or not self.base.host:
            raise PlanError(f"base URL must be http://HOST:PORT, not {base_url!r}")
        self._origin = 0.0

    def _now_ms(self) -> float:
        return (time.perf_counter() - self._origin) * 1000

    async def run(self, plan: Plan) -> Report:
        report = Report()
        count = (plan.load.count if plan.load else 0) + 1
        limits = httpx.Limits(max_connections=count + 4, max_keepalive_connections=0)
        headers = {"Accept-Encoding": "identity", "User-Agent": "aoe-load-generator"}
        # verify=False: plain HTTP only (the base URL is checked), and loading the CA bundle costs ~0.1 s a client.
        async with httpx.AsyncClient(
            base_url=self.base,
            limits=limits,
            trust_env=False,
            follow_redirects=False,
            headers=headers,
            timeout=None,
            verify=False,
        ) as client:
            self._origin = time.perf_counter()
            load_task = asyncio.ensure_future(self._load(client, plan.load, report)) if plan.load else None
            try:
                if plan.requests:
                    await asyncio.sleep(plan.after)
                    await self._sequence(client, plan.requests, report.requests)
                if load_task is not None and plan.wait_for_load:
                    await load_task
            finally:
                if load_task is not None and not load_task.done():
                    load_task.cancel()
                    await asyncio.gather(load_task, return_exceptions=True)
        sent = [r.sent_ms if r.sent_ms is not None else r.started_ms for r in report.load]
        if plan.load is not None and plan.load.mode == "burst" and sent:
            report.start_spread_ms = round(max(sent) - min(sent), 3)
        return report

    async def _load(self, client: httpx.AsyncClient, load: Load, report: Report) -> None:
        requests = load.requests()
        results = [Result(i, r.method, r.path) for i, r in enumerate(requests, 1)]
        report.load = results  # filled in place: a load dropped half way still shows what started
        if load.mode == "stream":
            for request, result in zip(requests, results):
                report.load_started += 1
                await self._send(client, request, result)
            return
        gate = asyncio.Event()

        async def one(request: Request, result: Result) -> None:
            await gate.wait()
            report.load_started += 1
            await self._send(client, request, result)

        tasks = [asyncio.ensure_future(one(r, res)) for r, res in zip(requests, results)]
        await asyncio.sleep(0)  # every task is parked on the gate: they all leave it in the same loop turn
        gate.set()
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _sequence(self, client: httpx.AsyncClient, requests: tuple[Request, ...], out: list[Result]) -> None:
        for i, request in enumerate(requests, 1):
            result = Result(i, request.method, request.path)
            out.append(result)
            await self._send(client, request, result)
            if request.expect and not (result.status.isdigit() and int(result.status) in request.expect):
                return

    async def _send(self, client: httpx.AsyncClient, request: Request, result: Result) -> None:
        result.started_ms = round(self._now_ms(), 3)
        received = 0

        async def trace(name: str, info: dict) -> None:
            if name == "http11.send_request_headers.complete" and result.sent_ms is None:
                result.sent_ms = round(self._now_ms(), 3)

        headers = {"Content-Type": "application/octet-stream"} if request.body is not None else {}
        chunks: list[bytes] = []
        try:
            async with asyncio.timeout(request.timeout):
                built = client.build_request(
                    request.method, request.path, content=request.body, headers=headers, extensions={"trace": trace}
                )
                response = await client.send(built, stream=True)
                try:
                    status = str(response.status_code)
                    async for chunk in response.aiter_raw():
                        room = BODY_LIMIT - received
                        chunks.append(chunk[:room])
                        received += len(chunk[:room])
                        if len(chunk) > room:
                            result.truncated = True
                            break
                finally:
                    await response.aclose()
                result.status = status
        except asyncio.CancelledError:
            result.error = DROPPED
            raise
        except Exception as error:  # noqa: BLE001  (whatever the guest does is a result, never a crash)
            result.status = NO_STATUS
            result.error = _curl_error(error, self.base, self._now_ms() - result.started_ms, received)
        finally:
            result.elapsed_ms = round(self._now_ms() - result.started_ms, 3)
            body = b"".join(chunks)
            result.body, result.body_bytes = literal(body), len(body)


def run_plan(base_url: str, plan: Plan) -> Report:
    return asyncio.run(LoadGenerator(base_url).run(plan))


def main(argv: list[str] | None = None) -> int:
    """`load_generator URL PLAN-JSON`: the report on stdout; exit 2 (an arena fault) for a bad plan or URL."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m aoe_tui.runtime.load_generator http://HOST:PORT PLAN-JSON", file=sys.stderr)
        return 2
    try:
        plan = parse_plan(json.loads(args[1]))
        if urlsplit(args[0]).path not in ("", "/"):
            raise PlanError("the base URL must not have a path")
        report = run_plan(args[0], plan)
    except (PlanError, ValueError) as error:
        print(f"load generator: {error}", file=sys.stderr)
        return 2
    json.dump(report.to_json(), sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
