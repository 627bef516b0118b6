"""Scrubbing speed: `TimelineIndex.state_at` against folding from event zero.

Prints figures, asserts nothing: the baseline (a full fold per scrub step) is
measured in the same run so the ratio holds on any machine.

    .venv/bin/python benchmarks/timeline_scrub.py [--events N] [--steps N]
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from aoe_tui.domain.events import make_event
from aoe_tui.domain.reducer import reduce
from aoe_tui.store.timeline import TimelineIndex

TERRITORIES = [f"builder-{i}" for i in range(3)]
MILESTONES = ["service-up", "write-read", "service-restart", "host-reboot"]


def synthetic_log(count: int):
    """A long build race: registrations, then ticks of evaluations and failures."""
    events = [make_event("match_state_changed", 0, 0, **{"from": "preparing", "to": "running"})]
    for territory in TERRITORIES:
        events.append(
            make_event(
                "territory_registered",
                len(events),
                0,
                territory=territory,
                agent=f"{territory}-agent",
                **{"class": "builder"},
            )
        )
    rng = random.Random(1)
    clock = 0
    while len(events) < count:
        clock += 2000
        for territory in TERRITORIES:
            milestone = rng.choice(MILESTONES)
            events.append(
                make_event("milestone_evaluation_started", len(events), clock, territory=territory, milestone=milestone)
            )
            events.append(
                make_event(
                    "milestone_failed",
                    len(events),
                    clock + 10,
                    territory=territory,
                    milestone=milestone,
                    category="verification_failed",
                    detail="curl: (7) connection refused",
                    retryable=True,
                )
            )
            events.append(
                make_event(
                    "usage_charged",
                    len(events),
                    clock + 10,
                    agent=f"{territory}-agent",
                    resource_units=1,
                    input_tokens=100,
                    output_tokens=20,
                    cost_microusd=5,
                )
            )
    return events[:count]


def timed(function, repeats: int) -> float:
    start = time.perf_counter()
    for _ in range(repeats):
        function()
    return (time.perf_counter() - start) / repeats


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()
    events = synthetic_log(args.events)
    positions = random.Random(2).sample(range(len(events)), args.steps)

    build = timed(lambda: TimelineIndex(events), 1)
    index = TimelineIndex(events)
    steps = iter(positions * 2)
    indexed = timed(lambda: index.state_at(next(steps)), args.steps)
    steps = iter(positions * 2)
    baseline = timed(lambda: reduce(events[: next(steps) + 1]), max(args.steps // 5, 3))
    print(f"log: {len(events)} events ({Path(__file__).name})")
    print(f"index build:            {build * 1000:9.1f} ms (once per match)")
    print(f"baseline fold per step: {baseline * 1000:9.2f} ms")
    print(f"state_at per step:      {indexed * 1000:9.2f} ms")
    print(f"speed-up:               {baseline / indexed:9.1f}x")


if __name__ == "__main__":
    main()
