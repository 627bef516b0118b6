"""An arena "guest" on this host, for fast tests: the arena's own programs in a network namespace.

The arena's provisioned files are copied below a temporary root, its seed
fills the state directory, and its serving units' programs run on their
guest ports inside a private network namespace (`unshare -rn`), so the
verifiers and the scripted builders' commands, run in that namespace too,
talk to them exactly as in a guest. Guest commands go through an
`AOE_GUEST_EXEC` shim that maps the guest's paths below the root and stands
in for `systemctl` (start, stop, restart, is-active, reset-failed, enable,
main PIDs, unit files, drop-ins); `ss`, `sha256sum`, `curl` and everything
else are the real tools. Each arena describes itself in a `GuestSpec`
(tests.engine.failover_guest, tests.engine.rollout_guest).

`serve_unix` relays a unix socket to a port in the namespace, so the referee's
own HTTP client (a continuous monitor) can reach the guest from the host.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from aoe_tui.agents.scripted.base import Plan
from aoe_tui.engine.verifier import VerifierOutcome, run_verifier
from aoe_tui.store.manifest_file import load_manifest

VERIFIER_TIMEOUT_SECONDS = 60.0


@dataclass(frozen=True)
class GuestSpec:
    """One arena's test guest: its folder, guest dirs, serving units with their ports and start commands, seed.

    `start` and `seed` are shell commands in which `{root}` stands for the guest's root on this host.
    """

    arena: Path
    territory: str
    guest_dirs: tuple[str, ...]
    serving: dict[str, int]  # unit -> guest port
    start: dict[str, str]  # unit -> command
    seed: str
    env: dict[str, str] = field(default_factory=dict)  # exported to guest commands ({root} substituted)
    booted: tuple[str, ...] | None = None  # units a boot starts (default: every serving unit)

    @property
    def booted_units(self) -> tuple[str, ...]:
        return self.booted if self.booted is not None else tuple(self.serving)


_SYSTEMCTL = """#!/bin/bash
# systemctl for the test guest: starts and stops the arena's servers and answers what the checks ask.
FAKE={fake}
ROOT={root}
{env}
command_of() {{
  case "$1" in
{commands}
  esac
}}
start() {{
  local command
  command="$(command_of "$1")"
  [ -n "$command" ] || return 0
  rm -f "$FAKE/$1.failed"
  setsid bash -c "exec $command" </dev/null >/dev/null 2>&1 &
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
active() {{
  local pid
  pid="$(cat "$FAKE/$1.pid" 2>/dev/null)" || return 1
  kill -0 "$pid" 2>/dev/null && [ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" != Z ]
}}
code=0
case "$1" in
  start) shift; for unit; do start "$unit" || code=1; done ;;
  stop) shift; for unit; do stop "$unit"; done ;;
  restart) shift; for unit; do stop "$unit"; start "$unit" || code=1; done ;;
  is-active)
    shift
    for unit; do
      if active "$unit"; then echo active; elif [ -e "$FAKE/$unit.failed" ]; then echo failed; code=3
      else echo inactive; code=3; fi
    done ;;
  reset-failed) shift; for unit; do rm -f "$FAKE/$unit.failed"; done ;;
  show)
    case "$3" in
      MainPID) cat "$FAKE/$5.pid" 2>/dev/null || echo 0 ;;
      FragmentPath) echo "$ROOT/etc/systemd/system/$5" ;;
      DropInPaths) cat "$FAKE/$5.dropins" 2>/dev/null ;;
      ExecStart) echo "{{ path=/bin/bash ; argv[]=$(command_of "$5") ; }}" ;;
    esac ;;
esac
exit $code
"""

_EXEC = """#!/bin/bash
# AOE_GUEST_EXEC for the test guest: the command with the guest's paths below the root.
command="$*"
for path in {paths}; do command="${{command//$path/{root}$path}}"; done
{env}
PATH={shims}:$PATH exec bash -c "$command"
"""

_RELAY = """
import asyncio, sys
async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        writer.close()
async def client(reader, writer):
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", int(sys.argv[2]))
    except OSError:
        writer.close()
        return
    await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))
async def main():
    server = await asyncio.start_unix_server(client, sys.argv[1])
    print("listening", flush=True)
    await server.serve_forever()
