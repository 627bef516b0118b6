"""Running a continuous monitor: the referee's own asyncio task sampling a territory's public service.

One `RunningMonitor` per (territory, monitor) samples on a fixed schedule (a sample every `interval_ms`; a
slow sample delays the next without a catch-up burst) with a real HTTP client from the referee's host, each
probe a fresh connection (as curl would) with a bounded read of its body. Samples are folded into a
`domain.monitor.MonitorTally`, never recorded one by one.

`LoopLagMeter` measures the referee itself: a sentinel task that sleeps a short tick and notes how late it
woke. Each check is stamped with the worst lag seen while it waited, which is how the loaded-host rule
(`domain.monitor.is_excused`) tells a referee that was not looking from a player's service that did not
answer. Every monitor of a match shares one meter, so all territories are judged by the same clock.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from aoe_tui.domain.manifest import Monitor
from aoe_tui.domain.monitor import CheckResult, MonitorSummary, MonitorTally, MonitorVerdict, judge
from aoe_tui.engine.clock import MatchClock
from aoe_tui.engine.task_failures import DoneCallback

BODY_LIMIT = 4096
LAG_TICK_SECONDS = 0.02
LAG_READINGS = 2048  # ~40 s of 20 ms readings
# Timeouts of two territories whose waits come this close count as one stall of the host; a sample with a
# timeout is folded only once the others had this long to report theirs.
STALL_MARGIN_SECONDS = 0.5
RESOLVE_SECONDS = 2.0
PAUSED_DETAIL = "the match was paused while the monitor was awaited; judged again after the pause"


class LoopLagMeter:
    """How late the event loop runs: the overshoot of a sentinel's short sleeps, kept for the last ~40 s."""

    def __init__(self, tick_seconds: float = LAG_TICK_SECONDS, on_done: DoneCallback | None = None) -> None:
        self.tick = tick_seconds
        self.on_done = on_done  # the referee records a sentinel that died (engine.task_failures)
        self.readings: collections.deque[tuple[float, float]] = collections.deque(maxlen=LAG_READINGS)
        self._expected: float | None = None
        self._task: asyncio.Task | None = None
        self._users = 0
        self.timeouts: collections.deque[tuple[int, float, float]] = collections.deque(maxlen=LAG_READINGS)

    def start(self) -> None:
        self._users += 1
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())
            if self.on_done is not None:
                self._task.add_done_callback(self.on_done)

    async def stop(self) -> None:
        self._users = max(self._users - 1, 0)
        if self._users == 0 and self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
            self._expected = None

    async def _run(self) -> None:
        while True:
            self._expected = time.monotonic() + self.tick
            await asyncio.sleep(self.tick)
            woke = time.monotonic()
            self.readings.append((woke, max((woke - self._expected) * 1000, 0.0)))

    def note_timeout(self, owner: int, began: float, ended: float) -> None:
        """A check of monitor `owner` waited from `began` to `ended` (monotonic) and got no answer."""
        self.timeouts.append((owner, began, ended))

    def others_timed_out(self, owner: int, began: float, ended: float) -> bool:
        """Whether another monitor's check timed out while this one waited (within STALL_MARGIN_SECONDS)."""
        return any(
            other != owner and start <= ended + STALL_MARGIN_SECONDS and began - STALL_MARGIN_SECONDS <= end
            for other, start, end in self.timeouts
        )

    def worst_since(self, since: float) -> float:
        """The largest lag (ms) noted since `since` (monotonic), including a sleep that is overdue right now."""
        worst = max((lag for at, lag in reversed(self.readings) if at >= since), default=0.0)
        if self._expected is not None:
            worst = max(worst, (time.monotonic() - self._expected) * 1000)
        return worst


