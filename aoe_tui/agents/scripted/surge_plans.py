"""Scripted builders of the Traffic Surge arena: one correct, three with the classic mistakes (ARENAS §4).

Each reads the service it was given (the unit, the app, the records), changes
it in its own way, restarts `traffic-surge.service`, checks its work through
the public port and watches it while the referee verifies:
- `surge-oracle`: a threaded app on SQLite WAL (history imported
  insert-if-absent), optional work in 4 non-blocking slots, else 503 at once:
  durable, full points.
- `surge-serial`: keeps the serial app, only shortens its optional sleep
  (0.45 -> 0.3 s) and lengthens its listen queue: a priority write still waits
  behind 8 optional requests, so it stops at priority-first-surge (curl's
  1.5 s timeout).
- `surge-volatile`: the oracle's app with its database under /run (tmpfs):
  restart-under-load passes (it writes after the restart), host-reboot fails.
- `surge-bad-shed`: the oracle's app shedding with 500: stops at
  bounded-optional (neither served nor deliberately shed: 500).
"""

from __future__ import annotations

from aoe_tui.agents.scripted.base import Plan, Step, wait_until_answering
from aoe_tui.agents.scripted.surge_apps import ledger_source

APP = "/opt/traffic-surge/app.py"
UNIT = "traffic-surge.service"
URL = "http://127.0.0.1:8080"
DURABLE_DB = "/var/lib/traffic-surge/priority.sqlite3"
VOLATILE_DB = "/run/traffic-surge/priority.sqlite3"
HISTORY = ("history-amber-a91", "history-cobalt-f73", "history-umber-2d4")


def _look(pace: float) -> Step:
    return Step(
        f"systemctl cat {UNIT} | grep -v '^#'; ls -la /opt/traffic-surge /var/lib/traffic-surge; "
        f"head -c 600 /var/lib/traffic-surge/priority.json; echo; grep -n 'sleep\\|Server' {APP}",
        "Read the service, its unit and its records",
        pace,
    )


def _restart(pace: float) -> Step:
    return Step(
        f"python3 -m py_compile {APP} && systemctl restart {UNIT} && {wait_until_answering(URL, UNIT)}",
        "Restart the service with the new app",
        pace,
    )


def _replace(db: str, shed_status: int, pace: float) -> Step:
    return Step(
        f"cp -n {APP} /opt/traffic-surge/app.py.orig && cat > {APP}.new <<'AOE_APP'\n"
        f"{ledger_source(db, shed_status)}AOE_APP\n"
        f"chmod 0755 {APP}.new && mv -f {APP}.new {APP}",
        f"Write a threaded ledger app (SQLite at {db}, optional work in 4 slots, shed {shed_status})",
        pace * 2,
    )


def _shorten_sleep(pace: float) -> Step:
    """Still one request at a time; the longer listen queue only makes sure no surge request is ever refused, so
    a priority write sent after them always waits behind all of them (the default 5 dropped some, by luck)."""
    return Step(
        f"sed -i -e 's/time.sleep(0.45)/time.sleep(0.3)/' "
        f"-e 's/^    HTTPServer((/    HTTPServer.request_queue_size = 64\\n    HTTPServer((/' {APP} && "
        f"grep -n 'time.sleep\\|request_queue_size' {APP}",
        "Make optional lookups faster (0.45 s -> 0.3 s) and never refuse a client",
        pace,
    )


def _check(pace: float) -> Step:
    history = "; ".join(f"curl -fsS {URL}/priority/{record}; echo" for record in HISTORY)
    return Step(
        f"{history}; curl -fsS -X PUT --data-binary selftest -o /dev/null -w 'put %{{http_code}}\\n' "
        f"{URL}/priority/selftest-surge && curl -fsS {URL}/priority/selftest-surge; echo; "
        f"for i in $(seq 8); do curl -s -o /dev/null -w '%{{http_code}} ' {URL}/optional/selftest-$i & done; wait; echo",
        "Check the history, a write, and a small surge",
        pace,
    )


def _watch(pace: float) -> Step:
    return Step(
        f"for i in $(seq 120); do curl -s -o /dev/null -w '%{{http_code}} ' {URL}/health || echo down; sleep 2; done",
        "Watch the service while the referee verifies",
        pace,
    )


def _threaded(name: str, db: str, shed_status: int, summary: str, pace: float) -> Plan:
    steps = (_look(pace), _replace(db, shed_status, pace), _restart(pace), _check(pace), _watch(pace))
    return Plan(name, db, summary, steps)


SURGE_PLANS: dict[str, Plan] = {
    "surge-oracle": _threaded(
        "surge-oracle",
        DURABLE_DB,
        503,
        "deployed a threaded ledger on SQLite WAL with 4 optional slots, shedding 503",
        3.0,
    ),
    "surge-serial": Plan(
        "surge-serial",
        "/var/lib/traffic-surge/priority.json",
        "kept the serial ledger app, shortened its optional sleep and lengthened its listen queue",
        (_look(0.5), _shorten_sleep(0.5), _restart(0.5), _check(0.5), _watch(0.5)),
    ),
    "surge-volatile": _threaded(
        "surge-volatile",
        VOLATILE_DB,
        503,
        "deployed a threaded ledger with its SQLite database under /run",
        1.0,
    ),
    "surge-bad-shed": _threaded(
        "surge-bad-shed",
        DURABLE_DB,
        500,
        "deployed a threaded ledger on SQLite WAL that sheds optional work with 500",
        1.0,
    ),
}
