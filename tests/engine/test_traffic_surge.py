"""The Traffic Surge arena without VMs: the original's ids and rules, a folder that validates and passes its own
leak audit, and its verifiers (with the host-side load generator) against its own serial app and each scripted
builder's, run as in a guest (tests.engine.surge_guest): the oracle passes every milestone, each flawed builder
stops where its mistake shows, with the original's wording."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from aoe_tui.agents.registry import resolve_adapter
from aoe_tui.agents.scripted.plans import PLANS
from aoe_tui.cli.main import main
from aoe_tui.domain.manifest import LeakAudit
from aoe_tui.engine.fog import audit_command
from aoe_tui.engine.provenance import provenance, verifier_files
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.store.saved_match import load_match
from tests.engine.surge_guest import ARENA, SurgeGuest
from tests.fixture_paths import MATCHES

MANIFEST = ARENA / "arena.toml"
PUBLISHED = MATCHES / "traffic-surge-real-20260818-101349"
MILESTONES = [  # id, depends on, operation, timeout, points (ARENAS.md §4)
    ("baseline-ready", [], "observe", 5, 5),
    ("priority-first-surge", ["baseline-ready"], "observe", 15, 20),
    ("bounded-optional", ["priority-first-surge"], "observe", 15, 15),
    ("recover-peak", ["bounded-optional"], "observe", 20, 25),
    ("restart-under-load", ["recover-peak"], "observe", 25, 15),
    ("host-reboot", ["restart-under-load"], "host_reboot", 40, 20),
]
IDS = [m[0] for m in MILESTONES]
EVIDENCE_KEYS = {  # the published match's evidence keys (world.json), kept by our verifiers
    "baseline-ready": ["health", "historical_records"],
    "priority-first-surge": ["optional_pressure", "record", "value"],
    "bounded-optional": ["bounded", "requests", "served", "shed"],
    "recover-peak": ["peak_optional_pressure", "records", "recoverable"],
    "restart-under-load": ["record", "restart_under_load", "value"],
    "host-reboot": ["historical_records", "reboot", "record", "value"],
}
TIMED_OUT = re.compile(r"curl: \(28\) Operation timed out after 15\d\d milliseconds with 0 bytes received")


def test_ids_rules_points_fog_and_the_map_are_the_originals():
    manifest = load_manifest(MANIFEST)
    assert (manifest.arena.id, manifest.arena.category, manifest.arena.mode) == (
        "traffic-surge",
        "traffic-and-saturation",
        "build_race",
    )
    assert manifest.network.cidr == "10.82.0.0/24"
    rules = manifest.rules
    assert (rules.duration_seconds, rules.tick_ms, rules.minimum_territories, rules.healthy_resources_per_tick) == (
        900,
        2000,
        3,
        0,
    )
    build = manifest.build
    assert build.stop_on_first_durable and build.completion_milestone == "host-reboot"
    assert [(m.id, m.depends_on, m.operation, m.timeout_seconds, m.points) for m in build.milestones] == MILESTONES
    [engineer] = manifest.classes
    assert (engineer.id, engineer.display_name) == ("surge-engineer", "Surge Engineer")
    assert (engineer.resources.vcpus, engineer.resources.memory_mib, engineer.resources.disk_mib) == (1, 768, 2048)
    assert [t.id for t in manifest.territories] == ["surge-one", "surge-two", "surge-three"]
    for territory in manifest.territories:
        service, health = territory.service, territory.service.health
        assert (service.port, service.path, service.expected_status, service.expected_body) == (
            8080,
            "/health",
            200,
            "ready",
        )
        assert (health.poll_interval_ms, health.consecutive_failures, health.recovery_window_seconds) == (1000, 3, 60)
    assert [a.id for a in manifest.agents] == [f"{t.id}-agent" for t in manifest.territories]
    published = load_match(PUBLISHED).manifest
    assert manifest.fog_of_war.guest_leak_audit == published.fog_of_war.guest_leak_audit
    assert manifest.fog_of_war.hide_topology_until_observed
    ours = {n.id: (n.display_name, n.kind, n.milestone) for n in manifest.visualization.nodes}
    theirs = {n.id: (n.display_name, n.kind, n.milestone) for n in published.visualization.nodes}
    assert ours == theirs | {"host": ("Debian Host", "host", "host-reboot")}
    link = lambda v: [(k.from_, k.to, k.kind, k.label) for k in v.links]  # noqa: E731
    assert link(manifest.visualization) == link(published.visualization)


def test_the_folder_validates_and_the_key_follows_the_load_generator(capsys, tmp_path):
    assert main(["arena", "validate", str(ARENA)]) == 0
    assert "arena folder valid" in capsys.readouterr().out
    files = {p.name for p in verifier_files(load_manifest(MANIFEST), MANIFEST)}
    assert {"surge.sh", "lib.sh", "load_generator.py"} <= files
    first = provenance(load_manifest(MANIFEST), MANIFEST)
    assert first["player_brief_sha256"] and first == provenance(load_manifest(MANIFEST), MANIFEST)


def test_the_builders_are_built_in_and_never_touch_the_arenas_own_files():
    for name in ("surge-oracle", "surge-serial", "surge-volatile", "surge-bad-shed"):
        assert resolve_adapter(name).builtin
        for step in PLANS[name].steps:
            assert "/usr/local/lib/aoe" not in step.command and "/etc/systemd" not in step.command


def test_the_published_evidence_keys_are_kept():
    published = load_match(PUBLISHED).world.territories["surge-two"].milestones
    assert {m: sorted(state.evidence) for m, state in published.items() if state.evidence} == EVIDENCE_KEYS


# -- the checks against the arena's app and the builders', as in a guest ----------------------------------


@pytest.fixture
def guest(tmp_path):
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rn", "true"], check=False).returncode:
        pytest.skip("needs network namespaces (unshare -rn)")
    guest = SurgeGuest(tmp_path)
    try:
        guest.boot()
        yield guest
    finally:
        guest.close()


def test_the_guest_passes_its_own_leak_audit(guest):
    """What provisioning and the seed put in the audited folders names none of the referee's checks."""
    leak = load_manifest(MANIFEST).fog_of_war.guest_leak_audit
    below_root = LeakAudit(
        scan_paths=[str(guest.path(p)) for p in leak.scan_paths if guest.path(p).exists()],
        forbidden_strings=leak.forbidden_strings,
    )
    assert subprocess.run(["bash", "-c", audit_command(below_root)], capture_output=True, text=True).stdout == "CLEAN\n"
    (guest.path("/opt/traffic-surge") / "notes").write_text("see recover-peak.sh\n")
    found = subprocess.run(["bash", "-c", audit_command(below_root)], capture_output=True, text=True).stdout
    assert found.startswith("HIT\t2\t") and found.rstrip().endswith("/opt/traffic-surge/notes")


