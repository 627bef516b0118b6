"""First Contact on real VMs: one conquest, the attacker really eliminating the careless courier over the segment.

One match per module (three TCG guests from the first-contact image layer,
`aoe image build --layer first-contact`): the referee provisions each stack
(nginx + gatekeeper-app, PostgreSQL 15 + archivist-app, Redis + courier
worker and app) and its arena NIC, then probes every tick. The gatekeeper's
scripted attacker shuts down the courier's open Redis from inside its own
guest over 10.77.0.0/24; the courier's careless player repairs nothing, so
the referee degrades it, then eliminates it when its window (20 s in this
test manifest, derived from arena.toml) expires and powers it off. The two
defenders stay healthy: the timer ranks them (or one is last standing).

While the guests are up, the isolation proof runs from inside the archivist:
over its arena NIC it tries the host's addresses, the management NIC's
gateway and DNS, and a public address (source-routed out the arena NIC so the
management path is untouched), and the peers' listed and unlisted ports;
from outside, the host checks that QEMU's arena NICs are loopback UDP to the
match's hub, that the hub carried frames from each guest, and that no
interface appeared on the host.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from aoe_tui.domain import conquest as cq
from aoe_tui.domain.events import ResourcesChanged
from aoe_tui.domain.manifest import Manifest
from aoe_tui.domain.reducer import reduce
from aoe_tui.engine.recorder import Progress
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.store.saved_match import load_match
from tests.app.app_under_test import SIZE, replay_app, screen_text
from tests.fixture_paths import PROJECT
from tests.engine.vm_race import operated_race

pytestmark = pytest.mark.vm
ARENA = PROJECT / "arenas" / "first-contact" / "arena.toml"
BASE_PORT = 30200  # this module's loopback range: 30200-30205 (TCP forwards; the segment's UDP ports, same numbers)
WINDOW_SECONDS = 20
DURATION_SECONDS = 150
TOKENS = {"gatekeeper": "gatekeeper:ok", "archivist": "archivist:ok", "courier": "courier:ok"}

_ISOLATION = r"""
dev=$(ip -o link | awk -F': ' '/link\/ether 52:54:00:77:00:/ {print $2; exit}')
me=10.77.0.11
echo "dev $dev"; ip -4 -o addr show dev "$dev"; echo "routes:"; ip route
ip rule add from $me table 77 2>/dev/null; ip route replace default dev "$dev" table 77
check() {  # kind target port: every attempt leaves from the arena address, so only the arena NIC carries it
  case $1 in
  icmp) ping -c 1 -W 2 -I $me "$2" >/dev/null 2>&1 && echo "reach $2 icmp" || echo "no $2 icmp" ;;
  tcp) nc -z -w 3 -s $me "$2" "$3" 2>/dev/null && echo "reach $2 tcp$3" || echo "no $2 tcp$3" ;;
  peer) nc -z -w 3 "$2" "$3" 2>/dev/null && echo "open $2:$3" || echo "closed $2:$3" ;;
  esac
}
for spec in 10.77.0.10:8080 10.77.0.10:22 10.77.0.10:9000 10.77.0.12:8080 10.77.0.12:6379 10.77.0.12:22 \
            10.77.0.12:5432; do
  check peer "${spec%:*}" "${spec#*:}" &
done
for target in TARGETS; do
  check icmp "$target" & check tcp "$target" 22 & check tcp "$target" 80 &
done
wait
echo "neighbours:"; ip neigh show dev "$dev"
ip route flush table 77; ip rule del from $me table 77
"""


def _host_addresses() -> list[str]:
    out = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True, check=True).stdout
    return [f.split()[3].split("/")[0] for f in out.splitlines() if not f.split()[3].startswith("127.")]


def _links() -> set[str]:
    out = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True).stdout
    return {line.split(": ")[1].split("@")[0] for line in out.splitlines()}


def _qemu_arena_netdevs() -> list[str]:
    """The arena NIC's netdev argument of every running QEMU, read whole from /proc (ps cuts long lines)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and b"qemu-system" in argv[0]:
            found += [a.decode() for a in argv if a.startswith(b"dgram,id=a0") or b"id=a0," in a]
    return found


def _test_manifest() -> Manifest:
    data = load_manifest(ARENA).to_json()
    data["rules"]["duration_seconds"] = DURATION_SECONDS
    for territory in data["territories"]:
        territory["service"]["health"]["recovery_window_seconds"] = WINDOW_SECONDS
    return Manifest.model_validate(data)


async def _operate(runner: MatchRunner, updates: asyncio.Queue, seen: dict, targets: list[str]) -> None:
    while True:
        update = await updates.get()
        if isinstance(update, Progress):
            if update.message.startswith("health preflight") and "isolation" not in seen:
                seen["netdevs"] = _qemu_arena_netdevs()
                script = _ISOLATION.replace("TARGETS", " ".join(targets))
                seen["isolation"] = await runner.referee.hosts["archivist"].run(script, 90)
            continue
        if update.kind == "territory_eliminated" and "frames" not in seen:
            runtime = runner.provider.runtime
            seen["frames"] = dict(runtime.segment.frames) if runtime and runtime.segment else {}


