"""A synthetic, valid build-race match of exactly N events, 12 territories, cached on disk.

Valid by construction: every distinct event is built once as its own event class (so pydantic checks it
like the engine's events) and each recorded line is that template stamped with its sequence and clock,
written by the event log's own encoder. A million events take seconds to write; the file is cached under
`~/.cache/aoe_tui/bench/` keyed by N and `GENERATOR_VERSION`, so a rerun only opens it.

The race: every territory is evaluated on each 2-second tick (evaluation started, then failed or passed,
then the usage charged), the field advances through the four First Build milestones at staggered speeds,
stalls of identical failures form between passes, and `builder-07` wins with the last host-reboot, after
which every agent finishes. Used by `benchmarks/scale.py` and the tests that open a long match.

    .venv/bin/python benchmarks/synthetic_match.py N    # prints the match folder
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from aoe_tui.domain import events as ev
from aoe_tui.runtime.paths import cache_root
from aoe_tui.store.event_log import encode_event
from aoe_tui.store.match_layout import MatchLayout

GENERATOR_VERSION = 1
CACHE = cache_root() / "bench"
TERRITORIES = [f"builder-{i:02d}" for i in range(1, 13)]
WINNER = "builder-07"
MILESTONES = [("service-up", 10), ("write-read", 20), ("service-restart", 30), ("host-reboot", 40)]
TICK_MS = 2000
USAGE_SIZES = 16
FAILURES = [
    ("connection_refused", "curl: (7) Failed to connect to 127.0.0.1 port 8080 after 0 ms: Connection refused"),
    ("wrong_value", "read back 'None' where the record written was expected"),
    ("not_durable", "the record was gone after the service restarted"),
]


def _agent(territory: str) -> str:
    return f"{territory}-agent"


class _Stamper:
    """Numbers and times the templates; the clock never goes back (the log reader checks both)."""

    def __init__(self) -> None:
        self.sequence = 0

    def __call__(self, template: ev.EventBase, elapsed_ms: int) -> ev.EventBase:
        event = template.model_copy(update={"sequence": self.sequence, "elapsed_ms": elapsed_ms})
        self.sequence += 1
        return event


def _opening() -> list[ev.EventBase]:
    opening: list[ev.EventBase] = [ev.MatchStateChanged(from_="preparing", to="running")]
    for territory in TERRITORIES:
        opening += [
            ev.TerritoryRegistered(territory=territory, class_="builder", agent=_agent(territory)),
            ev.AgentStarted(agent=_agent(territory), territory=territory, model="synthetic"),
            ev.CompetitorStateChanged(territory=territory, from_="preparing", to="building", reason="SSH preflight"),
            ev.CompetitorStateChanged(territory=territory, from_="building", to="verifying", reason="verification"),
        ]
    return opening


def _closing() -> list[ev.EventBase]:
    """The winner's host-reboot pass and the finish (the clock frozen), then every agent hands in."""
    milestone, points = MILESTONES[-1]
    closing: list[ev.EventBase] = [
        ev.MilestoneEvaluationStarted(territory=WINNER, milestone=milestone),
        ev.MilestonePassed(territory=WINNER, milestone=milestone, points=points, evidence={"reboot": True}),
        ev.CompetitorStateChanged(territory=WINNER, from_="verifying", to="durable", reason="completion passed"),
        ev.DurableDeploymentCompleted(territory=WINNER),
        ev.MatchStateChanged(from_="running", to="finished"),
        ev.MatchFinished(winner=WINNER, reason="first durable deployment"),
    ]
    for territory in TERRITORIES:
        closing.append(ev.AgentFinished(agent=_agent(territory), source="player", success=True, detail="done"))
    return closing


class _Turn:
    """The templates of one territory's evaluations: built once, stamped a million times."""

    def __init__(self, territory: str) -> None:
        self.started = [ev.MilestoneEvaluationStarted(territory=territory, milestone=m) for m, _ in MILESTONES]
        self.passed = [
            ev.MilestonePassed(territory=territory, milestone=m, points=p, evidence={"check": m}) for m, p in MILESTONES
        ]
        self.failed = [
            [
                ev.MilestoneFailed(territory=territory, milestone=m, category=category, detail=detail)
                for category, detail in FAILURES
            ]
            for m, _ in MILESTONES
        ]
        self.usage = [  # a model's turns differ in size: a handful of distinct charges, as in a real log
            ev.UsageCharged(
                agent=_agent(territory),
                resource_units=1,
                input_tokens=1200 + 37 * size,
                output_tokens=180 + 11 * size,
                cost_microusd=900 + 29 * size,
            )
            for size in range(USAGE_SIZES)
        ]
        self.health = ev.HealthObserved(territory=territory, healthy=True, status=200, latency_ms=4)


