"""A confined adapter process, for real (bubblewrap, its own uid, iptables): what it can and cannot reach.

No VM: two loopback listeners stand in for its own guest's port and a neighbour's.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path

import pytest

from aoe_tui.agents.environment import basic_env
from aoe_tui.agents.process import AgentProcess
from aoe_tui.agents.protocol import AgentFiles
from aoe_tui.agents.sandbox import SANDBOX_FILES_DIR, Sandbox, next_adapter_uid, python_install

PROBE = r"""
out="$1"; shift
try() { if eval "$2" >/dev/null 2>&1; then echo "$1 yes"; else echo "$1 no"; fi >>"$out"; }
echo "uid $(id -u) $(whoami)" >>"$out"
try write-own "echo x > '$AGENT_DIR/own.txt'"
try write-other "echo x > '$OTHER_DIR/planted.txt'"
try read-other "cat '$OTHER_DIR/secret.txt'"
try write-log "echo x >> '$MATCH_DIR/events.jsonl'"
try read-log "cat '$MATCH_DIR/events.jsonl'"
try write-project "touch '$PROJECT/planted.txt'"
try read-home "ls -A '$HOME_DIR' | grep -qv '^.pyenv$'"
try key-copy "grep -q KEYDATA $SANDBOX_FILES/id_ed25519"
try own-port "exec 3<>/dev/tcp/127.0.0.1/$OWN_PORT"
try neighbour-port "exec 3<>/dev/tcp/127.0.0.1/$NEIGHBOUR_PORT"
try signal-referee "kill -0 $REFEREE_PID"
try referee-environ "grep -q AOE_PLANTED /proc/$REFEREE_PID/environ"
try libvirt-socket "test -S /run/libvirt/libvirt-sock"
try python "'$PYTHON' -c 'import aoe_tui'"
try huge-allocation "'$PYTHON' -c 'bytearray(8 * 1024 ** 3)'"
echo "env $(env | cut -d= -f1 | sort | tr '\n' ' ')" >>"$out"
"""


def _listener() -> socket.socket:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    return server


@pytest.fixture(scope="module")
def probed(tmp_path_factory) -> dict[str, str]:
    """Run the probe once, confined as an adapter of match `m` with agent folder `agents/a`."""
    root = tmp_path_factory.mktemp("confined")
    match_dir = root / "m"
    (match_dir / "agents" / "b").mkdir(parents=True)
    (match_dir / "agents" / "b" / "secret.txt").write_text("neighbour's transcript\n")
    (match_dir / "events.jsonl").write_text('{"seq": 1}\n')
    home = Path.home()  # hidden like the launcher hides it (the interpreter under it is re-exposed)
    own, neighbour = _listener(), _listener()
    files = AgentFiles(match_dir / "agents" / "a")
    report = files.directory / "probe.txt"
    project = Path(__file__).resolve().parents[2]
    env = {
        **basic_env(),
        "HOME": "/tmp",
        "AGENT_DIR": str(files.directory),
        "OTHER_DIR": str(match_dir / "agents" / "b"),
        "MATCH_DIR": str(match_dir),
        "PROJECT": str(project),
        "HOME_DIR": str(home),
        "SANDBOX_FILES": SANDBOX_FILES_DIR,
        "OWN_PORT": str(own.getsockname()[1]),
        "NEIGHBOUR_PORT": str(neighbour.getsockname()[1]),
        "REFEREE_PID": str(os.getpid()),
        "PYTHON": sys.executable,
    }
    os.environ["AOE_PLANTED"] = "operator secret"
    sandbox = Sandbox(
        next_adapter_uid(),
        files.directory,
        hidden=(home, match_dir),
        readable=python_install(),
        files={f"{SANDBOX_FILES_DIR}/id_ed25519": b"KEYDATA\n"},
        loopback_ports=(own.getsockname()[1],),
        memory_bytes=2 * 1024**3,
    )

    async def run() -> AgentProcess:
        process = AgentProcess("a", "one", files)
        await process.start(["bash", "-c", PROBE, "probe", str(report)], env, sandbox)
        assert await process.wait(60)
        return process

    try:
        process = asyncio.run(run())
    finally:
        del os.environ["AOE_PLANTED"]
        own.close()
        neighbour.close()
    lines = report.read_text().splitlines()
    answers = dict(line.split(" ", 1) for line in lines)
    answers["exit"] = str(process.exit_code)
    answers["stderr"] = files.stderr.read_text()
    answers["owner"] = str(report.stat().st_uid)
    answers["uid_expected"] = str(sandbox.uid)
    answers["chain_left"] = os.popen(f"iptables -w -S 2>/dev/null | grep -c AOE-ADAPTER-{sandbox.uid}").read().strip()
    return answers


def test_it_runs_as_its_own_uid_and_writes_only_its_folder(probed) -> None:
    assert probed["exit"] == "0", probed["stderr"]
    assert probed["uid"] == f"{probed['uid_expected']} aoe-adapter"
    assert probed["write-own"] == "yes"
    for attempt in ("write-other", "read-other", "write-log", "read-log", "write-project", "read-home"):
        assert probed[attempt] == "no", f"{attempt}: {probed}"


def test_it_gets_its_key_copy_and_python_but_not_the_referee(probed) -> None:
    assert probed["key-copy"] == "yes" and probed["python"] == "yes", probed["stderr"]
    for attempt in ("signal-referee", "referee-environ", "libvirt-socket", "huge-allocation"):
        assert probed[attempt] == "no", f"{attempt}: {probed}"
    assert "AOE_PLANTED" not in probed["env"] and "SSH_AUTH_SOCK" not in probed["env"]


def test_on_loopback_it_reaches_only_its_own_port(probed) -> None:
    assert probed["own-port"] == "yes" and probed["neighbour-port"] == "no", probed


def test_confinement_is_undone_when_it_exits(probed) -> None:
    assert probed["owner"] == str(os.getuid()), "the agent folder goes back to the referee"
    assert probed["chain_left"] == "0", "its firewall chain is removed"


def test_chains_left_by_a_dead_referee_are_removed_on_the_next_launch() -> None:
    from aoe_tui.agents.firewall import AdapterFirewall
    from aoe_tui.agents.sandbox import referee_alive

    dead_pid = 4_000_000  # above this host's pid_max use: no such process
    uid = (1 << 30) + (dead_pid << 8)
    assert not referee_alive(uid) and referee_alive(next_adapter_uid())
    AdapterFirewall(uid, (32399,)).install()
    assert f"AOE-ADAPTER-{uid}" in os.popen("iptables -w -S").read()
    AdapterFirewall.remove_stale(referee_alive)
    assert f"AOE-ADAPTER-{uid}" not in os.popen("iptables -w -S").read()


async def test_confinement_is_undone_even_when_the_referee_only_polls(tmp_path: Path) -> None:
    files = AgentFiles(tmp_path / "m" / "agents" / "a")
    sandbox = Sandbox(next_adapter_uid(), files.directory, hidden=(Path.home(), tmp_path / "m"))
    process = AgentProcess("a", "one", files)
    await process.start(["bash", "-c", f"echo x > {files.directory}/own.txt"], basic_env(), sandbox)
    for _ in range(100):
        await asyncio.sleep(0.05)
        if process.exited and (files.directory / "own.txt").stat().st_uid == os.getuid():
            break
    assert process.exited and process.exit_code == 0
    assert {p.stat().st_uid for p in (files.directory, files.directory / "own.txt")} == {os.getuid()}
    assert f"AOE-ADAPTER-{sandbox.uid}" not in os.popen("iptables -w -S").read()
