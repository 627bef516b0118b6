"""Scripted builders of the Durable Job Queue arena: one correct, two with the classic mistakes (ARENAS §1).

Each looks around (finds the accepted jobs in /var/lib/accepted-jobs and the
empty slots), writes an API and a worker under /opt/job-queue, fills the slot
start files in /etc/replaybook and starts both units, then checks its own work
and soaks it. Paces differ so the flawed builders reach the milestone their
mistake breaks before the oracle could win:
- `queue-oracle`: exactly once, SQLite under /var/lib/job-queue: durable, full points.
- `queue-rerunner`: a claim lease shorter than a job, so a job is taken back and
  run twice (attempts 2): stops at recover-accepted.
- `queue-volatile`: the right program with its database under /run (tmpfs):
  stops at host-reboot.
"""

from __future__ import annotations

from aoe_tui.agents.scripted.base import Plan, Step, wait_until_answering
from aoe_tui.agents.scripted.queue_apps import WorkerStyle, api_source, worker_source

QUEUE_DIR = "/opt/job-queue"
SLOTS = ("job-api.service", "job-worker.service")
DURABLE_DB = "/var/lib/job-queue/jobs.sqlite3"
VOLATILE_DB = "/run/job-queue/jobs.sqlite3"
URL = "http://127.0.0.1:8080"


def _write_files(files: dict[str, str], then: str) -> str:
    """One command that writes each file from a here-document, then runs `then`. The bodies follow the
    command line, each ended by its own delimiter alone on a line (a delimiter followed by `&& ...` on
    the same line does not end a here-document: the whole rest of the step became file content)."""
    redirects = " && ".join(f"cat > {path} <<'AOE_FILE_{index}'" for index, path in enumerate(files))
    bodies = "".join(
        f"{text if text.endswith(chr(10)) else text + chr(10)}AOE_FILE_{index}\n"
        for index, text in enumerate(files.values())
    )
    return f"{redirects} && {then}\n{bodies}"


def _steps(db: str, style: WorkerStyle, pace: float) -> tuple[Step, ...]:
    slots = " ".join(SLOTS)
    return (
        Step(
            "ls -la /var/lib/accepted-jobs /etc/replaybook; head -c 400 /var/lib/accepted-jobs/*.json; "
            f"systemctl cat {slots}",
            "Find the earlier work and the service slots",
            pace,
        ),
        Step(
            f"mkdir -p {QUEUE_DIR} && "
            + _write_files(
                {f"{QUEUE_DIR}/api.py": api_source(db), f"{QUEUE_DIR}/worker.py": worker_source(db, style)},
                f"python3 -m py_compile {QUEUE_DIR}/api.py {QUEUE_DIR}/worker.py && echo compiled",
            ),
            f"Write the job API and the worker (database {db})",
            pace * 2,
        ),
        Step(
            f"printf 'exec python3 {QUEUE_DIR}/api.py\\n' > /etc/replaybook/job-api-start && "
            f"printf 'exec python3 {QUEUE_DIR}/worker.py\\n' > /etc/replaybook/job-worker-start && "
            f"systemctl reset-failed {slots}; systemctl restart {slots} && {wait_until_answering(URL, slots)}",
            "Fill both slots and start them",
            pace,
        ),
        Step(
            f"sleep 5; for id in accepted-alpha-7d3 accepted-beta-91e accepted-gamma-c42; do "
            f"curl -fsS {URL}/jobs/$id; echo; done",
            "Check the earlier jobs ran",
            pace,
        ),
        Step(
            f"for i in $(seq 120); do curl -fsS -o /dev/null -w '%{{http_code}} ' {URL}/health || echo down; "
            "sleep 2; done",
            "Watch the queue while the referee verifies",
            pace,
        ),
    )


def _plan(name: str, db: str, style: WorkerStyle, summary: str, pace: float) -> Plan:
    return Plan(name, db, summary, _steps(db, style, pace))


QUEUE_PLANS = {
    "queue-oracle": _plan(
        "queue-oracle",
        DURABLE_DB,
        "exactly-once",
        "deployed an exactly-once SQLite job queue in job-api.service and job-worker.service",
        3.0,
    ),
    "queue-rerunner": _plan(
        "queue-rerunner", DURABLE_DB, "short-lease", "deployed a leased job queue (four workers, 1 s claim lease)", 1.0
    ),
    "queue-volatile": _plan(
        "queue-volatile", VOLATILE_DB, "exactly-once", "deployed a SQLite job queue with its database under /run", 0.5
    ),
}
