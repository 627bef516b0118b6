"""The failover arena's replica on 127.0.0.1:8082: serves the customer records, accepts writes only once promoted.

Its role is read from `replica.role` on every request, so a promotion is one
atomic write of that file and takes effect at once, without a restart. A PUT
while the role is anything but `primary` answers 503 `read-only`. Records live
in `records.sqlite3` beside it (a 204 means the bytes are on disk). The
directory and port come from the environment so tests can run it on a host.
"""

import os
import re
import sqlite3
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE = os.environ.get("FAILOVER_DIR", "/var/lib/failover")
PORT = int(os.environ.get("FAILOVER_REPLICA_PORT", "8082"))
RECORD_PATH = re.compile(r"^/records/([A-Za-z0-9._-]{1,128})$")
MAX_BODY = 1024 * 1024


def role():
    try:
        with open(os.path.join(STATE, "replica.role"), encoding="utf-8", errors="replace") as handle:
            return handle.read(64).strip()
    except OSError:
        return ""


def database():
    db = sqlite3.connect(os.path.join(STATE, "records.sqlite3"), timeout=10)
    db.execute("PRAGMA synchronous=FULL")
    return db


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body=b""):
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/health":
            return self.reply(200, b"ready")
        if self.path == "/role":
            return self.reply(200, role().encode())
        match = RECORD_PATH.match(self.path)
        if not match:
            return self.reply(404)
        db = database()
        try:
            row = db.execute("SELECT value FROM records WHERE id = ?", (match.group(1),)).fetchone()
        finally:
            db.close()
        if row is None:
            return self.reply(404)
        value = row[0]
        self.reply(200, value.encode() if isinstance(value, str) else bytes(value))

    def do_PUT(self):
        match = RECORD_PATH.match(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        if not match:
            return self.reply(404)
        if not 0 <= length <= MAX_BODY:
            return self.reply(413)
        value = self.rfile.read(length)
        if role() != "primary":
            return self.reply(503, b"read-only")
        db = database()
        try:
            with db:
                db.execute("INSERT OR REPLACE INTO records (id, value) VALUES (?, ?)", (match.group(1), value))
        finally:
            db.close()
        self.reply(204)


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
