"""The monitors' calibrated timeout (engine.monitor_calibration): measured on the guests before any agent acts,
while each guest runs the calibration load; one bound for every territory, `factor` times the slowest answer
anywhere, within the manifest's floor and ceiling; an honest answer slower than the manifest's 1 s passes at the
calibrated bound while a 502 fails at any bound; a load that fails names its territory."""

from __future__ import annotations

import asyncio
import math

import pytest

from aoe_tui.domain.manifest import Manifest
from aoe_tui.domain.manifest_rules import validate_manifest
from aoe_tui.domain.monitor import calibrated_timeout_ms, judge
from aoe_tui.engine.clock import MatchClock
from aoe_tui.engine.monitor import LoopLagMeter, RunningMonitor
from aoe_tui.engine.monitor_calibration import calibrate_monitors
from aoe_tui.engine.provisioning import ArenaSetupFailed
from aoe_tui.runtime.ssh import CommandResult
from tests.engine.rollout_endpoint import RolloutEndpoint
from tests.engine.test_continuity_monitor import _judged, rollout_data


class _Guest:
    """A territory whose calibration load slows its endpoint by `slow` seconds a request while it runs."""

    def __init__(self, territory_id: str, endpoint: RolloutEndpoint, slow: float, fails: bool = False) -> None:
        self.territory_id, self.endpoint, self.slow, self.fails = territory_id, endpoint, slow, fails
        self.host = "127.0.0.1"
        self.service_port = int(endpoint.url.rsplit(":", 1)[1])
        self.commands: list[str] = []

    async def run(self, command: str, timeout: float) -> CommandResult:
        self.commands.append(command)
        self.endpoint.delay = self.slow
        await asyncio.sleep(1.0)
        self.endpoint.delay = 0.0
        if self.fails:
            return CommandResult(1, "", "python3: No module named sqlite3\nmore")
        return CommandResult(0, "", "")


@pytest.fixture
def endpoints():
    made = [RolloutEndpoint(), RolloutEndpoint()]
    yield made
    for endpoint in made:
        endpoint.close()


def _manifest(**calibration) -> Manifest:
    data = rollout_data()
    data["monitors"][0]["calibration"] = {**data["monitors"][0]["calibration"], **calibration}
    return Manifest.model_validate(data)


def _clock() -> MatchClock:
    clock = MatchClock()
    clock.start()
    return clock


def test_the_rollouts_monitor_is_calibrated_between_1_and_5_s():
    calibration = Manifest.model_validate(rollout_data()).monitors[0].calibration
    assert calibration is not None and "python3" in calibration.load and "daemon-reload" in calibration.load
    assert calibration.publish_to == "/etc/aoe-rollout/relay-timeout-ms"
    assert (calibration.factor, calibration.max_timeout_ms) == (3.0, 5000)
    assert calibrated_timeout_ms(1000, 40, 3.0, 5000) == 1000  # a fast host keeps the manifest's bound
    assert calibrated_timeout_ms(1000, 501, 3.0, 5000) == 1503
    assert calibrated_timeout_ms(1000, 4000, 3.0, 5000) == 5000


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"max_timeout_ms": 500}, "calibration.max_timeout_ms must not be below timeout_ms"),
        ({"factor": 0}, "monitors[0].calibration.factor: must be positive"),
        ({"lod": "true"}, "monitors[0].calibration.lod: unknown key"),
    ],
)
def test_a_wrong_calibration_is_named(change, problem):
    data = rollout_data()
    data["monitors"][0]["calibration"].update(change)
    _, problems = validate_manifest(data)
    assert any(problem in str(p) for p in problems), [str(p) for p in problems]


async def test_one_bound_for_every_territory_from_the_slowest_answer_under_load(endpoints):
    guests = {
        "rollout-one": _Guest("rollout-one", endpoints[0], 0.5),
        "rollout-two": _Guest("rollout-two", endpoints[1], 0),
    }
    records = await calibrate_monitors(_manifest(min_samples=5), guests, _clock())
    record = records["continuity"]
    assert record.slowest_ms >= 500 and record.slowest_ms == record.territories["rollout-one"].max
    assert record.territories["rollout-two"].max < 500
    assert record.timeout_ms == min(max(1000, math.ceil(3.0 * record.slowest_ms)), 5000) >= 1500
    assert all(n >= 5 for n in record.samples.values()) and record.failed_checks == {"rollout-one": 0, "rollout-two": 0}
    published = f"mkdir -p \"$(dirname /etc/aoe-rollout/relay-timeout-ms)\" && printf '%s\\n' {record.timeout_ms} > /etc/aoe-rollout/relay-timeout-ms"
    assert all(g.commands == [record.load, published] for g in guests.values())  # the proxy relays within it


async def test_a_hung_guest_sets_the_ceiling_not_more(endpoints):
    guests = {
        "rollout-one": _Guest("rollout-one", endpoints[0], 0.8),
        "rollout-two": _Guest("rollout-two", endpoints[1], 0),
    }
    record = (await calibrate_monitors(_manifest(min_samples=3, max_timeout_ms=1200), guests, _clock()))["continuity"]
    assert record.timeout_ms == 1200


async def test_a_failed_load_names_its_territory(endpoints):
    guests = {
        "rollout-one": _Guest("rollout-one", endpoints[0], 0),
        "rollout-two": _Guest("rollout-two", endpoints[1], 0, fails=True),
    }
    with pytest.raises(ArenaSetupFailed) as failed:
        await calibrate_monitors(_manifest(), guests, _clock())
    assert failed.value.territory_id == "rollout-two"
    assert failed.value.detail == "rollout-two: calibration load failed (exit 1): python3: No module named sqlite3"


@pytest.mark.parametrize(("timeout_ms", "passes"), [(1000, False), (2000, True)])
async def test_an_honest_slow_answer_passes_at_the_calibrated_bound_only(endpoints, timeout_ms, passes, monkeypatch):
    from aoe_tui.domain import monitor as monitor_rules

    monkeypatch.setattr(monitor_rules, "LAG_EXCUSE_MS", 10**9)  # only the bound decides here
    endpoint = endpoints[0]
    spec = _manifest().monitors[0].model_copy(update={"timeout_ms": timeout_ms})
    clock = _clock()
    monitor = RunningMonitor(spec, endpoint.url, clock, LoopLagMeter())
    monitor.start()
    await asyncio.sleep(0.3)
    endpoint.delay = 1.2  # the guest starts v2's Python: the old version answers late, but answers
    await asyncio.sleep(1.5)
    endpoint.delay, endpoint.version = 0, "v2"
    judged = await _judged(spec, monitor, clock)
    assert judged.summary.timeout_ms == timeout_ms
    assert judge(spec.rules(), judged.summary).passed is passes, judged.summary


async def test_a_502_fails_at_any_bound(endpoints, monkeypatch):
    endpoint = endpoints[0]
    spec = _manifest().monitors[0].model_copy(update={"timeout_ms": 5000})
    clock = _clock()
    monitor = RunningMonitor(spec, endpoint.url, clock, LoopLagMeter())
    monitor.start()
    await asyncio.sleep(0.3)
    endpoint.down = True
    await asyncio.sleep(0.3)
    endpoint.down, endpoint.version = False, "v2"
    judged = await _judged(spec, monitor, clock)
    assert judged.verdict.final and judged.summary.first_failure.seen.startswith("status 502")
