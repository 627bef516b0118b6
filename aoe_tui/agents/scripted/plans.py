"""What each scripted builder does, step by step, and at what pace.

A plan is data: the shell commands a careful (or careless) engineer would
type, with a "thinking" pause before each. Paces differ so a race has a
shape: the amnesiac deploys first, the tmpfs-writer second, the oracle last
but correct. After deploying, the oracle soaks its service (its SSH session
is what the referee's host reboot cuts) and the amnesiac keeps load testing
(it is still at work when someone else wins).
"""

from __future__ import annotations

from dataclasses import dataclass

from aoe_tui.agents.scripted.apps import app_source

APP_PATH = "/opt/builder/app.py"
UNIT = "builder-app.service"
SERVICE_URL = "http://127.0.0.1:8080"
# A careful engineer's curl: patient with a service that is still starting, or that the referee is restarting
# right now (its service-restart check; a TCG guest under load takes well over 10 s to bring it back). Every
# error is retried: a restart mid-request resets the connection (curl exit 56), which plain --retry gives up on.
CURL = "curl -fsS --retry 60 --retry-all-errors --retry-delay 1"


@dataclass(frozen=True)
class Step:
    command: str
    description: str
    think_seconds: float
    on_host: bool = False  # run with bash on the referee's host (as the adapter), not over SSH in the guest


@dataclass(frozen=True)
class Plan:
    name: str
    store: str
    summary: str
    steps: tuple[Step, ...]


def _write_app(store: str) -> str:
    return f"mkdir -p /opt/builder && cat > {APP_PATH} <<'AOE_APP_EOF'\n{app_source(store)}AOE_APP_EOF"


def _http_check(record: str) -> str:
    return (
        f"{CURL} {SERVICE_URL}/health && echo && "
        f"{CURL} -X PUT --data-binary selftest-{record} {SERVICE_URL}/records/{record} && "
        f"{CURL} {SERVICE_URL}/records/{record}"
    )


def wait_until_answering(url: str, units: str, tries: int = 240) -> str:
    """Wait (up to 2 minutes: a TCG guest under load starts Python slowly) until the units are active and answer.

    The referee may restart the service at any moment (its own service-restart check), so the last word is a
    patient curl, not a one-shot one: a careful engineer does not fail their own check over the referee's. A
    service that never came up still fails the step, showing the units' states.
    """
    return (
        f"{{ up=; for i in $(seq {tries}); do "
        f"curl -fsS {url}/health >/dev/null 2>&1 && systemctl is-active {units} >/dev/null && up=1 && break; "
        "sleep 0.5; done; "
        f'if [ "$up" ]; then {CURL} {url}/health && echo && echo "active: {units}"; '
        f"else systemctl is-active {units}; false; fi; }}"
    )


def _restart_check(think_seconds: float) -> Step:
    return Step(
        f"systemctl restart {UNIT} && {wait_until_answering(SERVICE_URL, UNIT)} && {CURL} {SERVICE_URL}/records/selftest-1",
        "Prove a record survives a service restart",
        think_seconds,
    )


def _soak(seconds: int, interval: int) -> str:
    return (
        f"for i in $(seq {seconds // interval}); do "
        f"curl -fsS -o /dev/null -w '%{{http_code}} ' {SERVICE_URL}/health || echo down; sleep {interval}; done"
    )


def _plan(name: str, store: str, summary: str, pace: float, extra: tuple[Step, ...]) -> Plan:
    steps = (
        Step(
            "cat /etc/os-release | head -n 2 && python3 --version && systemctl cat " + UNIT,
            "Look at the guest and the service slot",
            pace,
        ),
        Step(_write_app(store), f"Write the key-value service ({store} storage)", pace * 2),
        Step(f"python3 -m py_compile {APP_PATH} && echo compiled", "Check the app compiles", pace),
        Step(
            f"systemctl enable {UNIT} && systemctl restart {UNIT} && {wait_until_answering(SERVICE_URL, UNIT)}",
            "Start the service through its unit",
            pace,
        ),
        Step(_http_check("selftest-1"), "Check health, write and read back", pace),
    )
    return Plan(name, store, summary, steps + extra)


PLANS = {
    "oracle": _plan(
        "oracle",
        "sqlite",
        "deployed a SQLite-backed key-value service under builder-app.service",
        3.0,
        (
            _restart_check(2.0),
            Step("sync && ls -l /var/lib/builder", "Flush and inspect the data directory", 1.0),
            Step(_soak(180, 3), "Soak test the service while the referee verifies", 1.0),
        ),
    ),
    "amnesiac": _plan(
        "amnesiac",
        "memory",
        "deployed an in-memory key-value service under builder-app.service",
        0.5,
        (Step(_soak(240, 2), "Load test the service", 0.5),),
    ),
    "tmpfs-writer": _plan(
        "tmpfs-writer",
        "tmpfs",
        "deployed a file-backed key-value service (records under /run/builder-records)",
        1.5,
        (_restart_check(1.0),),
    ),
}

from aoe_tui.agents.scripted.cheat_durability import CHEATS  # noqa: E402  (adversarial builders, issue 10)

PLANS.update(CHEATS)
from aoe_tui.agents.scripted.cheat_reach import REACH_CHEATS  # noqa: E402  (adapter confinement, issue 10)

PLANS.update(REACH_CHEATS)
from aoe_tui.agents.scripted.cheat_flood import FLOOD_CHEATS  # noqa: E402  (bounded, inert input, issue 10)

PLANS.update(FLOOD_CHEATS)
from aoe_tui.agents.scripted.queue_plans import QUEUE_PLANS  # noqa: E402  (Durable Job Queue builders, issue 12)

PLANS.update(QUEUE_PLANS)
from aoe_tui.agents.scripted.failover_plans import FAILOVER_PLANS  # noqa: E402  (Primary Failover builders, issue 12)

PLANS.update(FAILOVER_PLANS)
from aoe_tui.agents.scripted.surge_plans import SURGE_PLANS  # noqa: E402  (Traffic Surge builders, issue 18)

PLANS.update(SURGE_PLANS)
from aoe_tui.agents.scripted.rollout_plans import ROLLOUT_PLANS  # noqa: E402  (Zero-Downtime Rollout builders, issue 18)

PLANS.update(ROLLOUT_PLANS)
from aoe_tui.agents.scripted.conquest_plans import CONQUEST_PLANS  # noqa: E402  (First Contact players, issue 18)

PLANS.update(CONQUEST_PLANS)
