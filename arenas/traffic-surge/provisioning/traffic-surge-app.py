#!/usr/bin/env python3
"""Ledger service on port 8080: health, priority records (kept in priority.json) and optional lookups.

It answers one request at a time. Optional lookups are slow (0.45 s each).
"""

import json
import os
import re
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

STATE = os.environ.get("TRAFFIC_SURGE_DIR", "/var/lib/traffic-surge")
LEDGER = os.path.join(STATE, "priority.json")
PORT = int(os.environ.get("TRAFFIC_SURGE_PORT", "8080"))
ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


def load():
    try:
        with open(LEDGER) as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save(data):
    temporary = LEDGER + ".tmp"
    with open(temporary, "w") as handle:
        json.dump(data, handle, sort_keys=True)
    os.replace(temporary, LEDGER)


class Handler(BaseHTTPRequestHandler):
    def answer(self, status, body=b""):
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def key(self, prefix):
        if not self.path.startswith(prefix):
            return None
        key = self.path[len(prefix):]
        return key if ID.match(key) else None

    def do_GET(self):
        if self.path == "/health":
            return self.answer(200, b"ready")
        key = self.key("/priority/")
        if key is not None:
            value = load().get(key)
            return self.answer(404, b"not found") if value is None else self.answer(200, str(value).encode())
        key = self.key("/optional/")
        if key is not None:
            time.sleep(0.45)
            return self.answer(200, f"optional:{key}".encode())
        self.answer(404, b"not found")

    def do_PUT(self):
        key = self.key("/priority/")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(min(length, 1 << 20)) if length > 0 else b""
        if key is None:
            return self.answer(404, b"not found")
        data = load()
        data[key] = body.decode("utf-8", "replace")
        save(data)
        self.answer(204)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    HTTPServer(("0.0.0.0", PORT), Handler).serve_forever()
