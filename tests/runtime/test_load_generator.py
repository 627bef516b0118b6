"""The host-side load generator against loopback servers of known behaviour: a burst is really concurrent, a
request without an answer is status 000 in curl's words, bodies are bounded and shown literally, and a bad plan
is the arena's fault (exit 2), never a crash."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from aoe_tui.runtime.load_generator import BODY_LIMIT, PlanError, main, parse_plan, run_plan


class _Handler(BaseHTTPRequestHandler):
    arrivals: list[float] = []

    def do_GET(self):
        type(self).arrivals.append(time.monotonic())
        if self.path.startswith("/slow"):
            time.sleep(0.5)
        if self.path == "/huge":
            body = b"x" * (4 * BODY_LIMIT)
        elif self.path == "/bytes":
            body = b"ok\xff\x00\n"
        elif self.path == "/reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            self.connection.close()
            return
        else:
            body = self.path.encode()
        self.send_response(503 if self.path.startswith("/shed") else 200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass  # the client stopped reading (a bounded body)

    def do_PUT(self):
        length = int(self.headers["Content-Length"])
        self.server.stored = self.rfile.read(length)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # listen()'s backlog: the default 5 drops a burst's SYNs (retried 1 s later)


@pytest.fixture
def server():
    _Handler.arrivals = []
    httpd = _Server(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_a_burst_is_in_flight_at_once_and_reports_each_answer(server):
    _, url = server
    plan = parse_plan({"load": {"count": 24, "path": "/slow/{i}", "timeout": 4}, "wait_for_load": True})
    started = time.monotonic()
    report = run_plan(url, plan)
    assert time.monotonic() - started < 2.0  # 24 x 0.5 s in parallel, not in turn
    assert [(r.i, r.status, r.body) for r in report.load] == [(i, "200", f"/slow/{i}") for i in range(1, 25)]
    arrivals = _Handler.arrivals
    assert len(arrivals) == 24 and max(arrivals) - min(arrivals) < 0.25
    assert report.start_spread_ms is not None and report.start_spread_ms < 250


def test_requests_follow_the_load_and_a_timeout_is_000_in_curls_words(server):
    httpd, url = server
    plan = parse_plan(
        {
            "load": {"count": 3, "path": "/slow/{i}", "timeout": 0.2},
            "after": 0.05,
            "requests": [
                {"method": "PUT", "path": "/priority/a", "body": "value-1", "timeout": 1, "expect": [204]},
                {"path": "/slow/x", "timeout": 0.3, "expect": [200]},
                {"path": "/never-sent"},
            ],
            "wait_for_load": True,
        }
    )
    report = run_plan(url, plan)
    assert httpd.stored == b"value-1"
    put, slow = report.requests  # the timeout stopped the sequence: the third was never sent
    assert put.status == "204" and put.started_ms >= 50
    assert slow.status == "000" and slow.error.startswith("curl: (28) Operation timed out after 3")
    assert slow.error.endswith(" milliseconds with 0 bytes received")
    assert all(r.status == "000" and r.error.startswith("curl: (28)") for r in report.load)


def test_bodies_are_bounded_and_literal_and_failures_are_worded(server):
    _, url = server
    plan = parse_plan({"requests": [{"path": "/huge"}, {"path": "/bytes"}, {"path": "/shed/1"}, {"path": "/reset"}]})
    huge, raw, shed, reset = run_plan(url, plan).requests
    assert huge.body_bytes == BODY_LIMIT and huge.truncated and huge.status == "200"
    assert raw.body == "ok\\xff\x00\n" and not raw.truncated
    assert (shed.status, shed.body) == ("503", "/shed/1")
    assert reset.status == "000" and reset.error in (
        "curl: (56) Recv failure: Connection reset by peer",
        "curl: (52) Empty reply from server",
    )
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    [refused] = run_plan(f"http://127.0.0.1:{port}", parse_plan({"requests": [{"path": "/"}]})).requests
    assert refused.status == "000"
    assert refused.error.startswith(f"curl: (7) Failed to connect to 127.0.0.1 port {port} after ")


def test_a_stream_goes_one_after_another_and_a_dropped_load_says_so(server):
    _, url = server
    report = run_plan(
        url, parse_plan({"load": {"count": 3, "path": "/s/{i}", "mode": "stream"}, "wait_for_load": True})
    )
    assert [r.status for r in report.load] == ["200"] * 3 and report.start_spread_ms is None
    assert report.load[1].started_ms >= report.load[0].started_ms + report.load[0].elapsed_ms
    dropped = run_plan(url, parse_plan({"load": {"count": 2, "path": "/slow/{i}"}, "requests": [{"path": "/x"}]}))
    assert dropped.requests[0].status == "200"
    assert {r.error for r in dropped.load} == {"dropped unanswered: the requests after the load were done"}


@pytest.mark.parametrize(
    "plan",
    [[], {"load": {"count": 0, "path": "/x"}}, {"load": {"count": 2, "path": "x"}}, {"requests": [{"method": "GOT"}]}],
)
def test_a_bad_plan_is_refused(plan):
    with pytest.raises(PlanError):
        parse_plan(plan)


def test_the_program_prints_json_and_exits_2_on_a_bad_plan(server, capsys):
    _, url = server
    assert main([url, json.dumps({"requests": [{"path": "/p"}]})]) == 0
    assert json.loads(capsys.readouterr().out)["requests"][0]["body"] == "/p"
    assert main([url, "{"]) == 2 and main(["ftp://x", "{}"]) == 2 and main([url + "/path", "{}"]) == 2
    run = subprocess.run(
        [sys.executable, "-m", "aoe_tui.runtime.load_generator", url, '{"requests": [{"path": "/q"}]}'],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(run.stdout)["requests"][0]["status"] == "200"


class _SerialServer(ThreadingHTTPServer):
    """One request at a time and a listen queue of 1, like the arena's starting app on a crowded port."""

    request_queue_size = 1

    def process_request(self, request, client_address):
        self.finish_request(request, client_address)  # in turn, not in a thread
        self.shutdown_request(request)


