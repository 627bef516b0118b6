"""A small conquest match written event by event: deterministic input for the app's conquest tests.

Three territories, 30 s: the courier fails from 5 s, is degraded at 7 s and eliminated at 17 s (a 10 s
window); the archivist dips and recovers durably; the gatekeeper stays healthy. The events are what the
conquest referee writes, through its own health machine (`domain.conquest`), with fixed latencies.
"""

from __future__ import annotations

import json
from pathlib import Path

from aoe_tui.domain import conquest as cq

IDS = ("archivist", "courier", "gatekeeper")
TOKENS = {"gatekeeper": "gatekeeper:ok", "archivist": "archivist:ok", "courier": "courier:ok"}


def _healthy(territory: str, second: int) -> bool:
    if territory == "courier":
        return second < 5
    if territory == "archivist":
        return not 10 <= second < 13
    return True


def write_conquest_match(directory: Path, window_ms: int = 10_000, duration_s: int = 30) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    events: list[dict] = []

    def emit(elapsed_ms: int, kind: str, **fields) -> None:
        events.append({"schema_version": 1, "sequence": len(events), "elapsed_ms": elapsed_ms, "kind": kind, **fields})

    emit(0, "match_state_changed", **{"from": "preparing", "to": "running"})
    for t in IDS:
        emit(
            0,
            "territory_state_changed",
            territory=t,
            **{"from": "provisioning", "to": "healthy"},
            reason="preflight passed",
        )
    for t in ("gatekeeper", "archivist", "courier"):
        emit(0, "territory_registered", territory=t, **{"class": t}, agent=f"{t}-agent")
    for t in ("gatekeeper", "archivist", "courier"):
        emit(0, "agent_started", agent=f"{t}-agent", territory=t, model=f"scripted/{t}")
    machines = {t: cq.HealthMachine(t, 3, window_ms) for t in IDS}
    resources = {t: 900 for t in IDS}
    for second in range(1, duration_s + 1):
        now = second * 1000
        for t in IDS:
            m = machines[t]
            if m.out:
                continue
            healthy = _healthy(t, second)
            emit(
                now,
                "health_observed",
                territory=t,
                healthy=healthy,
                status=200 if healthy else 503,
                latency_ms=7,
                detail=TOKENS[t] if healthy else "queue unavailable",
            )
            for move in m.observe(healthy, now):
                emit(
                    now,
                    "territory_state_changed",
                    territory=t,
                    **{"from": move.from_, "to": move.to},
                    reason=move.reason,
                )
                if move.eliminated:
                    emit(now, "territory_eliminated", territory=t, source="player", detail=move.reason)
        for t in IDS:
            if machines[t].state == "healthy":
                resources[t] += 1
                emit(now, "resources_changed", territory=t, delta=1, remaining=resources[t], reason="healthy tick")
    _, winner = cq.timer_ranking(
        cq.Standing(t, machines[t].out, 0, resources[t], machines[t].degraded_time_ms(duration_s * 1000)) for t in IDS
    )
    emit(duration_s * 1000, "match_state_changed", **{"from": "running", "to": "finished"})
    emit(duration_s * 1000, "match_finished", winner=winner, reason="match timer expired")
    (directory / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return directory
