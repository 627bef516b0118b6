"""The Primary Failover arena without VMs: the original's ids and rules, a folder that validates, a key that
follows its checks, and its verifiers against its own programs run as in a guest (tests.engine.failover_guest),
with the scripted oracle passing every milestone and each flawed builder stopped where its mistake shows."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from aoe_tui.agents.registry import resolve_adapter
from aoe_tui.agents.scripted.plans import PLANS
from aoe_tui.cli.main import main
from aoe_tui.engine.provenance import provenance
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.store.saved_match import load_match
from tests.engine.failover_guest import ARENA, FailoverGuest
from tests.fixture_paths import PRIMARY_FAILOVER

MANIFEST = ARENA / "arena.toml"
STATE = "/var/lib/failover"
MILESTONES = [  # id, depends on, operation, timeout, points (ARENAS.md §2)
    ("failed-primary-preserved", [], "observe", 5, 5),
    ("reads-restored", ["failed-primary-preserved"], "observe", 10, 20),
    ("old-primary-fenced", ["reads-restored"], "observe", 10, 20),
    ("writes-restored", ["old-primary-fenced"], "observe", 15, 25),
    ("service-restart", ["writes-restored"], "observe", 20, 15),
    ("host-reboot", ["service-restart"], "host_reboot", 40, 15),
]
EVIDENCE_KEYS = {  # the published match's evidence keys (world.json), kept by our verifiers
    "failed-primary-preserved": ["failed_primary", "listening", "preserved"],
    "reads-restored": ["reads", "records", "role"],
    "old-primary-fenced": ["old_port", "old_primary", "promoted_port"],
    "writes-restored": ["record", "value", "writes"],
    "service-restart": ["record", "restart", "value"],
    "host-reboot": ["old_primary", "reboot", "record", "role", "value"],
}


def test_ids_rules_points_and_the_map_are_the_originals():
    manifest = load_manifest(MANIFEST)
    assert (manifest.arena.id, manifest.arena.category, manifest.arena.mode) == (
        "primary-failover",
        "stateful-recovery",
        "build_race",
    )
    assert manifest.network.cidr == "10.81.0.0/24" and manifest.fog_of_war is None
    rules = manifest.rules
    assert (rules.duration_seconds, rules.tick_ms, rules.minimum_territories, rules.healthy_resources_per_tick) == (
        900,
        1000,
        3,
        0,
    )
    build = manifest.build
    assert build.stop_on_first_durable and build.completion_milestone == "host-reboot"
    assert [(m.id, m.depends_on, m.operation, m.timeout_seconds, m.points) for m in build.milestones] == MILESTONES
    [engineer] = manifest.classes
    assert (engineer.id, engineer.display_name) == ("failover-engineer", "Failover Engineer")
    assert (engineer.resources.vcpus, engineer.resources.memory_mib, engineer.resources.disk_mib) == (1, 768, 2048)
    assert [t.id for t in manifest.territories] == ["failover-one", "failover-two", "failover-three"]
    for territory in manifest.territories:
        service = territory.service
        assert (service.port, service.path, service.expected_status, service.expected_body) == (
            8080,
            "/health",
            200,
            "ready",
        )
        health = service.health
        assert (health.poll_interval_ms, health.consecutive_failures, health.recovery_window_seconds) == (1000, 3, 60)
    assert [a.id for a in manifest.agents] == [f"{t.id}-agent" for t in manifest.territories]
    nodes = {n.id: (n.kind, n.milestone) for n in manifest.visualization.nodes}
    assert nodes == {
        "client": ("client", None),
        "router": ("proxy", "writes-restored"),
        "old-primary": ("database", "failed-primary-preserved"),
        "replica": ("database", "reads-restored"),
        "fence": ("service", "old-primary-fenced"),
        "units": ("service", "service-restart"),
        "host": ("host", "host-reboot"),
    }


def test_the_folder_validates(capsys):
    assert main(["arena", "validate", str(ARENA)]) == 0
    assert "arena folder valid" in capsys.readouterr().out


def test_the_key_is_stable_and_follows_provisioning_verifiers_and_contract(tmp_path):
    copy = tmp_path / "primary-failover"
    shutil.copytree(ARENA, copy)
    manifest = copy / "arena.toml"
    first = provenance(load_manifest(manifest), manifest)
    assert first == provenance(load_manifest(manifest), manifest)
    keys = {first["compatibility_key"]}
    for changed in ("provisioning/failover-proxy.py", "verify/guest-programs.sh", "CONTRACT.md"):
        path = copy / changed
        path.write_text(path.read_text() + "\n# changed\n")
        keys.add(provenance(load_manifest(manifest), manifest)["compatibility_key"])
    assert len(keys) == 4


def test_the_verifiers_know_exactly_the_provisioned_programs_and_the_lock_covers_them():
    """failover.sh's table of the arena's programs and failover-lock.service's list follow arena.toml."""
    provisioning = load_manifest(MANIFEST).provisioning
    provisioned = {f.path: f.source for f in provisioning.files}
    provisioned |= {f"/etc/systemd/system/{u.name}": u.source for u in provisioning.units}
    helpers = (ARENA / "verify" / "failover.sh").read_text()
    table = dict(re.findall(r"^  \[(/\S+)\]=(\S+)$", helpers, re.MULTILINE))
    assert table == {path: source.removeprefix("provisioning/") for path, source in provisioned.items()}
    lock = (ARENA / "provisioning" / "failover-lock.service").read_text()
    [command] = re.findall(r"^ExecStart=/usr/bin/chattr \+i (.*)$", lock, re.MULTILINE)
    assert sorted(command.split()) == sorted(provisioned)


