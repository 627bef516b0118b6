"""Scripted builders of the Primary Failover arena: one correct, two with the classic mistakes (ARENAS §2).

Each reads the incident (the control files, the units, what listens), fails
over in its own way, checks its work through the public port and watches it
while the referee verifies. None touches the arena's own programs: a failover
here is two control files and a marker, each written whole (temp file, sync,
rename) so the proxy and the replica never read half a file.
- `failover-oracle`: confirms the old primary is down and marked, fences it,
  promotes the replica and waits for it to say `primary`, and only then
  switches the proxy: durable, full points.
- `failover-switch-first`: switches the proxy to the replica first, then
  "promotes" it through a `POST /promote` the replica does not have, without
  looking at the answer: reads come back, the role stays `replica`, so it
  stops at reads-restored.
- `failover-unfenced`: promotes and switches in the right order but never
  fences the old primary (nothing listens on 8081, so it sees no need):
  stops at old-primary-fenced.
"""

from __future__ import annotations

from aoe_tui.agents.scripted.base import Plan, Step

STATE = "/var/lib/failover"
REPLICA = "http://127.0.0.1:8082"
PUBLIC = "http://127.0.0.1:8080"
UNITS = "failover-proxy.service failover-replica.service"


def _write_whole(name: str, value: str) -> str:
    temporary = f"{STATE}/.{name}.tmp"
    return (
        f"printf '%s\\n' {value} > {temporary} && sync {temporary} && mv -f {temporary} {STATE}/{name} && sync {STATE}"
    )


def _look(pace: float) -> Step:
    return Step(
        f"cd {STATE} && ls -la && head -c 100 upstream replica.role; systemctl cat {UNITS} | grep -v '^#'; "
        f"ss -Hltn; curl -s -o /dev/null -w 'public health %{{http_code}}\\n' {PUBLIC}/health; "
        f"curl -s {REPLICA}/role; echo",
        "Read the incident: control files, units, listeners",
        pace,
    )


def _fence(pace: float) -> Step:
    return Step(
        f'cd {STATE} && test -e primary.failed && [ "$(cat replica.role)" = replica ] && '
        "[ -z \"$(ss -Hltn 'sport = :8081')\" ] && : > .primary.fenced.tmp && sync .primary.fenced.tmp && "
        "mv .primary.fenced.tmp primary.fenced && sync . && echo 'old primary fenced'",
        "Confirm the old primary is down and marked, then fence it durably",
        pace,
    )


def _promote(pace: float) -> Step:
    return Step(
        f"{_write_whole('replica.role', 'primary')} && for i in $(seq 20); do "
        f'[ "$(curl -fsS {REPLICA}/role)" = primary ] && break; sleep 0.5; done; curl -fsS {REPLICA}/role',
        "Promote the replica and wait until it says primary",
        pace,
    )


def _switch(pace: float) -> Step:
    return Step(
        f"{_write_whole('upstream', '8082')} && curl -fsS {PUBLIC}/role; echo; "
        f"curl -fsS {PUBLIC}/records/customer-red-4a7",
        "Switch the proxy to the replica",
        pace,
    )


def _write_check(pace: float) -> Step:
    return Step(
        f"curl -fsS -X PUT --data-binary selftest -o /dev/null -w '%{{http_code}}\\n' {PUBLIC}/records/selftest-failover"
        f" && curl -fsS {PUBLIC}/records/selftest-failover",
        "Write and read back through the public port",
        pace,
    )


def _watch(pace: float) -> Step:
    return Step(
        f"for i in $(seq 150); do curl -s -o /dev/null -w '%{{http_code}} ' {PUBLIC}/role; sleep 2; done",
        "Watch the public service while the referee verifies",
        pace,
    )


def _promote_by_api(pace: float) -> Step:
    return Step(
        f"curl -s -X POST -o /dev/null -w 'promote %{{http_code}}\\n' {REPLICA}/promote; "
        f": > {STATE}/primary.fenced && sync {STATE}",
        "Promote the replica through its API and fence the old primary",
        pace,
    )


FAILOVER_PLANS: dict[str, Plan] = {
    "failover-oracle": Plan(
        "failover-oracle",
        STATE,
        "fenced the old primary, promoted the replica, then switched the proxy to it",
        (_look(3.0), _fence(2.0), _promote(2.0), _switch(2.0), _write_check(2.0), _watch(1.0)),
    ),
    "failover-switch-first": Plan(
        "failover-switch-first",
        STATE,
        "switched the proxy to the replica, then asked it to promote itself",
        (_look(1.0), _switch(1.0), _promote_by_api(1.0), _watch(1.0)),
    ),
    "failover-unfenced": Plan(
        "failover-unfenced",
        STATE,
        "promoted the replica and switched the proxy to it (the dead primary left unfenced)",
        (_look(1.0), _promote(1.0), _switch(1.0), _write_check(1.0), _watch(1.0)),
    ),
}
