"""The ladder's rating cost: 10^4 synthetic matches of 200 entrants, time and peak memory (target < 5 s).

Each match seats 3 entrants drawn at random (seeded) and ranks them by a hidden skill plus noise (durable
first, ties sometimes), as `analysis.ladder` reads a decided match; the whole ladder is rated in start order
(`rate`, openskill's Plackett-Luce) and its rows built (`ladder_rows`: intervals, win probabilities of the
top entries). The baseline, measured in the same run, is openskill's own `rate` called on the same rankings
with nothing around it: the difference is the ladder's bookkeeping.

    .venv/bin/python benchmarks/ladder.py [--matches N] [--entrants N]

Time is one untraced run; memory is the peak Python allocation of a second, traced run (tracemalloc makes
that run several times slower), plus the process's maximum resident set at the end.

Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
import tracemalloc
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from openskill.models import PlackettLuce

from aoe_tui.analysis.ladder import RatedMatch, RatedSeat, ladder_rows, rate

TARGET_S = 5.0
SEATS = 3


def synthetic(matches: int, entrants: int, seed: int = 7) -> list[RatedMatch]:
    rng = random.Random(seed)
    skill = {f"entrant-{i:03d}": rng.gauss(0, 1) for i in range(entrants)}
    names = sorted(skill)
    out = []
    for index in range(matches):
        drawn = rng.sample(names, SEATS)
        scores = sorted(((skill[e] + rng.gauss(0, 1), e) for e in drawn), reverse=True)
        seats, place = [], 0
        for position, (score, entrant) in enumerate(scores):
            tied = position > 0 and abs(scores[position - 1][0] - score) < 0.05
            place = place if tied else position + 1
            config = ("scripted", f"model-{int(entrant[-3:]) % 50}", None)
            seats.append(RatedSeat(entrant, config, place, place == 1, score > 0.5))
        out.append(RatedMatch(f"synthetic/{index:05d}", ("", (index,)), tuple(seats)))
    return out


def bare(matches: list[RatedMatch]) -> None:
    model = PlackettLuce()
    ratings: dict[str, object] = {}
    for match in matches:
        for seat in match.seats:
            if seat.entrant not in ratings:
                ratings[seat.entrant] = model.rating(name=seat.entrant)
        teams = [[ratings[s.entrant]] for s in match.seats]
        rated = model.rate(teams, ranks=[float(s.place) for s in match.seats])
        for seat, team in zip(match.seats, rated, strict=True):
            ratings[seat.entrant] = team[0]


def measure(label: str, work) -> float:
    """Wall time of one run (no tracing), then the peak of another run traced by tracemalloc (slower)."""
    began = time.perf_counter()
    work()
    seconds = time.perf_counter() - began
    tracemalloc.start()
    work()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"{label:<44} {seconds:7.2f} s   peak {peak / 2**20:7.1f} MiB allocated (tracemalloc)")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument("--entrants", type=int, default=200)
    args = parser.parse_args()
    matches = synthetic(args.matches, args.entrants)
    print(f"ladder: {len(matches)} synthetic matches of {SEATS} seats, {args.entrants} entrants")
    measure("baseline: openskill rate() alone", lambda: bare(matches))
    result: dict[str, object] = {}
    seconds = measure(
        "ladder: rate() by entrant + ladder_rows()", lambda: result.update(rows=ladder_rows(rate(matches)))
    )
    measure("ladder: rate() by config + ladder_rows()", lambda: ladder_rows(rate(matches, by="config")))
    rows = result["rows"]
    assert isinstance(rows, list)
    top = rows[0]
    print(
        f"top: {top['entrant']} rating {top['rating']:.2f} (mu {top['mu']:.2f}, sigma {top['sigma']:.2f}) over "
        f"{top['matches']} matches; {len(rows)} entries"
    )
    print(f"process max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    print(f"target < {TARGET_S:g} s: {'met' if seconds < TARGET_S else 'MISSED'} ({seconds:.2f} s)")


if __name__ == "__main__":
    main()