@pytest.fixture(scope="module")
def contact(tmp_path_factory):
    targets = [*_host_addresses(), "10.0.2.2", "10.0.2.3", "192.0.2.1", "1.1.1.1"]
    seen: dict = {"links_before": _links()}
    output, wall = operated_race(
        tmp_path_factory,
        "contact",
        ARENA,
        BASE_PORT,
        lambda runner, updates: _operate(runner, updates, seen, targets),
        manifest=_test_manifest(),
    )
    seen["links_after"] = _links()
    print(f"\nreal first-contact match: {wall:.0f} s wall")
    return output, load_match(output), seen, targets


def test_the_attacker_really_eliminates_the_careless_courier_over_the_segment(contact):
    output, match, _, _ = contact
    events = match.events
    courier = [e for e in events if e.kind == "territory_state_changed" and e.territory == "courier"]
    assert [(e.to_json()["from"], e.to, e.reason) for e in courier] == [
        ("provisioning", "healthy", "preflight passed"),
        ("healthy", "degraded", "failure threshold reached"),
        ("degraded", "eliminated", "recovery window expired"),
    ]
    assert courier[2].elapsed_ms - courier[1].elapsed_ms >= WINDOW_SECONDS * 1000
    eliminated = [e for e in events if e.kind == "territory_eliminated"]
    assert ("courier", "player", "recovery window expired") in [(e.territory, e.source, e.detail) for e in eliminated]
    down = [e for e in events if e.kind == "health_observed" and e.territory == "courier" and not e.healthy]
    assert down and down[0].detail == "queue unavailable" and down[0].status == 503
    trace = (output / "agents" / "gatekeeper-agent" / "tool_trace.jsonl").read_text()
    assert "courier redis shut down" in trace
    assert match.world.territories["courier"].state == "eliminated"


def test_the_defenders_survive_and_the_end_is_last_standing_or_the_timer_ranking(contact):
    _, match, _, _ = contact
    world, events = match.world, match.events
    assert {t: world.territories[t].state for t in ("gatekeeper", "archivist")} == {
        "gatekeeper": "healthy",
        "archivist": "healthy",
    }
    first = [e for e in events if e.kind == "health_observed" and e.healthy]
    assert {e.territory: e.detail for e in first} == TOKENS
    if world.finish_reason == "last territory standing":
        assert world.winner in ("gatekeeper", "archivist")
        return
    assert world.finish_reason == "match timer expired"
    replayed, machines = cq.replay_transitions(events, 3, WINDOW_SECONDS * 1000)
    uptime = Counter(
        e.territory for e in events if isinstance(e, ResourcesChanged) and e.reason == cq.HEALTHY_TICK_REASON
    )
    standings = [
        cq.Standing(
            t,
            machines[t].out,
            uptime[t],
            world.territories[t].resources,
            machines[t].degraded_time_ms(world.elapsed_ms),
        )
        for t in TOKENS
    ]
    assert world.winner == cq.timer_ranking(standings)[1]


def test_from_inside_a_guest_nothing_but_the_peers_listed_ports_is_reachable(contact):
    _, _, seen, targets = contact
    result = seen["isolation"]
    lines = set(result.stdout.splitlines())
    assert result.exit_status == 0, result.stderr
    for target in targets:
        for probe in ("icmp", "tcp22", "tcp80"):
            assert f"no {target} {probe}" in lines, result.stdout
    assert not [line for line in lines if line.startswith("reach ")]
    assert {"open 10.77.0.10:8080", "open 10.77.0.12:8080"} <= lines, result.stdout
    assert {"closed 10.77.0.10:22", "closed 10.77.0.10:9000", "closed 10.77.0.12:22", "closed 10.77.0.12:5432"} <= lines
    assert "open 10.77.0.12:6379" in lines or "closed 10.77.0.12:6379" in lines  # listed; the attacker may be first
    routes = result.stdout.split("routes:")[1].split("neighbours:")[0]
    assert not [r for r in routes.splitlines() if r.startswith("default") and "eth1" in r]


def test_from_outside_the_segment_is_loopback_udp_to_the_hub_and_leaves_nothing_on_the_host(contact):
    _, _, seen, _ = contact
    netdevs = seen["netdevs"]
    assert len(netdevs) == 3
    for netdev in netdevs:
        assert "dgram" in netdev and "local.host=127.0.0.1" in netdev and "remote.host=127.0.0.1" in netdev
        assert f"remote.port={BASE_PORT}" in netdev
    assert set(seen["frames"]) == set(TOKENS) and all(n > 0 for n in seen["frames"].values())
    assert seen["links_after"] == seen["links_before"]  # no bridge, tap or anything else was left on the host


def test_the_saved_match_replays_and_live_and_replay_share_the_transitions(contact):
    output, match, _, _ = contact
    assert reduce(match.events).to_json() == json.loads((output / "world.json").read_text())
    replayed, _ = cq.replay_transitions(match.events, 3, WINDOW_SECONDS * 1000)
    assert replayed == cq.recorded_transitions(match.events)
    instruction = (output / "agents" / "courier-agent" / "instruction.md").read_text()
    assert "courier:ok" in instruction and "10.77.0.12" in instruction


async def test_the_match_opens_in_the_app(contact):
    output, _, _, _ = contact
    app = replay_app(output)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        await pilot.pause()
        text = screen_text(app)
    assert "courier" in text and "eliminated" in text
