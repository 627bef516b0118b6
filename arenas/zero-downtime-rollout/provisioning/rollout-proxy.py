"""The rollout arena's public proxy on 0.0.0.0:8080: relays each request to the port named in `upstream`.

The port is read from `upstream` on every request, so a switch is one atomic
write of that file. GET and PUT go to 127.0.0.1:<port> within the relay bound
and their status and body come back as they are; anything that goes wrong (an
unreadable or empty control file, nothing listening there, a timeout) is a 502
with an empty body. The directory and ports come from the environment so tests
can run it on a host.

The relay bound is the referee's: the continuity monitor's check timeout,
calibrated on these guests before any agent acts and written to RELAY_FILE
(OPERATORS.md, "Calibration"), read on every request; 2 s (the original's)
when the file is missing or unreadable. A fixed 2 s made the proxy answer 502
for an honest v1 that a busy emulated guest answered in 2.1 s.
"""

import http.client
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE = os.environ.get("ROLLOUT_DIR", "/var/lib/rollout")
PORT = int(os.environ.get("ROLLOUT_PROXY_PORT", "8080"))
RELAY_FILE = os.environ.get("ROLLOUT_RELAY_FILE", "/etc/aoe-rollout/relay-timeout-ms")
RELAY_SECONDS = 2
MAX_BODY = 1024 * 1024


def relay_seconds():
    try:
        with open(RELAY_FILE, encoding="ascii") as handle:
            return min(max(int(handle.read(16).strip()), 1000), 10000) / 1000
    except (OSError, ValueError):
        return RELAY_SECONDS


def upstream_port():
    with open(os.path.join(STATE, "upstream"), encoding="ascii") as handle:
        port = int(handle.read(16).strip())
    if not 0 < port < 65536:
        raise ValueError(port)
    return port


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body=b""):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def relay(self, method):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(min(max(length, 0), MAX_BODY)) if method == "PUT" else None
        try:
            upstream = http.client.HTTPConnection("127.0.0.1", upstream_port(), timeout=relay_seconds())
            try:
                upstream.request(method, self.path, body=body)
                answer = upstream.getresponse()
                status, data = answer.status, answer.read(MAX_BODY)
            finally:
                upstream.close()
        except Exception:
            status, data = 502, b""
        self.reply(status, data)

    def do_GET(self):
        self.relay("GET")

    def do_PUT(self):
        self.relay("PUT")


if __name__ == "__main__":
    ThreadingHTTPServer(("0.0.0.0", PORT), Handler).serve_forever()
