"""Conquest health: the healthy / degraded / recovering / eliminated machine, and the timer ranking (ARENAS §5).

One owner for both the live referee and a replay: the referee feeds each
probe's verdict (and each tick's time, for an expired window) into
`HealthMachine.observe` / `HealthMachine.expire` and records the transitions
it returns; a replay feeds the recorded `health_observed` events through the
same machine and gets the same transitions back (`replay_transitions`). Pure:
no clock, no IO; "now" is the match clock's milliseconds, passed in.

| from | on | to (reason) |
|---|---|---|
| healthy | N unhealthy in a row | degraded (`failure threshold reached`), deadline = now + W |
| degraded | healthy probe | recovering (`healthy probe during recovery window`), streak 1 |
| recovering | streak reaches N | healthy (`durable recovery`), deadline cleared |
| recovering | unhealthy | degraded (`recovery did not survive verification`), deadline kept |
| degraded/recovering | now >= deadline | eliminated (`recovery window expired`) |

A probe is applied before the deadline is looked at: a recovery completed by
the probe taken at the deadline itself saves the territory (the original's
table leaves the order open; this is the reading that never eliminates a
territory whose last probe made it healthy).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from aoe_tui.domain import events as ev

HEALTHY = "healthy"
DEGRADED = "degraded"
RECOVERING = "recovering"
ELIMINATED = "eliminated"
PROVISIONING = "provisioning"

PREFLIGHT_REASON = "preflight passed"
THRESHOLD_REASON = "failure threshold reached"
RECOVERING_REASON = "healthy probe during recovery window"
RECOVERED_REASON = "durable recovery"
RELAPSE_REASON = "recovery did not survive verification"
EXPIRED_DETAIL = "recovery window expired"

HEALTHY_TICK_REASON = "healthy tick"
INFERENCE_REASON = "agent inference"
LAST_STANDING_REASON = "last territory standing"


@dataclass(frozen=True)
class Transition:
    territory: str
    from_: str
    to: str
    reason: str

    @property
    def eliminated(self) -> bool:
        return self.to == ELIMINATED


@dataclass
class HealthMachine:
    """One territory's health state; `failures_needed` is N, `window_ms` is W."""

    territory: str
    failures_needed: int
    window_ms: int
    state: str = HEALTHY
    failures: int = 0  # unhealthy probes in a row while healthy
    streak: int = 0  # healthy probes in a row while recovering
    deadline_ms: int | None = None
    degraded_since_ms: int | None = None  # entered degraded/recovering (the window's time)
    degraded_ms: int = 0  # closed degraded/recovering periods

    @property
    def out(self) -> bool:
        return self.state == ELIMINATED

    def degraded_time_ms(self, now_ms: int) -> int:
        """Time spent degraded or recovering up to `now_ms` (an open period counts to now)."""
        open_ms = now_ms - self.degraded_since_ms if self.degraded_since_ms is not None else 0
        return self.degraded_ms + max(open_ms, 0)

    def observe(self, healthy: bool, now_ms: int) -> list[Transition]:
        """Fold one probe verdict taken at `now_ms`; the transitions it causes, in order."""
        if self.out:
            return []
        moves: list[Transition] = []
        if self.state == HEALTHY:
            self.failures = 0 if healthy else self.failures + 1
            if self.failures >= self.failures_needed:
                self.failures = 0
                self.deadline_ms = now_ms + self.window_ms
                self.degraded_since_ms = now_ms
                moves.append(self._move(DEGRADED, THRESHOLD_REASON))
        elif self.state == DEGRADED:
            if healthy:
                self.streak = 1
                moves.append(self._move(RECOVERING, RECOVERING_REASON))
                moves += self._maybe_recovered(now_ms)
        elif self.state == RECOVERING:
            if healthy:
                self.streak += 1
                moves += self._maybe_recovered(now_ms)
            else:
                self.streak = 0
                moves.append(self._move(DEGRADED, RELAPSE_REASON))
        return moves + self.expire(now_ms)

    def expire(self, now_ms: int) -> list[Transition]:
        """Eliminate a territory whose recovery window ran out by `now_ms` (at a probe or a tick without one)."""
        if self.state in (DEGRADED, RECOVERING) and self.deadline_ms is not None and now_ms >= self.deadline_ms:
            self._close_degraded(now_ms)
            return [self._move(ELIMINATED, EXPIRED_DETAIL)]
        return []

    def _maybe_recovered(self, now_ms: int) -> list[Transition]:
        if self.streak < self.failures_needed:
            return []
        self.streak = 0
        self.deadline_ms = None
        self._close_degraded(now_ms)
        return [self._move(HEALTHY, RECOVERED_REASON)]

    def _close_degraded(self, now_ms: int) -> None:
        self.degraded_ms = self.degraded_time_ms(now_ms)
        self.degraded_since_ms = None

    def _move(self, to: str, reason: str) -> Transition:
        move = Transition(self.territory, self.state, to, reason)
        self.state = to
        return move


@dataclass(frozen=True)
class Standing:
    """What the timer ranks a territory by (ARENAS §5 step 6)."""

    territory: str
    eliminated: bool
    uptime_ticks: int
    resources: int
    degraded_ms: int

    def key(self) -> tuple:
        return (self.eliminated, -self.uptime_ticks, -self.resources, self.degraded_ms, self.territory)

    def merits(self) -> tuple:
        """The four things compared; the id only breaks the order, never a tie for the win."""
        return self.key()[:4]


def timer_ranking(standings: Iterable[Standing]) -> tuple[list[Standing], str | None]:
    """Best first, and the winner: the leader, or None when the top two are equal on all four merits."""
    ranked = sorted(standings, key=Standing.key)
    if not ranked:
        return [], None
    if len(ranked) > 1 and ranked[0].merits() == ranked[1].merits():
        return ranked, None
    return ranked, ranked[0].territory


def last_standing(machines: Iterable[HealthMachine]) -> tuple[bool, str | None]:
    """Whether at most one territory is left, and which (None when none is)."""
    left = [m.territory for m in machines if not m.out]
    return len(left) <= 1, (left[0] if left else None)


def replay_transitions(
    events: Iterable[ev.EventBase], failures_needed: int, window_ms: int
) -> tuple[list[Transition], dict[str, HealthMachine]]:
    """Feed recorded `health_observed` events through the machine: the transitions a live referee would have made.

    Preflight (`provisioning` -> `healthy`) starts a territory's machine; a
    tick's expiry is looked at on each later observation of any territory.
    """
    machines: dict[str, HealthMachine] = {}
    moves: list[Transition] = []
    for event in events:
        if isinstance(event, ev.TerritoryStateChanged) and event.from_ == PROVISIONING and event.to == HEALTHY:
            machines[event.territory] = HealthMachine(event.territory, failures_needed, window_ms)
            moves.append(Transition(event.territory, PROVISIONING, HEALTHY, event.reason or PREFLIGHT_REASON))
        elif isinstance(event, ev.HealthObserved) and event.territory in machines:
            for machine in machines.values():
                if machine.territory != event.territory:
                    moves += machine.expire(event.elapsed_ms)
            moves += machines[event.territory].observe(event.healthy, event.elapsed_ms)
    return moves, machines


def recorded_transitions(events: Iterable[ev.EventBase]) -> list[Transition]:
    """The transitions a log holds (`territory_state_changed`), for comparison with `replay_transitions`."""
    return [
        Transition(e.territory, e.from_, e.to, e.reason or "")
        for e in events
        if isinstance(e, ev.TerritoryStateChanged)
    ]
