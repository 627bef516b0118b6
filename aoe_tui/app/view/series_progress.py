"""What a series played in the app has still to do, and what it said so far (no Textual here).

The series view draws this next to the standings and the rotation grid. The
facts come from their owners: the rotation and the time estimate from the
`SeriesRunner`, the lines from its report (what `--headless` prints), kept
here the latest `LOG_LINES` of them; agent ids in them are player text, so the
screen shows them literally.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from aoe_tui.domain.clock import format_clock
from aoe_tui.engine.series import SeriesRunner

LOG_LINES = 12


class SeriesLog:
    """The series' report lines, the latest `LOG_LINES` of them (the series' `report` callback)."""

    def __init__(self) -> None:
        self.lines: deque[str] = deque(maxlen=LOG_LINES)

    def add(self, line: str) -> None:
        self.lines.append(line)


@dataclass(frozen=True)
class UpcomingRound:
    number: int
    seats: dict[str, str]  # agent -> territory
    state: str  # "playing" (its match is under way; "playing on host NAME" with `--hosts`) or "next"


@dataclass(frozen=True)
class SeriesProgress:
    rounds: list[UpcomingRound]  # every round not decided yet, in playing order
    seconds_left: float | None  # None before the first round of this run is decided
    ended: str | None  # how the series ended; None while it runs
    log: list[str]

    @property
    def summary(self) -> str:
        if self.ended is not None:
            return self.ended
        left = (
            "time left known once a round is decided"
            if self.seconds_left is None
            else f"about {format_clock(int(self.seconds_left * 1000))} left"
        )
        return f"{len(self.rounds)} round{'s' if len(self.rounds) != 1 else ''} to go · {left}"


def series_progress(series: SeriesRunner, playing: int | None, ended: str | None, log: SeriesLog) -> SeriesProgress:
    """The series' remaining rounds (`playing`: the one the app follows; with a host pool every round in flight
    is playing, on the host it names), its time left and its log."""
    in_flight = series.in_flight()
    rounds = [UpcomingRound(number, seats, _state(number, playing, in_flight)) for number, seats in series.upcoming()]
    return SeriesProgress(rounds, series.seconds_left(), ended, list(log.lines))


def _state(number: int, playing: int | None, in_flight: dict[int, str | None]) -> str:
    host = in_flight.get(number)
    if host is not None:
        return f"playing on host {host}"
    return "playing" if number == playing or number in in_flight else "next"
