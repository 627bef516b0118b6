"""The Reliable Key-Value Store builders: the oracle, the amnesiac and the tmpfs-writer.

Paces differ so a race has a shape: the amnesiac deploys first, the tmpfs-writer second, the oracle last
but correct. After deploying, the oracle soaks its service (its SSH session is what the referee's host
reboot cuts) and the amnesiac keeps load testing (it is still at work when someone else wins).
"""

from __future__ import annotations

from aoe_tui.agents.scripted.apps import app_source
from aoe_tui.agents.scripted.base import APP_PATH, CURL, SERVICE_URL, UNIT, Plan, Step, wait_until_answering


def _write_app(store: str) -> str:
    return f"mkdir -p /opt/builder && cat > {APP_PATH} <<'AOE_APP_EOF'\n{app_source(store)}AOE_APP_EOF"


def _http_check(record: str) -> str:
    return (
        f"{CURL} {SERVICE_URL}/health && echo && "
        f"{CURL} -X PUT --data-binary selftest-{record} {SERVICE_URL}/records/{record} && "
        f"{CURL} {SERVICE_URL}/records/{record}"
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


def durability_plan(name: str, store: str, summary: str, pace: float, extra: tuple[Step, ...]) -> Plan:
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


DURABILITY_PLANS: dict[str, Plan] = {
    "oracle": durability_plan(
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
    "amnesiac": durability_plan(
        "amnesiac",
        "memory",
        "deployed an in-memory key-value service under builder-app.service",
        0.5,
        (Step(_soak(240, 2), "Load test the service", 0.5),),
    ),
    "tmpfs-writer": durability_plan(
        "tmpfs-writer",
        "tmpfs",
        "deployed a file-backed key-value service (records under /run/builder-records)",
        1.5,
        (_restart_check(1.0),),
    ),
}
