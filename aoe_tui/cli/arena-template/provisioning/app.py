"""The records service every guest of this arena starts with (written to /opt/records/app.py).

HTTP on port 8080: GET /health -> 200 `ready`; PUT /records/<id> stores the exact body -> 204;
GET /records/<id> -> 200 with those bytes, 404 if unknown. Each record is one file under
RECORDS_DIR, written to a temporary file, fsync'd and renamed into place. The unit sets
RECORDS_DIR=/run/records: tmpfs, gone after a reboot. That is the flaw the player must find.
"""

import os
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RECORDS_DIR = os.environ.get("RECORDS_DIR", "/run/records")
RECORD_PATH = re.compile(r"^/records/([A-Za-z0-9._-]{1,128})$")
MAX_BODY = 1024 * 1024


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
        try:
            with open(os.path.join(RECORDS_DIR, match.group(1)), "rb") as record:
                return self.reply(200, record.read())
        except FileNotFoundError:
            return self.reply(404)

    def do_PUT(self):
        match = RECORD_PATH.match(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        if not match or length > MAX_BODY:
            return self.reply(404 if not match else 413)
        os.makedirs(RECORDS_DIR, exist_ok=True)
        path = os.path.join(RECORDS_DIR, match.group(1))
        with open(path + ".new", "wb") as record:
            record.write(self.rfile.read(length))
            record.flush()
            os.fsync(record.fileno())
        os.replace(path + ".new", path)
        self.reply(204)


if __name__ == "__main__":
    ThreadingHTTPServer(("0.0.0.0", 8080), Handler).serve_forever()
