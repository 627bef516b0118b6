"""A loopback stand-in of the Zero-Downtime Rollout's public endpoint whose answers a test changes as it goes
(the continuity monitor's and its calibration's tests)."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class RolloutEndpoint:
    """A loopback stand-in of the rollout's public endpoint whose answers a test changes as it goes."""

    def __init__(self) -> None:
        self.version = "v1"
        self.down = False
        self.delay = 0.0
        self.health = b"ready"
        self.drip = False
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                if service.delay:
                    time.sleep(service.delay)
                if service.drip and self.path == "/health":
                    self.send_response(200)
                    self.send_header("Content-Length", "100")
                    self.end_headers()
                    for _ in range(100):  # a byte every 0.3 s: each read is quick, the whole answer is not
                        self.wfile.write(b"r")
                        self.wfile.flush()
                        time.sleep(0.3)
                    return
                bodies = {
                    "/health": service.health.decode("latin-1"),
                    "/version": service.version,
                    "/records/customer-alpha-73c": "alpha-original",
                    "/records/customer-beta-a19": "beta-original",
                }
                status, body = (502, b"") if service.down else (200, bodies.get(self.path, "").encode("latin-1"))
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        class Quiet(ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # a check the monitor gave up on closed its connection

        self.server = Quiet(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
