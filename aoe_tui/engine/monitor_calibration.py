"""Calibrating a monitor's check timeout on the match's own guests, before any agent acts.

A check timeout fixed in the manifest judges the host as much as the player: on emulated guests sharing two
cores, an honest proxy's answer took over a second while the guest started the new version's Python, and the
same oracle passed three races in four. So for a monitor with a `calibration` table the referee measures,
once every guest is provisioned and before any agent starts: it runs the monitor itself
(`engine.monitor.RunningMonitor`, the same probes, client and schedule, the ceiling as its timeout) against
every territory's public port while each guest runs the calibration load, and sets the timeout to the
manifest's factor times the slowest answer seen anywhere (`domain.monitor.calibrated_timeout_ms`). One bound
for every territory, kept in provenance (`monitor_calibration`) and in each summary the milestone is judged
by. Only the timeout moves: a wrong body, a 502 or a refused connection fails at any bound.
"""

from __future__ import annotations

import asyncio
import shlex
import time

from aoe_tui.domain.manifest import Manifest, Monitor, MonitorCalibration
from aoe_tui.domain.monitor import CalibrationRecord, calibrated_timeout_ms
from aoe_tui.domain.untrusted import first_line
from aoe_tui.engine.clock import MatchClock
from aoe_tui.engine.monitor import LoopLagMeter, RunningMonitor
from aoe_tui.engine.provisioning import ArenaSetupFailed
from aoe_tui.engine.territory import TerritoryHost, TerritoryUnavailable

COMPONENT = "monitor calibration"
_DETAIL_LIMIT = 200


async def calibrate_monitors(
    manifest: Manifest, hosts: dict[str, TerritoryHost], clock: MatchClock
) -> dict[str, CalibrationRecord]:
    """Each calibrated monitor's record, by monitor id (none when no monitor asks for calibration).

    Raises ArenaSetupFailed naming the territory when its load cannot run or its port never answered."""
    records = {}
    for spec in manifest.monitors or []:
        if spec.calibration is not None:
            records[spec.id] = await _calibrate(spec, spec.calibration, hosts, clock)
    return records


async def _calibrate(
    spec: Monitor, calibration: MonitorCalibration, hosts: dict[str, TerritoryHost], clock: MatchClock
) -> CalibrationRecord:
    probe = spec.model_copy(update={"timeout_ms": calibration.max_timeout_ms, "max_samples": 10**6})
    lag = LoopLagMeter()
    monitors = {
        territory: RunningMonitor(probe, f"http://{host.host}:{host.service_port}", clock, lag)
        for territory, host in hosts.items()
    }
    tasks = [monitor.start() for monitor in monitors.values()]
    try:
        loads = await asyncio.gather(*(_run_load(host, calibration) for host in hosts.values()), return_exceptions=True)
        for outcome in loads:
            if isinstance(outcome, BaseException):
                raise outcome
        await _until_sampled(monitors, calibration, spec.interval_ms)
    finally:
        summaries = {territory: await monitor.stop("calibrated") for territory, monitor in monitors.items()}
        await asyncio.gather(*tasks, return_exceptions=True)
    latencies = {territory: summary.check_latency_ms for territory, summary in summaries.items()}
    for territory, latency in latencies.items():
        if latency is None:
            raise ArenaSetupFailed(
                territory, COMPONENT, f"{territory}: no check of monitor {spec.id} was made during its calibration"
            )
    slowest = max(latency.max for latency in latencies.values() if latency is not None)
    timeout_ms = calibrated_timeout_ms(spec.timeout_ms, slowest, calibration.factor, calibration.max_timeout_ms)
    if calibration.publish_to is not None:
        await asyncio.gather(*(_publish(host, calibration.publish_to, timeout_ms) for host in hosts.values()))
    return CalibrationRecord(
        monitor=spec.id,
        timeout_ms=timeout_ms,
        floor_ms=spec.timeout_ms,
        max_timeout_ms=calibration.max_timeout_ms,
        factor=calibration.factor,
        slowest_ms=slowest,
        load=calibration.load,
        territories=latencies,
        samples={territory: summary.samples for territory, summary in summaries.items()},
        failed_checks={territory: summary.failures for territory, summary in summaries.items()},
    )


async def _run_load(host: TerritoryHost, calibration: MonitorCalibration) -> None:
    await _run_checked(host, calibration.load, calibration.load_timeout_seconds, "calibration load")


async def _publish(host: TerritoryHost, path: str, timeout_ms: int) -> None:
    """Write the bound where the arena's own programs read it (`publish_to`)."""
    quoted = shlex.quote(path)
    command = f"mkdir -p \"$(dirname {quoted})\" && printf '%s\\n' {timeout_ms} > {quoted}"
    await _run_checked(host, command, 60, "writing the calibrated timeout")


async def _run_checked(host: TerritoryHost, command: str, timeout: float, what: str) -> None:
    """Run `command` in the guest; an unreachable guest or a non-zero exit is the arena's failure, named."""
    try:
        result = await host.run(command, timeout)
    except TerritoryUnavailable as error:
        raise ArenaSetupFailed(host.territory_id, COMPONENT, f"{host.territory_id}: {what}: {error}") from None
    if result.exit_status != 0:
        said = first_line(result.stderr.strip() or result.stdout.strip(), _DETAIL_LIMIT) or f"exit {result.exit_status}"
        raise ArenaSetupFailed(
            host.territory_id, COMPONENT, f"{host.territory_id}: {what} failed (exit {result.exit_status}): {said}"
        )


async def _until_sampled(
    monitors: dict[str, RunningMonitor], calibration: MonitorCalibration, interval_ms: int
) -> None:
    """Keep sampling after the load until every territory has `min_samples` (bounded by the load's own timeout)."""
    deadline = time.monotonic() + calibration.load_timeout_seconds
    while any(m.samples_taken < calibration.min_samples for m in monitors.values()) and time.monotonic() < deadline:
        await asyncio.sleep(interval_ms / 1000)
