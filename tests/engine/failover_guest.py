"""A Primary Failover "guest" on this host, for fast tests: the arena's own programs in a network namespace.

The arena's provisioned files are copied below a temporary root, the seed
fills the state directory, and the replica and the proxy run on their guest
ports (8082 and 8080, nothing on 8081) inside a private network namespace
(`unshare -rn`), so the verifiers and the scripted builders' commands, run in
that namespace too, talk to them exactly as in a guest. Guest commands go
through an `AOE_GUEST_EXEC` shim that maps the guest's paths below the root
and stands in for `systemctl` (main PIDs, unit files, drop-ins, restarts);
`ss`, `sha256sum`, `curl` and everything else are the real tools.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from aoe_tui.agents.scripted.plans import Plan
from aoe_tui.engine.verifier import VerifierOutcome, run_verifier
from aoe_tui.store.manifest_file import load_manifest
from tests.fixture_paths import PROJECT

ARENA = PROJECT / "arenas" / "primary-failover"
GUEST_DIRS = ("/var/lib/failover", "/usr/local/lib/aoe", "/etc/systemd/system")
SERVING = {"failover-replica.service": 8082, "failover-proxy.service": 8080}
VERIFIER_TIMEOUT_SECONDS = 60.0

_SYSTEMCTL = """#!/bin/bash
# systemctl for the failover test guest: starts and stops the arena's two servers and answers `show`.
FAKE={fake}
ROOT={root}
start() {{
  FAILOVER_DIR="$ROOT/var/lib/failover" setsid python3 "$ROOT/usr/local/lib/aoe/${{1%.service}}.py" \\
    </dev/null >/dev/null 2>&1 &
  echo $! >"$FAKE/$1.pid"
}}
stop() {{
  local pid
  pid="$(cat "$FAKE/$1.pid" 2>/dev/null)" || return 0
  kill "$pid" 2>/dev/null
  # Gone, or a zombie (its sockets closed) waiting for whoever inherited it to reap it.
  while kill -0 "$pid" 2>/dev/null && [ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" != Z ]; do sleep 0.05; done
  rm -f "$FAKE/$1.pid"
}}
case "$1" in
  start) shift; for unit; do start "$unit"; done ;;
  stop) shift; for unit; do stop "$unit"; done ;;
  restart) shift; for unit; do stop "$unit"; start "$unit"; done ;;
  show)
    case "$3" in
      MainPID) cat "$FAKE/$5.pid" 2>/dev/null || echo 0 ;;
      FragmentPath) echo "$ROOT/etc/systemd/system/$5" ;;
      DropInPaths) cat "$FAKE/$5.dropins" 2>/dev/null ;;
    esac ;;
