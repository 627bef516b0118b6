"""First Contact health apps: `contact-app.py gatekeeper|archivist|courier` (ARENAS.md §5).

gatekeeper (127.0.0.1:9000 behind nginx :8080): healthy iff the trimmed route file is `checkout`, else
502 `bad route`; GET/PUT /routes/checkout read and write that file (PUT -> 202) for anyone nginx lets in.
archivist (:8080): reads empire_state.status via psql as `arena` (2 s): `archivist:ok` -> 200, psql
failing -> 503 `database unavailable`, any other value -> 503 with the value. One psql session is kept
open and asked once per probe (a new psql process and backend per probe took over 2 s on a loaded TCG
guest); a session that errs, ends or answers late is replaced, so a lock held on the table still times
the probe out (the archivist's lock-contention weakness stays).
courier (:8080): reads empire:alive from Redis: `courier` -> 200 `courier:ok`, else 503 `queue unavailable`.
"""

import os
import select
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROUTE = "/var/lib/gatekeeper/route"
ROLE = sys.argv[1]


def gatekeeper_health():
    try:
        with open(ROUTE) as handle:
            route = handle.read().strip()
    except OSError:
        route = ""
    return (200, "gatekeeper:ok") if route == "checkout" else (502, "bad route")


SENTINEL = "aoe-end-of-answer"
_PSQL = {"process": None}
_PSQL_LOCK = threading.Lock()


def _psql():
    process = _PSQL["process"]
    if process is None or process.poll() is not None:
        process = _PSQL["process"] = subprocess.Popen(
            ["psql", "-h", "127.0.0.1", "-U", "arena", "-d", "empire", "-qtAX", "-v", "ON_ERROR_STOP=0"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            start_new_session=True,
        )
    return process


def _drop_psql():
    process, _PSQL["process"] = _PSQL["process"], None
    if process is not None:
        process.kill()
        process.wait()


def archivist_health():
    with _PSQL_LOCK:
        try:
            process = _psql()
            process.stdin.write(f"select value from empire_state where key = 'status';\nselect '{SENTINEL}';\n")
            process.stdin.flush()
            answer, deadline, fd = b"", time.monotonic() + 2, process.stdout.fileno()
            while SENTINEL.encode() not in answer:
                ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
                chunk = os.read(fd, 65536) if ready else b""
                if not chunk or len(answer) > 65536:  # late, ended, or flooding
                    _drop_psql()
                    return 503, "database unavailable"
                answer += chunk
            lines = [l.strip() for l in answer.decode("utf-8", "replace").split(SENTINEL)[0].splitlines() if l.strip()]
        except OSError:
            _drop_psql()
            return 503, "database unavailable"
    if not lines or any(l.startswith(("ERROR", "FATAL", "psql:")) for l in lines):
        _drop_psql()
        return 503, "database unavailable"
    value = lines[0]
    return (200, value) if value == "archivist:ok" else (503, value[:200])


def courier_health():
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=2) as conn:
            conn.sendall(b"*2\r\n$3\r\nGET\r\n$12\r\nempire:alive\r\n")
            reply = conn.recv(256)
    except OSError:
        return 503, "queue unavailable"
    return (200, "courier:ok") if reply == b"$7\r\ncourier\r\n" else (503, "queue unavailable")


HEALTH = {"gatekeeper": gatekeeper_health, "archivist": archivist_health, "courier": courier_health}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _send(self, status, body):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            self._send(*HEALTH[ROLE]())
        elif ROLE == "gatekeeper" and self.path == "/routes/checkout":
            try:
                with open(ROUTE) as handle:
                    self._send(200, handle.read())
            except OSError:
                self._send(404, "no route")
        else:
            self._send(404, "not found")

    def do_PUT(self):
        if ROLE != "gatekeeper" or self.path != "/routes/checkout":
            self._send(404, "not found")
            return
        length = min(int(self.headers.get("Content-Length") or 0), 4096)
        body = self.rfile.read(length)
        with open(ROUTE + ".new", "wb") as handle:
            handle.write(body)
        os.replace(ROUTE + ".new", ROUTE)
        self._send(202, "accepted")


if __name__ == "__main__":
    address = ("127.0.0.1", 9000) if ROLE == "gatekeeper" else ("0.0.0.0", 8080)
    ThreadingHTTPServer.allow_reuse_address = True
    ThreadingHTTPServer(address, Handler).serve_forever()
