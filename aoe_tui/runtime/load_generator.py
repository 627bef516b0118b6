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
environment. Each result says when its request really went out (its bytes
written), so the burst's start spread is evidence too. HTTP/1.1 is spoken by
h11 (httpx's own protocol engine) over asyncio streams: httpx cannot open a
connection without sending on it, and a burst must be connected before it is
released (see LoadGenerator).
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

import h11

BODY_LIMIT = 64 * 1024
"""Bytes of a body ever read (as the shell helpers' `body`): a guest may answer without end."""
MAX_HEAD_BYTES = 16 * 1024
"""A status line and headers longer than this are a weird reply, not a reason to read on."""
CONNECT_SECONDS = 10.0
"""How long a burst's connection may take to open at all."""
OPEN_WINDOW_SECONDS = 2.0
"""How long a burst waits for all its connections before it is released anyway (two SYN retries of a full
listen queue). A serial server accepts one connection and then waits for its request: a burst wider than
its listen queue would otherwise wait the whole CONNECT_SECONDS for connections it can never accept."""
OPEN_PACE_SECONDS = 0.005
"""The pause between a burst's connections being opened: time for QEMU's forward (listen queue 1 deep) to accept
one before the next arrives, so it need not drop a SYN and wait the kernel's one-second retry."""
_READ_CHUNK = 64 * 1024
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
    load_connected: int = 0
    """How many of a burst's connections were open at its release (the rest opened after it)."""
    start_spread_ms: float | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class PlanError(ValueError):
    """A plan that is not of the documented form (the arena's fault, never the player's)."""


def _number(
    data: dict, key: str, default: float | None = None, low: float = 0.0, high: float = MAX_TIMEOUT_SECONDS
) -> float:
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


def _curl_error(error: BaseException, host: str, port: int, elapsed_ms: float, received: int, connecting: bool) -> str:
    """A failure worded as curl 7.88 words it on stderr (the original arena's details were curl's)."""
    if isinstance(error, _ConnectTimeout):
        return f"curl: (28) Failed to connect to {host} port {port} after {int(CONNECT_SECONDS * 1000)} ms: Timeout was reached"
    if isinstance(error, TimeoutError):
        return f"curl: (28) Operation timed out after {int(elapsed_ms)} milliseconds with {received} bytes received"
    if connecting:
        return (
            f"curl: (7) Failed to connect to {host} port {port} after {int(elapsed_ms)} ms: Couldn't connect to server"
        )
    if isinstance(error, _EmptyReply):
        return "curl: (52) Empty reply from server"
    if isinstance(error, h11.ProtocolError):
        return "curl: (8) Weird server reply"
    if isinstance(error, OSError) and error.errno in (errno.ECONNRESET, errno.EPIPE):
        return "curl: (56) Recv failure: Connection reset by peer"
    return f"curl: (56) {type(error).__name__}: {str(error)[:200]}"


class _ConnectTimeout(Exception):
    """A burst's connection did not open within CONNECT_SECONDS (before the burst was released)."""


class _EmptyReply(Exception):
    """The server closed the connection without a status line."""


Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]
Opening = asyncio.Future[Connection | BaseException]
"""A burst's connection being opened before the release; its result is the connection or why it failed."""


