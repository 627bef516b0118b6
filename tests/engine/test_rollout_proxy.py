"""The rollout arena's proxy relays within the referee's calibrated bound (`relay-timeout-ms`, written before any
agent acts), 2 s without it: an honest upstream answering in 2.5 s is a 502 at the original's fixed 2 s and its
own answer at a 4 s bound; a bound out of range is clamped, never unbounded."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from tests.fixture_paths import PROJECT
from tests.serve.served import free_port

PROXY = PROJECT / "arenas" / "zero-downtime-rollout" / "provisioning" / "rollout-proxy.py"
SLOW_SECONDS = 2.5


@pytest.fixture
def slow_upstream():
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            time.sleep(SLOW_SECONDS)
            body = b"v1"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def proxy(tmp_path, slow_upstream):
    (tmp_path / "upstream").write_text(f"{slow_upstream}\n")
    relay_file = tmp_path / "relay-timeout-ms"
    port = free_port()
    env = {"ROLLOUT_DIR": str(tmp_path), "ROLLOUT_PROXY_PORT": str(port), "ROLLOUT_RELAY_FILE": str(relay_file)}
    process = subprocess.Popen([sys.executable, str(PROXY)], env=env)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # listening (a request would wait on the slow upstream)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        except OSError:
            time.sleep(0.05)
        else:
            break
    yield f"http://127.0.0.1:{port}/version", relay_file
    process.kill()
    process.wait()


def _get(url: str) -> tuple[int, str, float]:
    started = time.monotonic()
    answer = httpx.get(url, timeout=15)
    return answer.status_code, answer.text, time.monotonic() - started


def test_without_the_calibrated_bound_a_slow_honest_answer_is_a_502_at_2_s(proxy):
    url, _ = proxy
    status, body, took = _get(url)
    assert (status, body) == (502, "") and 1.9 <= took < SLOW_SECONDS


def test_with_the_calibrated_bound_the_same_answer_is_relayed(proxy):
    url, relay_file = proxy
    relay_file.write_text("4000\n")
    status, body, took = _get(url)
    assert (status, body) == (200, "v1") and took >= SLOW_SECONDS


def test_a_bound_out_of_range_is_clamped(proxy):
    url, relay_file = proxy
    relay_file.write_text("999999999\n")  # a player with root could write this: 10 s at most
    status, body, _ = _get(url)
    assert (status, body) == (200, "v1")
    relay_file.write_text("5\n")  # never below the original's 1 s floor either
    status, _, took = _get(url)
    assert status == 502 and took >= 0.9