class _PatientSerialServer(_SerialServer):
    """Serial, but never refuses a client (the `surge-serial` builder's app): whoever connects first is served
    first, so the order in which the burst and the priority write connect decides the verdict."""

    request_queue_size = 64


SURGE = {
    "load": {"count": 8, "path": "/slow/{i}", "timeout": 5},
    "after": 0.1,
    "requests": [{"method": "PUT", "path": "/priority/p", "body": "v", "timeout": 1.5, "expect": [204]}],
}


def _serve(httpd: ThreadingHTTPServer) -> str:
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}"


def test_a_burst_wider_than_a_serial_servers_queue_is_released_without_waiting_to_connect(server):
    """A serial server accepts one connection and waits for its request: the burst must not wait the whole
    connect timeout for connections it can never accept; the PUT after it is judged from its release, and
    queues behind the burst."""
    _Handler.arrivals = []
    httpd = _SerialServer(("127.0.0.1", 0), _Handler)
    try:
        started = time.monotonic()
        report = run_plan(_serve(httpd), parse_plan(SURGE))
        [put] = report.requests
        assert put.status == "000" and put.error.startswith("curl: (28) Operation timed out after 15"), put
        assert time.monotonic() - started < 6, "the burst waited for connections the server could not accept"
    finally:
        httpd.shutdown()
        httpd.server_close()


class _Forward:
    """QEMU's user-mode port forward as libslirp makes it: a listen queue 1 deep, each connection accepted in
    turn and connected onward to the guest before the next is accepted."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=1)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            guest = socket.create_connection(self.target)
            for source, sink in ((client, guest), (guest, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def test_the_priority_write_queues_behind_the_whole_burst_at_a_forwarded_port():
    """Opened all at once, a burst's connections lose SYNs at the forward's 1-deep queue and the kernel retries
    them a second later, so the priority write's connection sometimes reached a serial guest first and was
    answered at once: the verdict was luck. Opened in order, it queues behind all 8 every time, and a serial
    server that needs 8 x 0.5 s for them cannot answer it within 1.5 s."""
    httpd = _PatientSerialServer(("127.0.0.1", 0), _Handler)
    _serve(httpd)
    forward = _Forward(httpd.server_address)
    try:
        for _ in range(2):
            _Handler.arrivals = []
            report = run_plan(forward.url, parse_plan(SURGE))
            [put] = report.requests
            # cut at its 1.5 s, give or take a loaded host's scheduling
            assert put.status == "000" and re.match(r"curl: \(28\) Operation timed out after 1[5-9]\d\d ", put.error), (
                put
            )
            assert report.load_connected == 8 and report.start_spread_ms < 50, report
    finally:
        forward.listener.close()
        httpd.shutdown()
        httpd.server_close()