def _events(count: int) -> Iterator[ev.EventBase]:
    opening, closing = _opening(), _closing()
    if count < len(opening) + len(closing):
        raise ValueError(f"a build race needs at least {len(opening) + len(closing)} events")
    stamp = _Stamper()
    for event in opening:
        yield stamp(event, 0)
    body = count - len(opening) - len(closing)
    turns = {territory: _Turn(territory) for territory in TERRITORIES}
    reached = dict.fromkeys(TERRITORIES, 0)  # milestones passed so far
    # The winner's first three passes come at 2/8, 4/8, 6/8 of the match (its fourth is the finish); the
    # others are slower, the slowest passing only service-up.
    pace = {t: 1.0 + 0.25 * abs(i - TERRITORIES.index(WINNER)) for i, t in enumerate(TERRITORIES)}
    clock, emitted = 0, 0
    while emitted < body:
        clock += TICK_MS
        for slot, territory in enumerate(TERRITORIES):
            if body - emitted < 3:
                break
            turn, at = turns[territory], clock + 3 * slot
            milestone = reached[territory]
            yield stamp(turn.started[milestone], at)
            due = (reached[territory] + 1) * 2 / 8 * pace[territory]
            if reached[territory] < len(MILESTONES) - 1 and emitted / body >= due:
                yield stamp(turn.passed[milestone], at + 1)
                reached[territory] += 1
            else:
                failures = turn.failed[milestone]
                yield stamp(failures[(clock // (TICK_MS * 97)) % len(failures)], at + 1)
            yield stamp(turn.usage[(clock // TICK_MS + slot) % USAGE_SIZES], at + 1)
            emitted += 3
        while emitted < body and body - emitted < 3:  # pad to exactly N with health readings
            yield stamp(turns[TERRITORIES[emitted % len(TERRITORIES)]].health, clock + 3 * len(TERRITORIES))
            emitted += 1
    for event in closing:
        yield stamp(event, clock + 3 * len(TERRITORIES) + 1)


def write_events(path: Path, count: int) -> None:
    """Exactly `count` events to `path`, one encoded line each (as `EventLogWriter` writes them)."""
    with open(path, "w", encoding="utf-8") as out:
        out.writelines(encode_event(event) + "\n" for event in _events(count))


def synthetic_match(count: int) -> Path:
    """The cached match folder of `count` events, written first if it is not there yet."""
    layout = MatchLayout(CACHE / f"build-race-v{GENERATOR_VERSION}-{count}")
    if not layout.events.exists():
        layout.root.mkdir(parents=True, exist_ok=True)
        layout.provenance.write_text(json.dumps({"arena_id": f"synthetic build race, {count} events"}))
        partial = layout.root / f"{layout.events.name}.{os.getpid()}.partial"
        write_events(partial, count)
        partial.replace(layout.events)  # whole or absent: an interrupted run never leaves a short log cached
    return layout.root


def distinct_match(count: int) -> Path:
    """The same race with every event's body different (an extra `nonce` field, the event's own sequence, kept
    as logs from other versions keep theirs): a log whose bodies never repeat, cached beside it."""
    source = MatchLayout(synthetic_match(count))
    layout = MatchLayout(CACHE / f"build-race-v{GENERATOR_VERSION}-{count}-distinct")
    if not layout.events.exists():
        layout.root.mkdir(parents=True, exist_ok=True)
        layout.provenance.write_text(json.dumps({"arena_id": f"synthetic build race, {count} distinct events"}))
        partial = layout.root / f"{layout.events.name}.{os.getpid()}.partial"
        with open(source.events, "rb") as lines, open(partial, "wb") as out:
            for sequence, line in enumerate(lines):
                out.write(line[:-2] + b',"nonce":%d}\n' % sequence)
        partial.replace(layout.events)
    return layout.root


if __name__ == "__main__":
    print(synthetic_match(int(sys.argv[1])))
