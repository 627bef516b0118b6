"""The small base every scripted plan module builds on: what a step and a plan are, and the shared commands.

A plan is data: the shell commands a careful (or careless) engineer would type, with a "thinking" pause
before each. The plan modules (`durability_plans`, `cheat_*`, `queue_plans`, ...) depend on this module
only; the registry of all built-in plans is `plans`, which imports them (never the other way round).
"""

from __future__ import annotations

from dataclasses import dataclass

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
