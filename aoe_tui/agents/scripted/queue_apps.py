"""The job queue each scripted Durable Job Queue builder deploys: one API, one worker, three ways to run it.

The API is shared, so the builders differ only in what decides the race:
- `exactly-once` (the oracle): SQLite on disk; every start imports the spool
  insert-if-absent as queued/0; the worker completes the oldest queued job in
  one write-locked transaction guarded by its status.
- `short-lease` (a classic at-least-once mistake): workers claim a job with a
  lease shorter than the job takes, so a second worker takes the same job back
  and it runs twice (attempts 2).
- the same program with its database under /run (tmpfs): survives a worker
  restart, never a reboot.
Paths come from the environment (`QUEUE_DB`, `QUEUE_SPOOL`, `QUEUE_PORT`) so
tests can run the very same source on the host.
"""

from __future__ import annotations

from typing import Literal

WorkerStyle = Literal["exactly-once", "short-lease"]

_COMMON = '''
import glob
import json
import os
import sqlite3
import time

DB = os.environ.get("QUEUE_DB", "{db}")
SPOOL = os.environ.get("QUEUE_SPOOL", "/var/lib/accepted-jobs")


def connect():
    os.makedirs(os.path.dirname(DB), exist_ok=True)
    db = sqlite3.connect(DB, timeout=30, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, payload TEXT NOT NULL, status TEXT NOT NULL,"
               " result TEXT, attempts INTEGER NOT NULL DEFAULT 0, lease REAL NOT NULL DEFAULT 0)")
    return db


def import_spool(db):
    """Jobs accepted before we existed: queued once, never replaced (insert-if-absent)."""
    for path in sorted(glob.glob(os.path.join(SPOOL, "*.json"))):
        try:
            with open(path) as handle:
                job = json.load(handle)
        except (OSError, ValueError):
            continue
        if isinstance(job, dict) and isinstance(job.get("id"), str) and isinstance(job.get("payload"), str):
            db.execute("INSERT OR IGNORE INTO jobs (id, payload, status, attempts) VALUES (?, ?, 'queued', 0)",
                       (job["id"], job["payload"]))
'''

_API = """
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

JOB_PATH = re.compile(r"^/jobs/([A-Za-z0-9._-]{1,128})$")
LOCAL = threading.local()


def db():
    if not hasattr(LOCAL, "db"):
        LOCAL.db = connect()
    return LOCAL.db


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", kind="text/plain"):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/health":
            return self.reply(200, b"ready")
        match = JOB_PATH.match(self.path)
        row = match and db().execute("SELECT id, payload, status, result, attempts FROM jobs WHERE id = ?",
                                     (match.group(1),)).fetchone()
        if not row:
            return self.reply(404)
        job = dict(zip(("id", "payload", "status", "result", "attempts"), row))
        self.reply(200, json.dumps(job).encode(), "application/json")

    def do_POST(self):
        match = JOB_PATH.match(self.path)
        if not match:
            return self.reply(404)
        payload = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        try:
            db().execute("INSERT INTO jobs (id, payload, status, attempts) VALUES (?, ?, 'queued', 0)",
                         (match.group(1), payload))
        except sqlite3.IntegrityError:
            return self.reply(409)
        self.reply(202)


if __name__ == "__main__":
    import_spool(connect())
    ThreadingHTTPServer(("0.0.0.0", int(os.environ.get("QUEUE_PORT", "8080"))), Handler).serve_forever()
"""

_EXACTLY_ONCE_WORKER = '''

def complete_one(db):
    """Claim and complete the oldest queued job in one write-locked transaction; False when idle."""
    db.execute("BEGIN IMMEDIATE")
    try:
        row = db.execute("SELECT id, payload FROM jobs WHERE status = 'queued' ORDER BY rowid LIMIT 1").fetchone()
        if row:
            db.execute("UPDATE jobs SET status = 'completed', result = ?, attempts = attempts + 1"
                       " WHERE id = ? AND status = 'queued'", ("processed:" + row[1], row[0]))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return row is not None


if __name__ == "__main__":
    connection = connect()
    import_spool(connection)
    while True:
        if not complete_one(connection):
            time.sleep(0.1)
'''

_SHORT_LEASE_WORKER = """
import threading

LEASE_SECONDS = 1.0  # "plenty": a job takes about three


def claim(db):
    now = time.time()
    db.execute("BEGIN IMMEDIATE")
    row = db.execute("SELECT id, payload FROM jobs WHERE status = 'queued' OR (status = 'running' AND lease < ?)"
                     " ORDER BY rowid LIMIT 1", (now,)).fetchone()
    if row:
        db.execute("UPDATE jobs SET status = 'running', attempts = attempts + 1, lease = ? WHERE id = ?",
                   (now + LEASE_SECONDS, row[0]))
    db.execute("COMMIT")
    return row


def work():
    db = connect()
    while True:
        job = claim(db)
        if job is None:
            time.sleep(0.1)
            continue
        time.sleep(3)  # the job's real work
        db.execute("UPDATE jobs SET status = 'completed', result = ? WHERE id = ?", ("processed:" + job[1], job[0]))


if __name__ == "__main__":
    import_spool(connect())
    for _ in range(4):
        threading.Thread(target=work, daemon=True).start()
    threading.Event().wait()
"""


def api_source(db: str) -> str:
    return _COMMON.replace("{db}", db) + _API


def worker_source(db: str, style: WorkerStyle) -> str:
    return _COMMON.replace("{db}", db) + (_EXACTLY_ONCE_WORKER if style == "exactly-once" else _SHORT_LEASE_WORKER)
