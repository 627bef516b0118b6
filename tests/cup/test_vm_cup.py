"""A real cup on VMs: six scripted entrants, round 1 of two heats, a final of three, killed and resumed.

Two oracles, the flawed builders (amnesiac, tmpfs-writer) and two cheats (cheat-fake-reboot,
cheat-swallow-restart) on First Build: the seed is the first that draws the oracles into different heats,
so each heat of round 1 ends at its oracle's durable deployment; `kill -9` lands while round 1 heat 2 boots,
the dead run's guests are destroyed (only those), and the same command again keeps heat 1, marks the
killed attempt interrupted and plays heat 2 as attempt 2, then the final (both heat winners and the best
runner-up): an oracle wins. Every match is named and slugged in the published format, and `aoe info` of a
heat shows its cup context. Three races and a boot of TCG guests: about a quarter of an hour.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time

import pytest

from aoe_tui.domain.cup_rules import draw
from aoe_tui.store.saved_match import load_match
from tests.engine.helpers import arena_data, write_arena
from tests.engine.vm_cli import AOE, assert_replayable, domains_of, wait_for_line
from tests.fixture_paths import PROJECT

pytestmark = pytest.mark.vm
HEAT_TIMEOUT_S = 1200
DURATION_S = 900  # the oracle is durable in about three minutes alone, much later on a loaded machine
ENTRANTS = {
    "oracle-a": ("oracle", "scripted/oracle"),
    "oracle-b": ("oracle", "scripted/oracle"),
    "amnesiac": ("amnesiac", "scripted/in-memory"),
    "tmpfs-writer": ("tmpfs-writer", "scripted/tmpfs"),
    "faker": ("cheat-fake-reboot", "scripted/cheat"),
    "swallower": ("cheat-swallow-restart", "scripted/cheat"),
}
NAME = re.compile(r"^vm-cup · 2026-W01-\d{8}-\d{6} · round (\d) heat (\d) · attempt (\d)$")


def splitting_seed() -> int:
    """The first seed whose round-1 draw puts the two oracles in different heats."""
    for seed in range(1, 1000):
        heats = draw(sorted(ENTRANTS), 1, seed, 3, 2)
        if all(sum(e.startswith("oracle") for e in heat) == 1 for heat in heats):
            return seed
    raise AssertionError("no seed splits the oracles")


def write_cup(directory, seed: int):
    data = arena_data(duration_seconds=DURATION_S, post_match_drain_seconds=5)
    (directory / "arena").mkdir(parents=True)
    write_arena(directory / "arena", data)
    lines = ["[cup]", 'id = "vm-cup"', 'arena = "arena/arena.json"', "heat_size = 3", "attempts = 2", f"seed = {seed}"]
    for entrant, (adapter, model) in ENTRANTS.items():
        lines += [
            "[[entrants]]",
            f'id = "{entrant}"',
            f'adapter = "{adapter}"',
            f'model = "{model}"',
            'reasoning_effort = "none"',
            "budget = { resource_units = 900 }",
        ]
    path = directory / "CUP.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def start_cup(cup, output, cwd) -> subprocess.Popen:
    return subprocess.Popen(
        [*AOE, "cup", str(cup), "--headless", "--season", "2026-W01", "--output", str(output)],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
    )


@pytest.mark.timeout(4 * HEAT_TIMEOUT_S)
def test_a_cup_of_six_killed_in_round_1_heat_2_resumes_and_an_oracle_wins(tmp_path):
    subprocess.run([str(PROJECT / "scripts" / "services")], check=True)
    cup = write_cup(tmp_path, splitting_seed())
    output = tmp_path / "cup"
    killed = start_cup(cup, output, tmp_path)
    wait_for_line(killed, "aoe cup: round 1 heat 2 attempt 1 started", timeout=HEAT_TIMEOUT_S)
    wait_for_line(killed, "[r1h2] [setup] booting", timeout=60)
    time.sleep(3)
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait(timeout=30)
    checkpoint = json.loads((output / "cup.json").read_text())
    heat_one, heat_two = checkpoint["rounds"][0]["heats"]
    assert heat_one["winner_decided"] and heat_one["winner"].startswith("oracle")
    assert [a["outcome"] for a in heat_two["attempts"]] == ["running"]
    for name in domains_of(output / "round-1" / "heat-2" / "attempt-1"):  # the dead run's guests, only theirs
        for step in ("destroy", "undefine"):
            subprocess.run(["virsh", "-c", "qemu:///system", step, name], check=False, capture_output=True, timeout=60)
    assert domains_of(output / "round-1" / "heat-2" / "attempt-1") == []
    heat_one_log = (output / "round-1" / "heat-1" / "attempt-1" / "events.jsonl").read_bytes()

    resumed = start_cup(cup, output, tmp_path)
    out, _ = resumed.communicate(timeout=3 * HEAT_TIMEOUT_S)
    assert resumed.returncode == 0, out[-3000:]
    assert "1 heats already decided (kept)" in out and "attempt 1 was interrupted" in out
    final = json.loads((output / "cup.json").read_text())
    assert final["state"] == "complete" and final["season"] == "2026-W01"
    first, last = final["rounds"]
    assert [len(h["entrants"]) for h in first["heats"]] == [3, 3] and not first["final"]
    assert [a["outcome"] for a in first["heats"][1]["attempts"]] == ["interrupted", "decided"]
    assert first["heats"][1]["decided_by"] == 2
    assert (output / "round-1" / "heat-1" / "attempt-1" / "events.jsonl").read_bytes() == heat_one_log
    assert last["final"] and len(last["heats"]) == 1 and len(last["heats"][0]["entrants"]) == 3
    assert {row["entrant"] for row in first["advanced"]} == set(last["heats"][0]["entrants"])
    assert {"oracle-a", "oracle-b"} <= set(last["heats"][0]["entrants"])
    assert final["winner"].startswith("oracle"), out[-3000:]
    played = [
        output / "round-1" / "heat-1" / "attempt-1",
        output / "round-1" / "heat-2" / "attempt-2",
        output / "round-2" / "heat-1" / "attempt-1",
    ]
    for folder in played:
        assert assert_replayable(folder)["match_state"] == "finished"
        assert domains_of(folder) == []
        match = load_match(folder)
        found = NAME.match(match.name)
        assert found is not None, match.name
        r, h, a = found.groups()
        assert folder.parts[-3:] == (f"round-{r}", f"heat-{h}", f"attempt-{a}")
        assert match.match_info["slug"] == f"season-vm-cup-{final['run']}-r{r}-h{h}-a{a}"
    info = subprocess.run(
        [*AOE, "info", str(played[1]), "--json"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
    )
    assert json.loads(info.stdout)["cup"] == {
        "cup": "vm-cup",
        "season": "2026-W01",
        "run": final["run"],
        "round": 1,
        "heat": 2,
        "attempt": 2,
    }
