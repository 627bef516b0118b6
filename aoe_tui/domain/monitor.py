"""Continuous monitors: what a referee-owned watch of a territory's public service saw, and the verdict on it.

A monitor (a `[[monitors]]` table) starts when one milestone passes and is judged by a later one (the
Zero-Downtime Rollout's continuity monitor, ARENAS §3). Its samples never become events: the engine folds each
into a `MonitorTally` and only the tally's `MonitorSummary` is kept, as evidence of the judging milestone and
in the monitor's stop event. `judge` is a pure function of that summary, so a replay re-reads the evidence and
reaches exactly the live verdict (one owner of the rules: this module).

Fairness: every territory's monitor runs the same schedule; each sample records how late it started against
its slot and how long the referee waited for each answer. A check that timed out while the host was
overloaded is the host's load, not the player's outage: it is counted as `excused`, never as a failure, and
the summary says the host was loaded. Overloaded means the referee's own event loop lagged by
`LAG_EXCUSE_MS` or more while it waited, or another territory's check timed out at the same moment (a stall
of the whole host: three TCG guests share two cores). Only timeouts are ever excused: a wrong body, a 502
or a refused connection is the service's own answer.

Calibration: a monitor may have its check timeout set per match (`calibrated_timeout_ms`, from what the
referee measured on the match's own guests before any agent acted; `domain.manifest.MonitorCalibration`), so
an honest service is not failed for the host's speed. The bound is the same for every territory and each
summary carries the one it was judged by (`timeout_ms`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from aoe_tui.domain.untrusted import first_line

# A timed-out check is the referee's lateness, not the player's outage, when the referee's event loop lagged
# by at least this much while it waited (a quarter of the rollout's 1 s check timeout): the answer may have
# been in the socket while the referee was not looking.
LAG_EXCUSE_MS = 250
# Samples whose start is this many intervals late at the 95th percentile mean the host was loaded.
LATE_INTERVALS = 2
HISTOGRAM_MAX_MS = 5000
SEEN_LIMIT = 120


class FirstFailure(BaseModel):
    model_config = ConfigDict(extra="allow")

    at_ms: int
    sample: int
    path: str
    seen: str


class Percentiles(BaseModel):
    model_config = ConfigDict(extra="allow")

    p50: int
    p95: int
    max: int


def calibrated_timeout_ms(floor_ms: int, slowest_ms: int, factor: float, ceiling_ms: int) -> int:
    """The check timeout of a calibrated monitor: `factor` times the slowest answer the referee saw in any
    territory while the guests ran the calibration load, within [floor_ms, ceiling_ms]."""
    return min(max(floor_ms, math.ceil(factor * slowest_ms)), ceiling_ms)


class CalibrationRecord(BaseModel):
    """What the referee measured to set one monitor's timeout for a match (kept in provenance)."""

    model_config = ConfigDict(extra="allow")

    monitor: str
    timeout_ms: int
    floor_ms: int
    max_timeout_ms: int
    factor: float
    slowest_ms: int
    load: str
    territories: dict[str, Percentiles | None]  # each territory's check latency during the load
    samples: dict[str, int]
    failed_checks: dict[str, int]


class MonitorSummary(BaseModel):
    """Everything kept of a monitor's run (times on the match clock, in ms); the judge reads only this."""

    model_config = ConfigDict(extra="allow")

    monitor: str
    started_ms: int
    last_sample_ms: int | None = None
    stopped_ms: int | None = None
    ended: str = "running"  # running | judged | cap | match_end
    interval_ms: int
    max_samples: int
    samples: int = 0
    checks: int = 0
    failures: int = 0
    first_failure: FirstFailure | None = None
    excused: int = 0
    first_excused: FirstFailure | None = None
    flags: list[str] = []
    flag_seen_ms: dict[str, int] = {}
    achieved_per_second: float = 0.0
    scheduled_per_second: float = 0.0
    start_lateness_ms: Percentiles | None = None
    check_latency_ms: Percentiles | None = None
    loop_lag_ms: Percentiles | None = None
    host_loaded: bool = False
    host_load_note: str | None = None
    timeout_ms: int | None = None  # each check's bound (calibrated per match, or the manifest's); None in old logs


@dataclass(frozen=True)
class MonitorVerdict:
    passed: bool
    detail: str | None = None
    final: bool = False  # a final failure is never retried: the failure list is never cleared


@dataclass(frozen=True)
class MonitorRules:
    """What the judging milestone requires of a summary (from the manifest's `[[monitors]]` table)."""

    flag: str | None
    never_flagged_detail: str
    min_samples: int
    failures_detail: str
    too_few_detail: str


def judge(rules: MonitorRules, summary: MonitorSummary) -> MonitorVerdict:
    """The verdict on a summary: the flag seen, enough samples, no failed check (final), in that order."""
    if rules.flag is not None and rules.flag not in summary.flags:
        return MonitorVerdict(False, rules.never_flagged_detail)
    if summary.samples < rules.min_samples:
        return MonitorVerdict(False, rules.too_few_detail.format(samples=summary.samples))
    if summary.failures:
        return MonitorVerdict(False, rules.failures_detail.format(failures=summary.failures), final=True)
    return MonitorVerdict(True)