asyncio.run(main())
"""


class NamespacedGuest:
    """The guest's files under `root`, its servers in the namespace of the process `holder`."""

    def __init__(self, spec: GuestSpec, work: Path) -> None:
        self.spec = spec
        self.root = work / "root"
        self.fake = work / "fake"
        self.shims = work / "shims"
        self.work = work
        self._relays: list[subprocess.Popen] = []
        for directory in (self.fake, self.shims, *(self.root / d.lstrip("/") for d in spec.guest_dirs)):
            directory.mkdir(parents=True, exist_ok=True)
        self._install()
        env = "\n".join(f"export {name}={shlex.quote(self._rooted(value))}" for name, value in spec.env.items())
        self.exec_shim = self._shim(
            "guest-exec", _EXEC.format(paths=" ".join(spec.guest_dirs), root=self.root, shims=self.shims, env=env)
        )
        commands = "\n".join(
            f"    {unit}) echo {shlex.quote(self._rooted(command))} ;;" for unit, command in spec.start.items()
        )
        self._shim("systemctl", _SYSTEMCTL.format(fake=self.fake, root=self.root, env=env, commands=commands))
        self.holder = subprocess.Popen(["unshare", "-rn", "bash", "-c", "ip link set lo up && exec sleep infinity"])
        self._wait_for_namespace()

    def _wait_for_namespace(self) -> None:
        """Until the holder runs `sleep` (so it has unshared and brought lo up): a command entered earlier would
        join the host's own namespaces, or fail (seen once in CI, under load)."""
        deadline = time.monotonic() + 20
        comm = Path(f"/proc/{self.holder.pid}/comm")
        while time.monotonic() < deadline:
            if self.holder.poll() is not None:
                raise AssertionError(f"the test guest's namespace holder exited {self.holder.returncode}")
            if comm.read_text().strip() == "sleep":
                return
            time.sleep(0.01)
        raise AssertionError("the test guest's namespace holder never got its namespace")

    def _install(self) -> None:
        """Every provisioned file where the referee's provisioning puts it, with its mode."""
        provisioning = load_manifest(self.spec.arena / "arena.toml").provisioning
        assert provisioning is not None
        for item in provisioning.files:
            target = self.path(item.path)
            shutil.copyfile(self.spec.arena / item.source, target)
            target.chmod(int(item.mode, 8))
        for unit in provisioning.units:
            shutil.copyfile(self.spec.arena / unit.source, self.path(f"/etc/systemd/system/{unit.name}"))

    def _shim(self, name: str, text: str) -> Path:
        path = self.shims / name
        path.write_text(text)
        path.chmod(0o755)
        return path

    def _rooted(self, text: str) -> str:
        return text.replace("{root}", str(self.root))

    def path(self, guest_path: str) -> Path:
        return self.root / guest_path.lstrip("/")

    def in_namespace(self, *argv: str) -> list[str]:
        return ["nsenter", "-t", str(self.holder.pid), "-U", "-n", "--preserve-credentials", "--", *argv]

    def run(self, command: str, timeout: float = 60) -> subprocess.CompletedProcess:
        """A guest command (as root over SSH would run it), output and exit status."""
        return subprocess.run(
            self.in_namespace(str(self.exec_shim), command),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def boot(self) -> None:
        """What a boot does: the seed, then the serving units, until their ports listen."""
        seed = subprocess.run(["sh", "-c", self._rooted(self.spec.seed)], capture_output=True, text=True, check=False)
        assert seed.returncode == 0, seed.stderr
        assert self.run(f"systemctl start {' '.join(self.spec.booted_units)}").returncode == 0
        self.wait_listening(*(self.spec.serving[u] for u in self.spec.booted_units))

    def reboot(self) -> None:
        """Every unit's server stopped, then a boot."""
        assert self.run(f"systemctl stop {' '.join(self.spec.start)}").returncode == 0
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

    def serve_unix(self, port: int) -> Path:
        """A unix socket on the host relaying each connection to `port` in the namespace (a fresh one each)."""
        socket_path = self.work / f"port-{port}.sock"
        relay = subprocess.Popen(
            self.in_namespace(sys.executable, "-c", _RELAY, str(socket_path), str(port)),
            stdout=subprocess.PIPE,
            text=True,
        )
        assert relay.stdout is not None and relay.stdout.readline().strip() == "listening"
        self._relays.append(relay)
        return socket_path

    async def verify(self, milestone: str, previous: dict | None = None, **env: str) -> VerifierOutcome:
        """The milestone's real verifier, run in the namespace against this guest as the referee runs it."""
        manifest = load_manifest(self.spec.arena / "arena.toml")
        assert manifest.build is not None, f"{self.spec.arena} has no milestones to verify"
        script = self.spec.arena / next(m.verifier for m in manifest.build.milestones if m.id == milestone)
        wrapper = self._shim(f"verify-{milestone}", f"#!/bin/sh\nexec {' '.join(self.in_namespace(str(script)))}\n")
        evidence = {m: {"passed": True, "evidence": e} for m, e in (previous or {}).items()}
        previous_file = self.work / "previous-evidence.json"
        previous_file.write_text(json.dumps(evidence))
        return await run_verifier(
            wrapper,
            {
                "AOE_TERRITORY_ID": self.spec.territory,
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
        for relay in self._relays:
            relay.kill()
            relay.wait()
        for pid_file in self.fake.glob("*.pid"):
            try:
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
            except (ValueError, ProcessLookupError):
                pass
        self.holder.kill()  # the namespace's last holder: hand-run servers inside it go with their netns' users
        self.holder.wait()
