"""The ledger services the scripted Traffic Surge builders deploy in place of the serial app (ARENAS §4).

One threaded server with the knobs that decide the race (the serial builder
keeps the arena's own app and only shortens its sleep):
- `threaded` + SQLite WAL on disk + non-blocking slots shedding 503 (the
  oracle): priority requests never wait behind optional work, optional work
  is bounded, every accepted write is on disk.
- `threaded` with its database under /run: right until the host reboots.
- `threaded` shedding with 500: overload reported as a server error, not as
  deliberate shedding.
The history in `priority.json` is imported insert-if-absent at every start.
"""

from __future__ import annotations

_SOURCE = '''#!/usr/bin/env python3
"""Ledger service on port 8080: priority records in SQLite, optional lookups bounded."""

import json
import os
import re
import sqlite3
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DB = "{db}"
HISTORY = "/var/lib/traffic-surge/priority.json"
SLOTS = threading.BoundedSemaphore({slots})
OPTIONAL_SECONDS = {optional_seconds}
SHED_STATUS = {shed_status}
ID = re.compile(r"^[A-Za-z0-9._-]{{1,128}}$")
local = threading.local()


def db():
    if getattr(local, "db", None) is None:
        local.db = sqlite3.connect(DB, timeout=30, isolation_level=None)
        local.db.execute("PRAGMA journal_mode=WAL")
        local.db.execute("PRAGMA synchronous=FULL")
    return local.db


def prepare():
    os.makedirs(os.path.dirname(DB), exist_ok=True)
    db().execute("CREATE TABLE IF NOT EXISTS priority (id TEXT PRIMARY KEY, value BLOB NOT NULL)")
    try:
        with open(HISTORY) as handle:
            history = json.load(handle)
    except (OSError, ValueError):
        history = {{}}
    for key, value in (history.items() if isinstance(history, dict) else []):
        db().execute("INSERT OR IGNORE INTO priority (id, value) VALUES (?, ?)", (key, str(value).encode()))


class Handler(BaseHTTPRequestHandler):
    def answer(self, status, body=b""):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def key(self, prefix):
        key = self.path[len(prefix):] if self.path.startswith(prefix) else ""
        return key if ID.match(key) else None

    def do_GET(self):
        if self.path == "/health":
            return self.answer(200, b"ready")
        key = self.key("/priority/")
        if key is not None:
            row = db().execute("SELECT value FROM priority WHERE id = ?", (key,)).fetchone()
            return self.answer(404, b"not found") if row is None else self.answer(200, bytes(row[0]))
        key = self.key("/optional/")
        if key is None:
            return self.answer(404, b"not found")
        if not SLOTS.acquire(blocking=False):
            return self.answer(SHED_STATUS, b"busy")
        try:
            time.sleep(OPTIONAL_SECONDS)
        finally:
            SLOTS.release()
        self.answer(200, ("optional:" + key).encode())

    def do_PUT(self):
        key = self.key("/priority/")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(min(length, 1 << 20)) if length > 0 else b""
        if key is None:
            return self.answer(404, b"not found")
        db().execute("INSERT INTO priority (id, value) VALUES (?, ?) "
                     "ON CONFLICT(id) DO UPDATE SET value = excluded.value", (key, body))
        self.answer(204)

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    allow_reuse_address = True


if __name__ == "__main__":
    prepare()
    Server(("0.0.0.0", 8080), Handler).serve_forever()
'''


def ledger_source(db: str, shed_status: int = 503, slots: int = 4, optional_seconds: float = 0.15) -> str:
    """The program the builder writes to /opt/traffic-surge/app.py."""
    return _SOURCE.format(db=db, slots=slots, optional_seconds=optional_seconds, shed_status=shed_status)
