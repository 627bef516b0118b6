"""The rollout arena's live v1 on 127.0.0.1:8081: the customer records service the player must replace.

Threaded, so a slow request never stalls the next. /health answers `ready`,
/version answers VERSION, GET /records/<id> the stored bytes (404 when
absent), PUT /records/<id> stores the body (204 once it is on disk, in
`records.sqlite3`). A v2 is this program with VERSION `v2` and PORT 8082 (the
contract says what v2 must answer; nothing here stops a player from copying
it). The directory comes from the environment so tests can run it on a host.
"""

import os
import re
import sqlite3
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERSION = "v1"
PORT = 8081
STATE = os.environ.get("ROLLOUT_DIR", "/var/lib/rollout")
RECORD_PATH = re.compile(r"^/records/([A-Za-z0-9._-]{1,128})$")
MAX_BODY = 1024 * 1024


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
        if self.path == "/version":
            return self.reply(200, VERSION.encode())
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
        db = database()
        try:
            with db:
                db.execute("INSERT OR REPLACE INTO records (id, value) VALUES (?, ?)", (match.group(1), value))
        finally:
            db.close()
        self.reply(204)


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
