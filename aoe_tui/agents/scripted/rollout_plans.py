"""Scripted builders of the Zero-Downtime Rollout arena: one correct, two with the classic mistakes (ARENAS §3).

Each reads the live system, builds v2 as v1 with version `v2` on 8082 over the
same database, and moves the proxy to it in its own way, then watches the
public port while the referee verifies. None touches v1 or the proxy.
- `rollout-oracle`: v2 in its slot (reset-failed, enable, restart), waits
  until 8082 says `v2`, then writes `8082` to a temporary file and renames it
  over `upstream`: the proxy never reads a half-written file. Durable, full
  points.
- `rollout-blip`: the same v2, but the switch is a truncate-then-write
  (`{ ...; echo 8082; } > upstream`: the shell empties the file first, then
  checks v2 before writing), so for a moment the proxy reads an empty
  upstream and answers 502: `observed N failed public checks during cutover`,
  final, at uninterrupted-cutover.
- `rollout-by-hand`: runs v2.py by hand in the background instead of in its
  slot and switches atomically: no blip, but the slot unit is not active, so
  uninterrupted-cutover's SSH step fails (and is retried, forever).
"""

from __future__ import annotations

from aoe_tui.agents.scripted.base import Plan, Step

STATE = "/var/lib/rollout"
V2 = "/opt/rollout/v2.py"
V2_URL = "http://127.0.0.1:8082"
PUBLIC = "http://127.0.0.1:8080"
UNITS = "rollout-v1.service rollout-v2.service rollout-proxy.service"


def _look(pace: float) -> Step:
    return Step(
        f"cd {STATE} && ls -la && head -c 100 upstream; echo; systemctl cat {UNITS} | grep -v '^#'; "
        f"systemctl is-active {UNITS}; ss -Hltn; curl -s {PUBLIC}/version; echo",
        "Read the live system: upstream, units, listeners, the public version",
        pace,
    )


def _write_v2(pace: float) -> Step:
    # v1's program is readable in the guest: v2 is the same service answering v2 on 8082, on the same database.
    return Step(
        "v1=$(systemctl show -p ExecStart --value rollout-v1.service | grep -o '/[^ ;]*\\.py' | head -n 1) && "
        f"mkdir -p /opt/rollout && sed -e 's/^VERSION = \"v1\"$/VERSION = \"v2\"/' -e 's/^PORT = 8081$/PORT = 8082/' "
        f'"$v1" > /opt/rollout/.v2.py.tmp && grep -q \'^VERSION = "v2"$\' /opt/rollout/.v2.py.tmp && '
        f"python3 -m py_compile /opt/rollout/.v2.py.tmp && mv -f /opt/rollout/.v2.py.tmp {V2} && sync && "
        "echo v2 written",
        "Write v2: v1 answering v2 on 8082, on the same database",
        pace,
    )


def _wait_v2() -> str:
    """Until 8082 answers v2 (a TCG guest starts Python slowly: up to 2 min), asking once a second at the lowest
    priority: one curl costs a TCG guest ~0.2 s of its single CPU, so asking ten times a second starved the
    live proxy that the referee watches (a check went unanswered for 1 s while v2 started)."""
    return (
        f'for i in $(seq 120); do [ "$(nice -n 19 curl -fsS {V2_URL}/version 2>/dev/null)" = v2 ] && break; '
        "sleep 1; done; "
        f'[ "$(curl -fsS {V2_URL}/version)" = v2 ] && echo v2 ready'
    )


def _start_slot(pace: float) -> Step:
    return Step(
        "systemctl reset-failed rollout-v2.service; systemctl enable rollout-v2.service && "
        f"systemctl restart rollout-v2.service && {_wait_v2()} && systemctl is-active rollout-v2.service",
        "Start v2 in its slot and wait until it answers v2",
        pace,
    )


def _start_by_hand(pace: float) -> Step:
    return Step(
        f"cd /opt/rollout; nohup setsid python3 {V2} </dev/null >/dev/null 2>&1 & {_wait_v2()}",
        "Start v2 in the background and wait until it answers v2",
        pace,
    )


def _switch_atomically(pace: float) -> Step:
    return Step(
        f"cd {STATE} && printf '%s\\n' 8082 > .upstream.tmp && sync .upstream.tmp && mv -f .upstream.tmp upstream "
        f"&& sync . && curl -fsS {PUBLIC}/version && echo",
        "Switch the proxy to v2 (temporary file renamed over upstream)",
        pace,
    )


def _switch_truncating(pace: float) -> Step:
    return Step(
        f"cd {STATE} && {{ sleep 1.5; curl -fsS -o /dev/null {V2_URL}/health && echo 8082; }} > upstream && "
        f"curl -fsS {PUBLIC}/version && echo",
        "Switch the proxy to v2 (rewrite upstream once v2 answers)",
        pace,
    )


def _check(pace: float) -> Step:
    return Step(
        f"curl -fsS -X PUT --data-binary selftest -o /dev/null -w '%{{http_code}}\\n' {PUBLIC}/records/selftest-v2"
        f" && curl -fsS {PUBLIC}/records/selftest-v2 && echo && curl -fsS {PUBLIC}/records/customer-alpha-73c",
        "Write and read back through the public port",
        pace,
    )


def _watch(pace: float) -> Step:
    return Step(
        f"for i in $(seq 150); do curl -s -w ' ' {PUBLIC}/version; sleep 2; done",
        "Watch the public service while the referee verifies",
        pace,
    )


ROLLOUT_PLANS: dict[str, Plan] = {
    "rollout-oracle": Plan(
        "rollout-oracle",
        STATE,
        "started v2 in its slot, waited for it, then renamed a new upstream over the old one",
        (_look(3.0), _write_v2(2.0), _start_slot(2.0), _switch_atomically(2.0), _check(2.0), _watch(1.0)),
    ),
    "rollout-blip": Plan(
        "rollout-blip",
        STATE,
        "started v2 in its slot, then rewrote upstream in place",
        (_look(1.0), _write_v2(1.0), _start_slot(1.0), _switch_truncating(1.0), _check(1.0), _watch(1.0)),
    ),
    "rollout-by-hand": Plan(
        "rollout-by-hand",
        STATE,
        "ran v2 by hand in the background, then renamed a new upstream over the old one",
        (_look(1.0), _write_v2(1.0), _start_by_hand(1.0), _switch_atomically(1.0), _check(1.0), _watch(1.0)),
    ),
}