esac
exit 0
"""

_EXEC = """#!/bin/bash
# AOE_GUEST_EXEC for the failover test guest: the command with the guest's paths below the root.
command="$*"
for path in {paths}; do command="${{command//$path/{root}$path}}"; done
PATH={shims}:$PATH exec bash -c "$command"
"""


class FailoverGuest:
    """The guest's files under `root`, its servers in the namespace of the process `holder`."""

    def __init__(self, work: Path) -> None:
        self.root = work / "root"
        self.fake = work / "fake"
        self.shims = work / "shims"
        self.work = work
        for directory in (self.fake, self.shims, *(self.root / d.lstrip("/") for d in GUEST_DIRS)):
            directory.mkdir(parents=True, exist_ok=True)
        self._install()
        self.exec_shim = self._shim(
            "guest-exec", _EXEC.format(paths=" ".join(GUEST_DIRS), root=self.root, shims=self.shims)
        )
        self._shim("systemctl", _SYSTEMCTL.format(fake=self.fake, root=self.root))
        self.holder = subprocess.Popen(["unshare", "-rn", "bash", "-c", "ip link set lo up && exec sleep infinity"])

    def _install(self) -> None:
        """Every provisioned file where the referee's provisioning puts it, with its mode."""
        provisioning = load_manifest(ARENA / "arena.toml").provisioning
        assert provisioning is not None
        for item in provisioning.files:
            target = self.path(item.path)
            shutil.copyfile(ARENA / item.source, target)
            target.chmod(int(item.mode, 8))
        for unit in provisioning.units:
            shutil.copyfile(ARENA / unit.source, self.path(f"/etc/systemd/system/{unit.name}"))

    def _shim(self, name: str, text: str) -> Path:
        path = self.shims / name
        path.write_text(text)
        path.chmod(0o755)
        return path

    def path(self, guest_path: str) -> Path:
        return self.root / guest_path.lstrip("/")

    def in_namespace(self, *argv: str) -> list[str]:
        return ["nsenter", "-t", str(self.holder.pid), "-U", "-n", "--preserve-credentials", "--", *argv]

    def run(self, command: str) -> subprocess.CompletedProcess:
        """A guest command (as root over SSH would run it), output and exit status."""
        return subprocess.run(
            self.in_namespace(str(self.exec_shim), command), capture_output=True, text=True, timeout=60, check=False
        )

    def boot(self) -> None:
        """What a boot does: the seed, then both servers, until both listen."""
        seed = subprocess.run(
            ["sh", str(self.path("/usr/local/lib/aoe/failover-seed"))],
            env={**os.environ, "FAILOVER_DIR": str(self.path("/var/lib/failover"))},
            capture_output=True,
            text=True,
            check=False,
        )
        assert seed.returncode == 0, seed.stderr
        assert self.run(f"systemctl start {' '.join(SERVING)}").returncode == 0
        self.wait_listening(*SERVING.values())

    def reboot(self) -> None:
        assert self.run(f"systemctl stop {' '.join(SERVING)}").returncode == 0
        self.boot()

    def wait_listening(self, *ports: int) -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            listening = self.run("ss -Hltn").stdout
            if all(f":{port} " in listening for port in ports):
                return
            time.sleep(0.1)
        raise AssertionError(f"ports {ports} never listened in the test guest")

    def play(self, plan: Plan) -> list[subprocess.CompletedProcess]:
        """Every step of a scripted builder but its last, the watch loop that runs until the match ends."""
        assert plan.steps[-1].description.startswith("Watch")
        results = [self.run(step.command) for step in plan.steps[:-1]]
        assert all(r.returncode == 0 for r in results), [(r.stdout, r.stderr) for r in results]
        return results

    async def verify(self, milestone: str, previous: dict | None = None, **env: str) -> VerifierOutcome:
        """The milestone's real verifier, run in the namespace against this guest as the referee runs it."""
        manifest = load_manifest(ARENA / "arena.toml")
        script = ARENA / next(m.verifier for m in manifest.build.milestones if m.id == milestone)
        wrapper = self._shim(f"verify-{milestone}", f"#!/bin/sh\nexec {' '.join(self.in_namespace(str(script)))}\n")
        evidence = {m: {"passed": True, "evidence": e} for m, e in (previous or {}).items()}
        previous_file = self.work / "previous-evidence.json"
        previous_file.write_text(json.dumps(evidence))
        return await run_verifier(
            wrapper,
            {
                "AOE_TERRITORY_ID": "failover-one",
                "AOE_HOST": "127.0.0.1",
                "AOE_SERVICE_PORT": "8080",
                "AOE_PREVIOUS_EVIDENCE": str(previous_file),
                "AOE_GUEST_EXEC": str(self.exec_shim),
                **env,
            },
            VERIFIER_TIMEOUT_SECONDS,
            self.work / f"{milestone}.evidence.json",
        )

    def close(self) -> None:
        for pid_file in self.fake.glob("*.pid"):
            try:
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
            except (ValueError, ProcessLookupError):
                pass
        self.holder.kill()
        self.holder.wait()