async def test_the_starting_app_is_serial_and_keeps_history(guest):
    assert guest.path("/opt/traffic-surge/app.py").stat().st_mode & 0o777 == 0o755
    assert (await guest.verify("baseline-ready")).evidence == {"health": "ready", "historical_records": 3}
    timed = guest.run("curl -s -o /dev/null -w '%{http_code} %{time_total}' 127.0.0.1:8080/optional/x").stdout.split()
    assert timed[0] == "200" and float(timed[1]) >= 0.45
    outcome = await guest.verify("priority-first-surge", {})
    assert outcome.verdict == "failed" and TIMED_OUT.fullmatch(outcome.detail), outcome.detail


async def test_the_oracle_passes_every_milestone_with_the_published_evidence(guest):
    guest.play(PLANS["surge-oracle"])
    evidence = await guest.checked_until(IDS)
    assert {m: sorted(set(e) & set(EVIDENCE_KEYS[m])) for m, e in evidence.items()} == EVIDENCE_KEYS
    first = evidence["priority-first-surge"]
    assert re.fullmatch(r"surge-[0-9a-f]{16}", first["record"]) and re.fullmatch(
        r"priority-[0-9a-f]{24}", first["value"]
    )
    assert (
        first["optional_pressure"] == 8 and first["start_spread_ms"] < 250 and first["burst_connected_at_release"] == 8
    )
    bounded = evidence["bounded-optional"]
    assert bounded["requests"] == 16 and bounded["served"] + bounded["shed"] == 16 and bounded["shed"] >= 8
    peak = evidence["recover-peak"]["records"]
    assert [r["id"][:7] for r in peak] == ["peak-1-", "peak-2-", "peak-3-", "peak-4-"]
    assert all(re.fullmatch(r"accepted-\d-[0-9a-f]{20}", r["value"]) for r in peak)
    assert evidence["host-reboot"]["record"] == evidence["restart-under-load"]["record"]
    assert evidence["host-reboot"]["reboot_caused_by"] == "acpi"
    assert guest.path("/var/lib/traffic-surge/priority.sqlite3").exists()


