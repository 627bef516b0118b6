"""A scripted "model" that builds First Build's durable record service correctly.

It drives the harness exactly like a real model would: discovery, a file
write, starting the unit, a self-check, then a summary without tool calls.
"""

from __future__ import annotations

from tests.agents_real.fake_provider import Step, bash, final, tool_calls

APP = r'''
import os
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DATA = "/var/lib/builder/records"
RECORD = re.compile(r"^/records/([A-Za-z0-9._-]{1,200})$")
os.makedirs(DATA, exist_ok=True)


def durable_write(name, body):
    temporary = os.path.join(DATA, "." + name + ".tmp")
    with open(temporary, "wb") as handle:
        handle.write(body)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, os.path.join(DATA, name))
    directory = os.open(DATA, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


class Handler(BaseHTTPRequestHandler):
    def reply(self, status, body=b""):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/health":
            return self.reply(200, b"ready")
        match = RECORD.match(self.path)
        if not match:
            return self.reply(404)
        try:
            with open(os.path.join(DATA, match.group(1)), "rb") as handle:
                return self.reply(200, handle.read())
        except FileNotFoundError:
            return self.reply(404)

    def do_PUT(self):
        match = RECORD.match(self.path)
        if not match:
            return self.reply(404)
        durable_write(match.group(1), self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self.reply(204)

    def log_message(self, *_args):
        pass


ThreadingHTTPServer(("0.0.0.0", 8080), Handler).serve_forever()
'''

START = ("systemctl enable builder-app.service && systemctl restart builder-app.service && "
         "for i in $(seq 60); do curl -fsS http://127.0.0.1:8080/health && exit 0; sleep 0.5; done; exit 1")
SELF_CHECK = ("curl -sS -X PUT --data-binary opaque-self-check http://127.0.0.1:8080/records/self-check "
              "-o /dev/null -w '%{http_code} '; curl -sS http://127.0.0.1:8080/records/self-check")
SUMMARY = "Deployed /opt/builder/app.py (stdlib HTTP, records as fsync'd files) under builder-app.service."


def builder_script(final_delay_s: float = 0.0) -> list[Step]:
    last = final(SUMMARY)
    last.delay_s = final_delay_s
    return [
        tool_calls(bash("systemctl cat builder-app.service; ls -la /opt/builder", "Inspect the service slot")),
        tool_calls(("write_file", {"path": "/opt/builder/app.py", "content": APP})),
        tool_calls(bash(START, "Start the unit and wait for health")),
        tool_calls(("read_file", {"path": "/opt/builder/app.py"}), bash(SELF_CHECK, "Round-trip one record")),
        last,
    ]
