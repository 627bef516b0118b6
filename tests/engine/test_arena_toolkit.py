"""The arena toolkit without VMs: provisioning script, fog-of-war audit, brief instructions, provenance.

The provisioning script and the leak audit are real bash run on this host
(paths under a temporary root, `systemctl`/`ss` replaced by small shims), so
what they write, find and refuse is observed, not assumed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.manifest_rules import validate_manifest
from aoe_tui.testing.clock import ManualSource
from aoe_tui.engine.fog import audit_one
from aoe_tui.engine.instructions import render_instruction
from aoe_tui.engine.provenance import provenance
from aoe_tui.engine.provisioning import ArenaSetupFailed, load_bundle, render_script
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.testing.scripted_provider import ScriptedLauncher, ScriptedProvider
from aoe_tui.engine.territory import CommandResult, TerritoryUnavailable
from aoe_tui.store.manifest_file import load_manifest, read_manifest_data
from aoe_tui.store.saved_match import load_match
from tests.fixture_paths import PROJECT
from tests.engine.helpers import ARENA, arena_data, write_arena

QUEUE = PROJECT / "arenas" / "durable-job-queue" / "arena.toml"
LEAK = {"scan_paths": ["/etc"], "forbidden_strings": ["referee-secret"]}


def _problems(**tables) -> list[str]:
    data = arena_data()
    data.update(tables)
    return [str(p) for p in validate_manifest(data)[1]]


def test_fog_and_provisioning_tables_are_validated_with_their_paths():
    assert _problems(
        fog_of_war={"player_brief": "B.md", "guest_leak_audit": {"scan_paths": ["/"], "forbidden_strings": [" "]}}
    ) == [
        "fog_of_war.guest_leak_audit.scan_paths: scan path '/' must be absolute and narrower than /",
        "fog_of_war.guest_leak_audit.forbidden_strings: forbidden_strings must not hold a blank string",
    ]
    problems = _problems(
        provisioning={
            "files": [{"path": "etc/x", "source": "../x", "mode": "999"}],
            "units": [{"name": "x y", "source": "u", "state": "running"}],
            "free_ports": [0],
        }
    )
    assert any(p.startswith("provisioning.files[0].path: guest path 'etc/x'") for p in problems)
    assert any(p.startswith("provisioning.files[0].source: source '../x'") for p in problems)
    assert any(p.startswith("provisioning.files[0].mode: mode '999'") for p in problems)
    assert any(p.startswith("provisioning.units[0].name: unit name 'x y'") for p in problems)
    assert "provisioning.free_ports: port 0 is not a TCP port" in problems
    assert _problems(fog_of_war={"player_brief": "B.md"}) == []


# -- provisioning ---------------------------------------------------------------------------------


def _arena_with(tmp_path: Path, provisioning: dict, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    data = arena_data()
    data["provisioning"] = provisioning
    return write_arena(tmp_path, data)


def _run_provisioning(
    tmp_path: Path, manifest: Path, active: str = "active", listening: str = ""
) -> subprocess.CompletedProcess:
    """The real script under a temporary root; systemctl and ss answer as told and log their calls."""
    shims = tmp_path / "shims"
    shims.mkdir(exist_ok=True)
    (shims / "systemctl").write_text(
        f'#!/bin/sh\necho "$*" >> {tmp_path}/calls\ncase "$1" in\n'
        f'  is-active) [ "{active}" = active ]; exit $? ;;\n  is-failed) exit 1 ;;\nesac\n'
    )
    (shims / "ss").write_text(f"#!/bin/sh\nprintf '%s' '{listening}'\n")
    for shim in shims.iterdir():
        shim.chmod(0o755)
    bundle = load_bundle(load_manifest(manifest), manifest)
    return subprocess.run(
        ["bash"],
        input=render_script(bundle, root=str(tmp_path / "root")),
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{shims}:{os.environ['PATH']}"},
        timeout=30,
    )


PROVISIONED = {
    "files": [{"path": "/usr/local/lib/aoe/seed", "source": "p/seed", "mode": "0750"}],
    "databases": [{"path": "/var/lib/app/app.sqlite3", "sql": "p/seed.sql"}],
    "units": [
        {"name": "app.service", "source": "p/app.service", "state": "running"},
        {"name": "slot.service", "source": "p/slot.service", "state": "dormant"},
    ],
    "free_ports": [8080],
}
SOURCES = {
    "p/seed": "#!/bin/sh\necho 'it''s $HOME'\n",
    "p/seed.sql": "CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('x');",
    "p/app.service": "[Service]\nExecStart=/bin/true\n",
    "p/slot.service": "[Service]\n",
}


def test_provisioning_writes_files_with_modes_seeds_once_and_starts_only_what_runs(tmp_path):
    manifest = _arena_with(tmp_path, PROVISIONED, SOURCES)
    result = _run_provisioning(tmp_path, manifest)
    assert result.returncode == 0 and result.stdout.strip() == "provisioned", result.stderr
    root = tmp_path / "root"
    seed = root / "usr/local/lib/aoe/seed"
    assert seed.read_text() == SOURCES["p/seed"] and oct(seed.stat().st_mode & 0o777) == "0o750"
    assert (root / "etc/systemd/system/app.service").read_text() == SOURCES["p/app.service"]
    db = root / "var/lib/app/app.sqlite3"
    with sqlite3.connect(db) as connection:
        connection.execute("INSERT INTO t VALUES ('player')")
    assert _run_provisioning(tmp_path, manifest).returncode == 0  # an existing database is never re-seeded
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT count(*) FROM t").fetchone() == (2,)
    calls = (tmp_path / "calls").read_text().splitlines()
    assert "enable --quiet app.service slot.service" in calls and "start app.service" in calls
    assert not any(c.startswith("start") and "slot.service" in c for c in calls)


def test_provisioning_that_did_not_take_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr("aoe_tui.engine.provisioning.SETTLE_SECONDS", 1)
    manifest = _arena_with(tmp_path, PROVISIONED, SOURCES)
    inactive = _run_provisioning(tmp_path, manifest, active="failed")
    assert inactive.returncode == 1 and "unit app.service is not active after provisioning" in inactive.stderr
    busy = _run_provisioning(tmp_path, manifest, listening="LISTEN 0 5 0.0.0.0:8080")
    assert busy.returncode == 1
    assert busy.stderr.strip() == "guest port 8080 must be free before the match, but something listens on it"


def test_a_missing_provisioning_source_is_one_line_naming_it(tmp_path):
    manifest = _arena_with(tmp_path, PROVISIONED, {k: v for k, v in SOURCES.items() if k != "p/seed.sql"})
    with pytest.raises(AoeError, match=r"provisioning source p/seed.sql cannot be read"):
        provenance(load_manifest(manifest), manifest)


# -- provenance and instructions ------------------------------------------------------------------


def _copy_queue_arena(tmp_path: Path) -> Path:
    shutil.copytree(QUEUE.parent, tmp_path / "queue")
    return tmp_path / "queue" / "arena.toml"


def test_the_queue_key_is_stable_and_follows_provisioning_verifiers_and_brief(tmp_path):
    copy = _copy_queue_arena(tmp_path)
    first = provenance(load_manifest(copy), copy)
    assert first == provenance(load_manifest(copy), copy)
    assert first["player_brief_sha256"] == hashlib.sha256((QUEUE.parent / "BRIEF.md").read_bytes()).hexdigest()
    keys = {first["compatibility_key"]}
    for changed in ("provisioning/accepted-job-spool", "verify/process-new.sh", "BRIEF.md"):
        path = copy.parent / changed
        path.write_text(path.read_text() + "\n# changed\n")
        keys.add(provenance(load_manifest(copy), copy)["compatibility_key"])
    assert len(keys) == 4
    assert "provisioning_sha256" not in provenance(load_manifest(ARENA), ARENA)


def test_a_fog_agent_reads_the_brief_alone_and_everyone_the_deadline(tmp_path):
    manifest = load_manifest(QUEUE)
    text = render_instruction(manifest, QUEUE, manifest.agents[0], "127.0.0.1", 32800)
    assert text.startswith((QUEUE.parent / "BRIEF.md").read_text().rstrip("\n"))
    assert "-p 32800 root@127.0.0.1" in text and "the hidden topology" in text and "900 seconds" in text
    assert "OPERATORS" not in text and "recover-accepted" not in text
    first_build = load_manifest(ARENA)
    plain = render_instruction(first_build, ARENA, first_build.agents[0], "127.0.0.1", 2222)
    assert "builder-app.service" in plain and plain.rstrip().endswith("600 seconds after the match starts.")


# -- the fog-of-war audit -------------------------------------------------------------------------


class LocalShellHost:
    """A territory whose "guest" is this host's bash, for the audit command (paths under tmp)."""

    host, ssh_port, service_port = "127.0.0.1", 0, 0

    def __init__(self, territory_id: str = "queue-two", drops: int = 0) -> None:
        self.territory_id = territory_id
        self.drops = drops
        self.calls = 0

    async def run(self, command: str, timeout: float) -> CommandResult:
        self.calls += 1
        if self.calls <= self.drops:
            raise TerritoryUnavailable("Connection closed by 127.0.0.1 port 2222")
        process = await asyncio.create_subprocess_exec(
            "bash", "-c", command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
        return CommandResult(process.returncode or 0, stdout.decode(), stderr.decode())


def _leak(root: Path, strings: list[str]):
    return load_manifest(QUEUE).fog_of_war.guest_leak_audit.model_copy(
        update={"scan_paths": [str(root / "etc"), str(root / "opt")], "forbidden_strings": strings}
    )


async def test_the_audit_names_territory_string_and_path_and_skips_binaries_and_big_files(tmp_path):
    (tmp_path / "etc" / "deep").mkdir(parents=True)
    (tmp_path / "opt").mkdir()
    (tmp_path / "etc" / "binary").write_bytes(b"\0\1referee-secret\0")
    (tmp_path / "etc" / "big").write_text("referee-secret\n" + "x" * (4 * 1024 * 1024))
    (tmp_path / "etc" / "deep" / "other").write_text("Referee-Secret only differs in case\n")
    leak = _leak(tmp_path, ["not-there", "referee-secret"])
    await audit_one(LocalShellHost(), leak, retry_seconds=0)
    (tmp_path / "opt" / "notes.txt").write_text("a referee-secret here\n")
    with pytest.raises(ArenaSetupFailed) as raised:
        await audit_one(LocalShellHost(), leak, retry_seconds=0)
    assert raised.value.detail == (
        f'fog-of-war guest leak in queue-two: "referee-secret" found at {tmp_path}/opt/notes.txt'
    )


async def test_the_audit_retries_ssh_drops_then_calls_it_a_preflight_failure(tmp_path):
    (tmp_path / "etc").mkdir()
    leak = _leak(tmp_path, ["referee-secret"])
    flaky = LocalShellHost(drops=4)
    await audit_one(flaky, leak, retry_seconds=0)
    assert flaky.calls == 5
    with pytest.raises(ArenaSetupFailed) as raised:
        await audit_one(LocalShellHost(drops=5), leak, retry_seconds=0)
    assert raised.value.component == "preflight" and "could not run after 5 tries" in raised.value.detail


class LocalShellProvider(ScriptedProvider):
    """Scripted territories whose commands run in this host's bash (so the audit really searches)."""

    async def boot(self, manifest, match_dir, recorder, clock):
        hosts, order = await super().boot(manifest, match_dir, recorder, clock)
        for host in hosts.values():
            host.run = LocalShellHost(host.territory_id).run
        return hosts, order


async def test_a_leak_aborts_the_match_before_any_agent_as_an_arena_failure(tmp_path):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "leak.txt").write_text("referee-secret\n")
    data = arena_data()
    (tmp_path / "B.md").write_text("Build it.\n")
    data["fog_of_war"] = {
        "player_brief": "B.md",
        "guest_leak_audit": {"scan_paths": [str(tmp_path / "etc")], "forbidden_strings": ["referee-secret"]},
    }
    manifest = write_arena(tmp_path, data)
    output = tmp_path / "match"
    runner = MatchRunner(manifest, output, LocalShellProvider(), ScriptedLauncher(), source=ManualSource())
    with pytest.raises(AoeError, match="fog-of-war guest leak in builder-one"):
        await runner.run()
    match = load_match(output)
    events = [e.to_json() for e in match.events]
    assert [e["kind"] for e in events] == ["infrastructure_failure", "match_state_changed"]
    assert events[0] == {
        **events[0],
        "component": "fog-of-war guest leak audit",
        "source": "arena",
        "territory": "builder-one",
        "detail": f'fog-of-war guest leak in builder-one: "referee-secret" found at {tmp_path}/etc/leak.txt',
    }
    assert events[1]["to"] == "aborted" and events[1]["reason"].startswith("fog-of-war guest leak in builder-one")
    assert match.world.match_state == "aborted"
    assert json.loads((output / "world.json").read_text())["match_state"] == "aborted"


def test_the_bundled_queue_arena_passes_its_own_audit_strings_check():
    """Nothing the referee provisions into a guest holds a forbidden string (the audit would abort)."""
    manifest = load_manifest(QUEUE)
    bundle = load_bundle(manifest, QUEUE)
    strings = manifest.fog_of_war.guest_leak_audit.forbidden_strings
    assert not [s for s in strings for data in bundle.contents.values() if s.encode() in data]
    assert read_manifest_data(QUEUE)["arena"]["id"] == "durable-job-queue"