async def test_a_serial_server_with_a_shorter_sleep_stops_at_priority_first_surge(guest):
    guest.play(PLANS["surge-serial"])
    app = guest.path("/opt/traffic-surge/app.py").read_text()
    assert "time.sleep(0.3)" in app and "    HTTPServer.request_queue_size = 64\n    HTTPServer((" in app
    assert (await guest.verify("baseline-ready")).passed
    outcome = await guest.verify("priority-first-surge")
    assert outcome.verdict == "failed" and TIMED_OUT.fullmatch(outcome.detail), outcome.detail


def _answer_optional_with(guest, body: str) -> None:
    """The arena's app, its optional handler (0.45 s, then `optional:<id>`) replaced by `body`, restarted."""
    app = guest.path("/opt/traffic-surge/app.py")
    source = app.read_text().replace(
        'time.sleep(0.45)\n            return self.answer(200, f"optional:{key}".encode())', body
    )
    assert source != app.read_text()
    app.write_text(source)
    assert guest.run("systemctl restart traffic-surge.service").returncode == 0
    guest.wait_listening(8080)


async def test_a_priority_write_answered_after_the_surge_was_dropped_proves_nothing(guest):
    """A serial server restarting drops the queued surge and answers the next connection at once (seen once in
    CI on a real guest): the fast 204 came after no surge at all, so the milestone fails naming the dropped one."""
    _answer_optional_with(guest, "self.close_connection = True\n            return None")
    outcome = await guest.verify("priority-first-surge")
    assert outcome.verdict == "failed"
    assert re.fullmatch(
        r"the optional surge did not hold while priority PUT /priority/surge-[0-9a-f]{16} was answered: "
        r"optional request \d: curl: \(52\) Empty reply from server",
        outcome.detail,
    ), outcome.detail


async def test_shedding_with_500_stops_at_bounded_optional(guest):
    guest.play(PLANS["surge-bad-shed"])
    assert (await guest.verify("priority-first-surge")).passed
    outcome = await guest.verify("bounded-optional")
    assert outcome.verdict == "failed"
    assert re.fullmatch(r"optional request \d+ was neither served nor deliberately shed: 500", outcome.detail)


async def test_state_under_run_passes_the_restart_and_fails_the_reboot(guest):
    guest.play(PLANS["surge-volatile"])
    evidence = await guest.checked_until(IDS[:-1])
    assert (await guest.verify("host-reboot", evidence, AOE_VERIFY_PHASE="before_reboot")).passed
    outcome = await guest.after_reboot(evidence, AOE_TEST_REBOOT_TRIES="2")  # a known failure: not 35 tries
    record = evidence["restart-under-load"]["record"]
    assert outcome.verdict == "failed" and outcome.detail == (
        f"priority state or traffic service did not survive reboot: GET /priority/{record} returned 404, expected 200"
    )


async def test_a_wrong_optional_body_is_named_literally(guest):
    """Bytes from the guest reach a detail bounded (60 characters) and escaped, never as control sequences."""
    _answer_optional_with(guest, 'return self.answer(200, b"optional:\\x1b[31m" + b"x" * 100000)')
    outcome = await guest.verify("bounded-optional")
    assert outcome.verdict == "failed" and outcome.detail == (
        'optional request 1 was served with body "optional:\\u001b[31m' + "x" * 46 + '" instead of optional:bounded-1'
    )