class LoadGenerator:
    """One plan against one base URL; times are milliseconds from the release (`time.perf_counter`).

    A burst's connections (and the first request's after it) are opened before anything is sent, one
    after another and in that order, then all its requests go out in one loop turn: the guest's port is
    forwarded by QEMU, whose listen queue is 1 deep (libslirp), so N connections opened at once lose SYNs
    that the kernel retries a second later, and a burst made that way is not one (nor is its order). A
    request's timeout then counts from its release; every other request (streams, later requests)
    connects in its own time, as curl would.
    """

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http" or not parts.hostname or parts.path not in ("", "/"):
            raise PlanError(f"base URL must be http://HOST:PORT, not {base_url!r}")
        self.host, self.port = parts.hostname, parts.port or 80
        self._origin = time.perf_counter()

    def _now_ms(self) -> float:
        return (time.perf_counter() - self._origin) * 1000

    async def run(self, plan: Plan) -> Report:
        report = Report()
        opened: list[Opening] = []
        first: Opening | None = None
        opener: asyncio.Task | None = None
        if plan.load is not None and plan.load.mode == "burst":
            opened = [asyncio.get_running_loop().create_future() for _ in range(plan.load.count + bool(plan.requests))]
            opener = asyncio.ensure_future(self._open_in_order(list(opened)))
            if plan.requests:
                first = opened.pop()
            await asyncio.wait(opened, timeout=OPEN_WINDOW_SECONDS)  # the rest open after the release
            report.load_connected = sum(1 for o in opened if o.done() and isinstance(o.result(), tuple))
        self._origin = time.perf_counter()
        load_task = asyncio.ensure_future(self._load(plan.load, opened, report)) if plan.load else None
        try:
            if plan.requests:
                await asyncio.sleep(plan.after)
                await self._sequence(plan.requests, first, report.requests)
            if load_task is not None and plan.wait_for_load:
                await load_task
        finally:
            for task in (load_task, opener):
                if task is not None and not task.done():
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
            for opening in [*opened, first]:
                if opening is not None and opening.done() and not opening.cancelled():
                    if isinstance(connection := opening.result(), tuple):
                        connection[1].close()
        sent = [r.sent_ms if r.sent_ms is not None else r.started_ms for r in report.load]
        if plan.load is not None and plan.load.mode == "burst" and sent:
            report.start_spread_ms = round(max(sent) - min(sent), 3)
        return report

    async def _open_in_order(self, openings: list[Opening]) -> None:
        """Open the connections one after another, each once the one before it is open (or failed).

        The forward's listen queue is FIFO, so the guest sees them in this order: the request that follows a
        burst always queues behind every connection of the burst, as a curl started after them would. Opened
        all at once, the forward drops some SYNs and the kernel retries them a second later, so which
        connection the guest accepts first was luck, and a serial server answered the priority write first
        now and then. A short pause between connections lets the forward accept each before the next.
        """
        for opening in openings:
            connection = await self._open(CONNECT_SECONDS)
            if opening.done():  # its request gave up (timed out or was dropped) while it was opening
                if isinstance(connection, tuple):
                    connection[1].close()
            else:
                opening.set_result(connection)
            await asyncio.sleep(OPEN_PACE_SECONDS)

    async def _open(self, timeout: float) -> Connection | BaseException:
        try:
            async with asyncio.timeout(timeout):
                return await asyncio.open_connection(self.host, self.port, limit=_READ_CHUNK * 2)
        except (OSError, TimeoutError) as error:
            return error

    async def _load(self, load: Load, opened: list[Opening], report: Report) -> None:
        requests = load.requests()
        results = [Result(i, r.method, r.path) for i, r in enumerate(requests, 1)]
        report.load = results  # filled in place: a load dropped half way still shows what started
        if load.mode == "stream":
            for request, result in zip(requests, results):
                report.load_started += 1
                await self._send(request, result)
            return
        tasks = [
            asyncio.ensure_future(self._send(r, res, connection))
            for r, res, connection in zip(requests, results, opened)
        ]
        report.load_started = len(tasks)  # created in one go: each writes its request at its first step
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _sequence(self, requests: tuple[Request, ...], first: Opening | None, out: list[Result]) -> None:
        for i, request in enumerate(requests, 1):
            result = Result(i, request.method, request.path)
            out.append(result)
            await self._send(request, result, first if i == 1 else None)
            if request.expect and not (result.status.isdigit() and int(result.status) in request.expect):
                return

    async def _send(self, request: Request, result: Result, opening: Opening | None = None) -> None:
        """One request on its own connection (opened here unless a burst's opening is given: one still
        opening counts against the request's timeout), its answer bounded, into `result`."""
        result.started_ms = round(self._now_ms(), 3)
        chunks: list[bytes] = []
        received = 0
        connecting = True
        writer: asyncio.StreamWriter | None = None
        try:
            async with asyncio.timeout(request.timeout):
                if opening is None:
                    connection: Connection | BaseException = await asyncio.open_connection(
                        self.host, self.port, limit=_READ_CHUNK * 2
                    )
                else:
                    connection = await opening
                if isinstance(connection, TimeoutError):  # the burst's connection never opened
                    raise _ConnectTimeout()
                if isinstance(connection, BaseException):
                    raise connection
                reader, writer = connection
                connecting = False
                protocol = h11.Connection(our_role=h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)
                writer.write(self._request_bytes(protocol, request))
                await writer.drain()
                result.sent_ms = round(self._now_ms(), 3)
                status = None
                while True:
                    event = protocol.next_event()
                    if event is h11.NEED_DATA:
                        data = await reader.read(_READ_CHUNK)
                        if not data and status is None:
                            raise _EmptyReply()
                        protocol.receive_data(data)
                    elif isinstance(event, h11.Response):
                        status = str(event.status_code)
                    elif isinstance(event, h11.Data):
                        room = BODY_LIMIT - received
                        chunks.append(bytes(event.data[:room]))
                        received += min(len(event.data), room)
                        if len(event.data) > room:
                            result.truncated = True
                            break
                    elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                        break
                result.status = status or NO_STATUS
        except asyncio.CancelledError:
            result.error = DROPPED
            raise
        except Exception as error:  # noqa: BLE001  (whatever the guest does is a result, never a crash)
            result.status = NO_STATUS
            elapsed = self._now_ms() - result.started_ms
            result.error = _curl_error(error, self.host, self.port, elapsed, received, connecting)
        finally:
            if writer is not None:
                writer.close()
            result.elapsed_ms = round(self._now_ms() - result.started_ms, 3)
            body = b"".join(chunks)
            result.body, result.body_bytes = literal(body), len(body)

    def _request_bytes(self, protocol: h11.Connection, request: Request) -> bytes:
        headers = [
            ("Host", f"{self.host}:{self.port}"),
            ("User-Agent", "aoe-load-generator"),
            ("Accept", "*/*"),
            ("Connection", "close"),
        ]
        if request.body is not None:
            headers += [("Content-Type", "application/octet-stream"), ("Content-Length", str(len(request.body)))]
        out = protocol.send(h11.Request(method=request.method, target=request.path, headers=headers)) or b""
        if request.body:
            out += protocol.send(h11.Data(data=request.body)) or b""
        return out + (protocol.send(h11.EndOfMessage()) or b"")


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
