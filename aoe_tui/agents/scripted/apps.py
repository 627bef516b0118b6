"""The service each scripted builder deploys: one HTTP server, three ways to keep records.

The server is shared so the builders differ only in what decides the race:
where records live. `oracle` uses SQLite on disk (survives everything),
`amnesiac` a dict in process memory (lost on a service restart),
`tmpfs-writer` fsync'd files under /run, which is tmpfs (lost on a reboot).
The port can be overridden (`BUILDER_PORT`) so tests can run the very same
source on the host.
"""

from __future__ import annotations

_SERVER = """
import os
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RECORD_PATH = re.compile(r"^/records/([A-Za-z0-9._-]{1,128})$")


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body=b""):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/health":
            return self.reply(200, b"ready")
        match = RECORD_PATH.match(self.path)
        if not match:
            return self.reply(404)
        value = STORE.get(match.group(1))
        return self.reply(404) if value is None else self.reply(200, value)

    def do_PUT(self):
        match = RECORD_PATH.match(self.path)
        if not match:
            return self.reply(404)
        STORE.put(match.group(1), self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        self.reply(204)


if __name__ == "__main__":
    STORE = Store()
    ThreadingHTTPServer(("0.0.0.0", int(os.environ.get("BUILDER_PORT", "8080"))), Handler).serve_forever()
"""

_SQLITE_STORE = '''
import sqlite3
import threading

DATA_DIR = os.environ.get("BUILDER_DATA", "/var/lib/builder")


class Store:
    """Records in SQLite with synchronous=FULL: a 204 means the bytes are on disk."""

    def __init__(self):
        os.makedirs(DATA_DIR, exist_ok=True)
        self.db = sqlite3.connect(os.path.join(DATA_DIR, "records.db"), check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("CREATE TABLE IF NOT EXISTS records (id TEXT PRIMARY KEY, value BLOB NOT NULL)")
        self.db.commit()
        self.lock = threading.Lock()

    def get(self, record_id):
        with self.lock:
            row = self.db.execute("SELECT value FROM records WHERE id = ?", (record_id,)).fetchone()
        return bytes(row[0]) if row else None

    def put(self, record_id, value):
        with self.lock:
            self.db.execute("INSERT OR REPLACE INTO records (id, value) VALUES (?, ?)", (record_id, value))
            self.db.commit()
'''

_MEMORY_STORE = '''
import threading


class Store:
    """Records in a dict: fast, and gone whenever the process restarts."""

    def __init__(self):
        self.records = {}
        self.lock = threading.Lock()

    def get(self, record_id):
        with self.lock:
            return self.records.get(record_id)

    def put(self, record_id, value):
        with self.lock:
            self.records[record_id] = value
'''

_TMPFS_STORE = '''
DATA_DIR = os.environ.get("BUILDER_DATA", "/run/builder-records")


class Store:
    """One fsync'd file per record under /run: survives a restart, but /run is tmpfs."""

    def __init__(self):
        os.makedirs(DATA_DIR, exist_ok=True)

    def get(self, record_id):
        try:
            with open(os.path.join(DATA_DIR, record_id), "rb") as handle:
                return handle.read()
        except FileNotFoundError:
            return None

    def put(self, record_id, value):
        temporary = os.path.join(DATA_DIR, "." + record_id + ".tmp")
        with open(temporary, "wb") as handle:
            handle.write(value)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, os.path.join(DATA_DIR, record_id))
'''

STORES = {"sqlite": _SQLITE_STORE, "memory": _MEMORY_STORE, "tmpfs": _TMPFS_STORE}


def app_source(store: str) -> str:
    """A complete `app.py` keeping records with the named store."""
    imports, _, server = _SERVER.partition("\nRECORD_PATH")
    return f'"""Key-value service for builder-app.service."""\n{imports}{STORES[store]}\nRECORD_PATH{server}'