def test_the_builders_are_built_in_and_fail_over_through_the_control_files_only():
    for agent in load_manifest(MANIFEST).agents:
        assert resolve_adapter(agent.adapter).builtin
        for step in PLANS[agent.adapter].steps:
            assert "/usr/local/lib/aoe" not in step.command and "/etc/systemd" not in step.command


def test_the_published_evidence_keys_are_kept():
    """The published match's evidence keys per milestone (world.json) are what our verifiers write."""
    published = load_match(PRIMARY_FAILOVER).world.territories["failover-two"].milestones
    assert {m: sorted(state.evidence) for m, state in published.items()} == EVIDENCE_KEYS


# -- the checks against the arena's programs, as in a guest ---------------------------------------


@pytest.fixture
def guest(tmp_path):
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rn", "true"], check=False).returncode:
        pytest.skip("needs network namespaces (unshare -rn)")
    guest = FailoverGuest(tmp_path)
    try:
        guest.boot()
        yield guest
    finally:
        guest.close()


def test_the_starting_state_is_the_incident(guest):
    state = guest.path(STATE)
    assert (state / "upstream").read_text() == "8081\n" and (state / "replica.role").read_text() == "replica\n"
    assert (state / "primary.failed").read_text() == ""
    public = guest.run("curl -s -o /dev/null -w '%{http_code}' 127.0.0.1:8080/health")
    assert public.stdout == "502"
    assert guest.run("curl -s -X PUT --data-binary x 127.0.0.1:8082/records/a").stdout == "read-only"
    assert guest.run("curl -s 127.0.0.1:8082/records/customer-green-f31").stdout == "green-original"
    (state / "replica.role").write_text("primary\n")
    (state / "primary.failed").unlink()
    guest.reboot()  # the seed writes only what is missing, and marks the failed primary again
    assert (state / "replica.role").read_text() == "primary\n" and (state / "primary.failed").exists()


async def test_the_oracle_passes_every_milestone_with_the_published_evidence(guest):
    guest.play(PLANS["failover-oracle"])
    evidence: dict = {}
    for milestone, *_ in MILESTONES[:-1]:
        outcome = await guest.verify(milestone, evidence)
        assert outcome.passed, (milestone, outcome.detail)
        evidence[milestone] = outcome.evidence
    assert (await guest.verify("host-reboot", evidence, AOE_VERIFY_PHASE="before_reboot")).passed
    guest.reboot()
    proof = guest.work / "proof.json"
    proof.write_text(json.dumps({"reboot_caused_by": "acpi", "reboot_proven_by": ["libvirt-event"]}))
    after = await guest.verify("host-reboot", evidence, AOE_VERIFY_PHASE="after_reboot", AOE_REBOOT_PROOF=str(proof))
    assert after.passed, after.detail
    evidence["host-reboot"] = after.evidence
    assert {m: sorted(set(e) & set(EVIDENCE_KEYS[m])) for m, e in evidence.items()} == EVIDENCE_KEYS
    assert evidence["reads-restored"]["records"] == ["customer-red-4a7", "customer-blue-8d2", "customer-green-f31"]
    record = evidence["writes-restored"]["record"]
    assert re.fullmatch(r"post-failover-[0-9a-f]{16}", record)
    assert re.fullmatch(r"opaque-[0-9a-f]{24}", evidence["writes-restored"]["value"])
    assert evidence["host-reboot"]["reboot_caused_by"] == "acpi"


