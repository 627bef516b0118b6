"""A newcomer's first arena on real guests: `aoe arena init demo-arena`, `aoe arena validate`, `aoe run --headless`.

In a fresh clone of this repository (the newcomer's working folder; the code under test is this
checkout's, `python -P` keeps the clone's own copy from being imported): the scaffold is made,
validated, and raced with the defaults (output under ./matches, ports found automatically) on two
TCG guests that the referee provisions with the records service. The oracle's plan (a drop-in keeping records on disk)
must win durable with every point; the forgetful builder (the service as it came, records on tmpfs)
must fail host-reboot with its record gone. One race for the module (~3 min under TCG).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from aoe_tui.engine.narration import failure_gist
from aoe_tui.engine.referee import CANCELLED_DETAIL
from tests.engine.vm_cli import assert_replayable, domains_of, only_match_in
from tests.fixture_paths import PROJECT

pytestmark = pytest.mark.vm
ARENA = "arenas/demo-arena"
MATCH_TIMEOUT_S = 1200


AOE = [sys.executable, "-P", "-m", "aoe_tui.cli.main"]
ENV = {**os.environ, "PYTHONPATH": str(PROJECT)}


def _aoe(clone, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*AOE, *args], cwd=clone, env=ENV, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def race(tmp_path_factory):
    subprocess.run([str(PROJECT / "scripts" / "services")], check=True)
    clone = tmp_path_factory.mktemp("newcomer") / "aoe"
    subprocess.run(["git", "clone", "--quiet", str(PROJECT), str(clone)], check=True)
    init, validate = _aoe(clone, "arena", "init", "demo-arena"), _aoe(clone, "arena", "validate", ARENA)
    started = time.monotonic()
    process = subprocess.Popen(
        [*AOE, "run", f"{ARENA}/arena.toml", "--headless"],
        cwd=clone,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output, _ = process.communicate(timeout=MATCH_TIMEOUT_S)
    wall = time.monotonic() - started
    print(f"\ndemo-arena race on real guests: {wall:.0f} s wall")
    return clone, init, validate, process.returncode, output


def test_init_and_validate_pass_in_the_clone(race):
    clone, init, validate, _, _ = race
    assert init.returncode == 0 and init.stdout.startswith(f"{ARENA}: new arena 'demo-arena'"), init.stderr
    assert validate.returncode == 0 and "arena folder valid" in validate.stdout, validate.stdout
    assert (clone / ARENA / "adapters" / "records-oracle.toml").is_file()


def test_the_oracle_wins_durable_with_every_point(race):
    clone, _, _, code, output = race
    assert code == 0, output[-3000:]
    world = assert_replayable(only_match_in(clone))
    assert world["winner"] == "builder-one" and world["finish_reason"] == "first durable deployment"
    oracle = world["territories"]["builder-one"]
    assert oracle["competitor_state"] == "durable" and oracle["milestone_points"] == 100
    assert oracle["milestones"]["host-reboot"]["evidence"]["reboot"] is True
    assert world["agents"]["records-oracle"]["successful"] is not False


def test_the_forgetful_builder_fails_host_reboot_with_its_record_gone(race):
    """Its reboot check either ends in the record-gone verdict (the usual order: it reaches host-reboot
    seconds before the oracle) or, when its guest ignored the ACPI button and the reset fallback made
    it the slower one, is cancelled by the oracle's win: never a pass, never another failure. A failure repeated with a
    fresh record id is narrated once, so the output is compared by gist."""
    clone, _, _, _, output = race
    match_dir = only_match_in(clone)
    world = assert_replayable(match_dir)
    forgetful = world["territories"]["builder-two"]["milestones"]
    assert forgetful["records-kept"]["passed"] and not forgetful["host-reboot"]["passed"]
    verdicts = [
        event["detail"]
        for event in map(json.loads, (match_dir / "events.jsonl").read_text().splitlines())
        if event["kind"] == "milestone_failed"
        and event.get("territory") == "builder-two"
        and event.get("milestone") == "host-reboot"
    ]
    assert verdicts, output[-3000:]
    for detail in verdicts:
        if detail == CANCELLED_DETAIL:
            continue
        assert "after the host reboot" in detail and detail.endswith("(the record written earlier is gone)"), detail
        assert failure_gist(detail) in failure_gist(output), output[-3000:]


def test_the_guests_were_provisioned_and_nothing_is_left(race):
    clone, _, _, _, _ = race
    match_dir = only_match_in(clone)
    trace = (match_dir / "agents" / "records-oracle" / "tool_trace.jsonl").read_text().splitlines()
    looked = json.loads(trace[0])["output"]
    assert "Environment=RECORDS_DIR=/run/records" in looked and "RECORDS_DIR" in looked.split("records-app", 1)[1]
    assert "records-oracle" in json.loads((match_dir / "match.json").read_text())["adapter_sha256"]
    assert domains_of(match_dir) == []