class Histogram:
    """Millisecond values in 1 ms buckets (up to HISTOGRAM_MAX_MS): percentiles in bounded memory."""

    def __init__(self) -> None:
        self.counts = [0] * (HISTOGRAM_MAX_MS + 1)
        self.total = 0
        self.highest = 0

    def add(self, value_ms: float) -> None:
        bucket = min(max(int(value_ms), 0), HISTOGRAM_MAX_MS)
        self.counts[bucket] += 1
        self.total += 1
        self.highest = max(self.highest, bucket)

    def percentile(self, fraction: float) -> int:
        rank, seen = max(int(self.total * fraction + 0.999999), 1), 0
        for bucket, count in enumerate(self.counts):
            seen += count
            if seen >= rank:
                return bucket
        return self.highest

    def summary(self) -> Percentiles | None:
        if not self.total:
            return None
        return Percentiles(p50=self.percentile(0.5), p95=self.percentile(0.95), max=self.highest)


@dataclass(frozen=True)
class CheckResult:
    """One check of a sample as the referee saw it: the body (or the error) and how long it waited."""

    path: str
    ok: bool
    seen: str
    latency_ms: float
    timed_out: bool = False
    loop_lag_ms: float = 0.0  # the most the referee's event loop lagged while it waited for this answer
    host_stall: bool = False  # another territory's check timed out at the same moment
    began: float = 0.0  # monotonic, when the referee sent it (to match it with other territories' timeouts)


def is_excused(check: CheckResult) -> bool:
    """The loaded-host rule: a timeout while the referee itself lagged is not the player's failure."""
    return not check.ok and check.timed_out and (check.loop_lag_ms >= LAG_EXCUSE_MS or check.host_stall)


@dataclass
class MonitorTally:
    """The running fold of a monitor's samples into its summary (the engine feeds it; nothing else is kept)."""

    monitor: str
    started_ms: int
    interval_ms: int
    max_samples: int
    samples: int = 0
    checks: int = 0
    failures: int = 0
    excused: int = 0
    first_failure: FirstFailure | None = None
    first_excused: FirstFailure | None = None
    flags: dict[str, int] = field(default_factory=dict)
    last_sample_ms: int | None = None
    stopped_ms: int | None = None
    ended: str = "running"
    lateness: Histogram = field(default_factory=Histogram)
    latency: Histogram = field(default_factory=Histogram)
    lag: Histogram = field(default_factory=Histogram)
    timeout_ms: int | None = None

    def add_sample(
        self, at_ms: int, late_ms: float, checks: list[CheckResult], flags: list[str], loop_lag_ms: float
    ) -> None:
        """Fold one sample: its lateness, each check's latency and verdict, the flags its bodies raised."""
        self.samples += 1
        self.last_sample_ms = at_ms
        self.lateness.add(late_ms)
        self.lag.add(loop_lag_ms)
        for check in checks:
            self.checks += 1
            self.latency.add(check.latency_ms)
            if check.ok:
                continue
            seen = FirstFailure(
                at_ms=at_ms, sample=self.samples, path=check.path, seen=first_line(check.seen, SEEN_LIMIT)
            )
            if is_excused(check):
                self.excused += 1
                self.first_excused = self.first_excused or seen
            else:
                self.failures += 1
                self.first_failure = self.first_failure or seen
        for flag in flags:
            self.raise_flag(flag, at_ms)

    def raise_flag(self, flag: str, at_ms: int) -> None:
        self.flags.setdefault(flag, at_ms)

    def end(self, reason: str, at_ms: int) -> None:
        """The monitor stopped (judged, cap, match_end) at `at_ms`: its rate is counted up to then."""
        self.ended, self.stopped_ms = reason, at_ms

    @property
    def full(self) -> bool:
        return self.samples >= self.max_samples

    def summary(self) -> MonitorSummary:
        until = self.stopped_ms if self.stopped_ms is not None else self.last_sample_ms
        span_ms = (until - self.started_ms) if until is not None else 0
        achieved = round(self.samples / (span_ms / 1000), 2) if span_ms > 0 and self.samples > 1 else 0.0
        lateness, lag = self.lateness.summary(), self.lag.summary()
        late_p95 = lateness.p95 if lateness is not None else 0
        worst_lag = lag.max if lag is not None else 0
        loaded = self.excused > 0 or late_p95 >= LATE_INTERVALS * self.interval_ms or worst_lag >= LAG_EXCUSE_MS
        note = None
        if loaded:
            note = (
                f"host loaded: samples started {late_p95} ms late (p95) against their {self.interval_ms} ms "
                f"schedule, the referee's event loop lagged up to {worst_lag} ms; {self.excused} timed-out checks "
                f"excused (the referee lagged {LAG_EXCUSE_MS} ms or more while waiting, or another territory's check "
                "timed out at the same moment)"
            )
        return MonitorSummary(
            monitor=self.monitor,
            started_ms=self.started_ms,
            last_sample_ms=self.last_sample_ms,
            stopped_ms=self.stopped_ms,
            ended=self.ended,
            interval_ms=self.interval_ms,
            max_samples=self.max_samples,
            samples=self.samples,
            checks=self.checks,
            failures=self.failures,
            first_failure=self.first_failure,
            excused=self.excused,
            first_excused=self.first_excused,
            flags=sorted(self.flags),
            flag_seen_ms=dict(sorted(self.flags.items())),
            achieved_per_second=achieved,
            scheduled_per_second=round(1000 / self.interval_ms, 2),
            timeout_ms=self.timeout_ms,
            start_lateness_ms=lateness,
            check_latency_ms=self.latency.summary(),
            loop_lag_ms=lag,
            host_loaded=loaded,
            host_load_note=note,
        )