async def test_switching_before_promoting_stops_at_reads_restored(guest):
    assert (await guest.verify("reads-restored")).detail == (
        "existing reads are not restored through a promoted primary: "
        "GET /health through the proxy returned 502, expected 200"
    )
    guest.play(PLANS["failover-switch-first"])
    assert (await guest.verify("failed-primary-preserved")).passed
    outcome = await guest.verify("reads-restored")
    assert outcome.verdict == "failed" and outcome.detail == (
        "existing reads are not restored through a promoted primary: "
        "GET /role through the proxy returned body 'replica', expected 'primary'"
    )


async def test_never_fencing_stops_at_old_primary_fenced(guest):
    guest.play(PLANS["failover-unfenced"])
    assert (await guest.verify("reads-restored")).passed
    outcome = await guest.verify("old-primary-fenced")
    assert outcome.verdict == "failed" and outcome.detail == (
        "the old primary is not durably fenced behind the promoted replica: "
        f"{STATE}/primary.fenced is missing in the guest (the old primary was never fenced)"
    )


async def test_a_listener_on_the_failed_primarys_port_is_named(guest):
    squatter = subprocess.Popen(guest.in_namespace("python3", "-m", "http.server", "8081", "--bind", "127.0.0.1"))
    try:
        guest.wait_listening(8081)
        outcome = await guest.verify("failed-primary-preserved")
    finally:
        squatter.kill()
        squatter.wait()
    assert outcome.detail == (
        "the failed primary is not preserved: something listens on guest port 8081 (the failed primary must stay down)"
    )


async def test_the_arenas_own_programs_are_checked_from_outside(guest):
    """An edited proxy, a drop-in, and a replica of the player's own that the restart collides with."""
    guest.play(PLANS["failover-oracle"])
    written = await guest.verify("writes-restored")
    assert written.passed, written.detail
    evidence = {"writes-restored": written.evidence}
    restarted = "after systemctl restart failover-replica.service failover-proxy.service, "
    proxy = guest.path("/usr/local/lib/aoe/failover-proxy.py")
    original = proxy.read_bytes()
    proxy.write_bytes(original + b"# a harmless edit is an edit\n")
    edited = await guest.verify("service-restart", evidence)
    assert edited.verdict == "failed" and edited.detail == (
        f"{restarted}the arena program {proxy} is not the one provisioned (it must not be changed)"
    )
    proxy.write_bytes(original)
    (guest.fake / "failover-proxy.service.dropins").write_text("/etc/systemd/system/failover-proxy.service.d/x.conf")
    dropped_in = await guest.verify("service-restart", evidence)
    assert dropped_in.detail.startswith(f"{restarted}failover-proxy.service is changed by drop-ins")
    (guest.fake / "failover-proxy.service.dropins").unlink()
    assert (await guest.verify("service-restart", evidence)).passed
    assert guest.run("systemctl stop failover-replica.service").returncode == 0
    own = subprocess.Popen(
        guest.in_namespace("python3", str(guest.path("/usr/local/lib/aoe/failover-replica.py"))),
        env={"FAILOVER_DIR": str(guest.path(STATE)), "PATH": "/usr/bin:/bin"},
    )
    try:
        guest.wait_listening(8082)
        collided = await guest.verify("service-restart", evidence)
    finally:
        own.kill()
        own.wait()
    assert collided.verdict == "failed" and collided.detail.startswith(
        f"{restarted}port 8082 is not served by failover-replica.service's own process"
    )