class RunningMonitor:
    """One monitor watching one territory's public base URL until it is stopped or reaches its cap."""

    def __init__(
        self,
        spec: Monitor,
        base_url: str,
        clock: MatchClock,
        lag: LoopLagMeter,
        on_cap: Callable[[RunningMonitor], None] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.spec = spec
        self.base_url = base_url.rstrip("/")
        self.clock = clock
        self.lag = lag
        self.on_cap = on_cap
        self.transport = transport  # tests reach a namespaced guest through a unix socket
        self.tally = MonitorTally(
            monitor=spec.id,
            started_ms=clock.elapsed_ms(),
            interval_ms=spec.interval_ms,
            max_samples=spec.max_samples,
            timeout_ms=spec.timeout_ms,
        )
        self._task: asyncio.Task | None = None
        # Samples with a timed-out check wait RESOLVE_SECONDS before they are folded, so the other monitors
        # can report a timeout of the same moment (a host stall); folded in order, so the first failure stays first.
        self._pending: collections.deque[_Sample] = collections.deque()

    @property
    def samples_taken(self) -> int:
        """Samples taken so far, folded or still pending."""
        return self.tally.samples + len(self._pending)

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> asyncio.Task:
        """Start sampling; the task is returned for the caller to watch (engine.task_failures): a monitor that
        fails (its client, the recorder told of its cap) ends its tally as `failed` and raises there."""
        self.lag.start()
        self._task = asyncio.ensure_future(self._run())
        return self._task

    async def stop(self, reason: str) -> MonitorSummary:
        """Stop sampling (a sample in flight is dropped) and return the summary; stopping twice is harmless."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._fold(force=True)
            self.tally.end(reason, self.clock.elapsed_ms())
            await self.lag.stop()
        return self.tally.summary()

    def summary(self) -> MonitorSummary:
        return self.tally.summary()

    async def _run(self) -> None:
        try:
            await self._sample_until_cap()
        except Exception:
            self.tally.end("failed", self.clock.elapsed_ms())
            await self.lag.stop()
            raise
        if self.on_cap is not None:
            self.on_cap(self)

    async def _sample_until_cap(self) -> None:
        interval = self.spec.interval_ms / 1000
        timeout = httpx.Timeout(self.spec.timeout_ms / 1000)
        limits = httpx.Limits(max_keepalive_connections=0)
        # verify=False: plain HTTP to a forwarded loopback port; loading the CA bundle cost ~0.1 s a client
        # (seconds on a loaded host), paid before the first sample.
        async with httpx.AsyncClient(
            timeout=timeout, limits=limits, trust_env=False, transport=self.transport, verify=False
        ) as client:
            slot = time.monotonic()
            while self.samples_taken < self.spec.max_samples:
                now = time.monotonic()
                if now < slot:
                    await asyncio.sleep(slot - now)
                begun = time.monotonic()
                if self.clock.paused or self.clock.frozen:
                    slot = begun + interval  # a paused match's guests are suspended: nothing to sample
                    continue
                checks, flags = await self._sample(client)
                if self.clock.paused:
                    slot = time.monotonic() + interval  # the guests were suspended under this sample
                    continue
                at_ms = self.clock.elapsed_ms()
                for flag in flags:
                    self.tally.raise_flag(flag, at_ms)  # at once: the judge is waiting for it
                self._pending.append(_Sample(time.monotonic(), at_ms, max(begun - slot, 0.0) * 1000, checks))
                self._fold()
                slot = max(slot + interval, time.monotonic())
        self._fold(force=True)
        self.tally.end("cap", self.clock.elapsed_ms())
        await self.lag.stop()

    def _fold(self, force: bool = False) -> None:
        """Fold the pending samples that are ready (no timeout, or the others had time to report theirs)."""
        now = time.monotonic()
        while self._pending:
            sample = self._pending[0]
            if not force and any(c.timed_out for c in sample.checks) and now - sample.done < RESOLVE_SECONDS:
                return
            self._pending.popleft()
            checks = [
                dataclasses.replace(
                    c, host_stall=self.lag.others_timed_out(id(self), c.began, c.began + c.latency_ms / 1000)
                )
                if c.timed_out
                else c
                for c in sample.checks
            ]
            self.tally.add_sample(sample.at_ms, sample.late_ms, checks, [], max(c.loop_lag_ms for c in checks))

    async def _sample(self, client: httpx.AsyncClient) -> tuple[list[CheckResult], list[str]]:
        checks, flags = [], []
        for probe in self.spec.probes:
            check = await self._check(client, probe.path, probe.expect)
            checks.append(check)
            if probe.flag_on is not None and check.ok and check.seen == probe.flag_on and self.spec.flag:
                flags.append(self.spec.flag)
        return checks, flags

    async def _check(self, client: httpx.AsyncClient, path: str, expect: list[str]) -> CheckResult:
        """One GET, body only (ARENAS §3): the body read up to BODY_LIMIT bytes and compared literally."""
        begun = time.monotonic()
        timed_out = False
        try:
            # The whole check within the timeout, as curl --max-time: a body dripped a byte at a time must not
            # hold the sample (httpx's own timeout is per read).
            async with asyncio.timeout(self.spec.timeout_ms / 1000):
                async with client.stream("GET", self.base_url + path) as response:
                    body = b""
                    async for chunk in response.aiter_raw():
                        body += chunk
                        if len(body) > BODY_LIMIT:
                            break
            text = body[:BODY_LIMIT].decode("utf-8", errors="replace").rstrip("\n")  # shell-captured, as the original
            ok = text in expect
            seen = text if ok else f"status {response.status_code}, body {text[:80]!r}"
        except (httpx.TimeoutException, TimeoutError):
            ok, timed_out, seen, text = False, True, f"no answer within {self.spec.timeout_ms} ms", ""
            self.lag.note_timeout(id(self), begun, time.monotonic())
        except Exception as error:  # noqa: BLE001 - whatever a hostile answer raises is a failed check, not a dead monitor
            ok, seen = False, f"{type(error).__name__}: {error}"
        latency = (time.monotonic() - begun) * 1000
        return CheckResult(
            path=path,
            ok=ok,
            seen=seen,
            latency_ms=latency,
            timed_out=timed_out,
            loop_lag_ms=self.lag.worst_since(begun),
            began=begun,
        )


@dataclass(frozen=True)
class _Sample:
    done: float  # monotonic, when its last check ended
    at_ms: int
    late_ms: float
    checks: list[CheckResult]


@dataclass(frozen=True)
class Judgement:
    verdict: MonitorVerdict
    summary: MonitorSummary
    stopped: bool  # this judgement stopped the monitor (its stop event is due)


async def settle_and_judge(spec: Monitor, monitor: RunningMonitor, clock: MatchClock) -> Judgement:
    """The judging milestone's part: wait for the flag, let the monitor settle, stop it, judge its summary.

    Waits up to `wait_for_flag_seconds` of match time for the flag (a pause ends the wait: the referee's pause
    waits for running checks); not seen, or too few samples after `settle_ms`, the monitor keeps running for
    the retry. Once stopped, a monitor is
    judged again as it stood. The verdict is `domain.monitor.judge` of the summary alone, as in a replay.
    """
    if monitor.running:
        deadline_ms = clock.elapsed_ms() + spec.wait_for_flag_seconds * 1000
        while spec.flag is not None and spec.flag not in monitor.tally.flags and monitor.running:
            if clock.paused:  # a pause waits for running checks: this one must not wait out the pause
                return Judgement(MonitorVerdict(False, PAUSED_DETAIL), monitor.summary(), False)
            if clock.elapsed_ms() >= deadline_ms:
                return Judgement(MonitorVerdict(False, spec.never_flagged_detail), monitor.summary(), False)
            await asyncio.sleep(0.05)
        await asyncio.sleep(spec.settle_ms / 1000)
        if monitor.samples_taken < spec.min_samples and monitor.running:
            detail = spec.too_few_detail.format(samples=monitor.samples_taken)
            return Judgement(MonitorVerdict(False, detail), monitor.summary(), False)
        summary = await monitor.stop("judged")
        return Judgement(judge(spec.rules(), summary), summary, True)
    summary = monitor.summary()
    return Judgement(judge(spec.rules(), summary), summary, False)
