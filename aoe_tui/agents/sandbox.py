"""Confining one adapter process: what it may read, write, see and spend.

An adapter is untrusted code on the referee's host. It starts as root-owned
`bwrap` (bubblewrap), which builds a private view and then hands the command
to `setpriv`, which drops to the adapter's own unprivileged uid for good:

- the whole filesystem read-only; the match directory, the operator's home,
  `/run` (the libvirt and D-Bus sockets) and `/tmp` hidden behind empty
  tmpfs; only its own agent folder writable (chowned to its uid), a private
  `/tmp` that is also its `HOME`;
- a copy of its territory's key and known_hosts, read-only inside the sandbox
  (the host's files stay root's, 0600), and a passwd line for its uid (OpenSSH
  refuses to run for a uid without one);
- its own PID namespace (it cannot see or signal the referee or another
  adapter, nor read their environment), killed with the referee;
- its own uid, which the firewall (`firewall.py`) confines to its own guest's
  ports on loopback and which file permissions keep out of everything root's;
- `prlimit` bounds: address space per process and processes per uid.

The process group the referee signals (pause, stop, kill) is the one it
created, so bwrap keeps it (no `--new-session`; stdin is /dev/null and there
is no terminal to inject into).
"""

from __future__ import annotations

import itertools
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from aoe_tui.agents.firewall import AdapterFirewall
from aoe_tui.domain.errors import AoeError

SANDBOX_HOME = "/tmp"
SANDBOX_FILES_DIR = "/run/aoe"  # read-only copies handed to the adapter (key, known_hosts, ...)
MEMORY_BYTES = 4 * 1024**3  # RLIMIT_AS of each adapter process
MAX_PROCESSES = 256  # RLIMIT_NPROC of the adapter's uid
# Always replaced by an empty tmpfs (with these modes): sockets, and scratch space other processes share.
_ALWAYS_HIDDEN = {Path("/run"): "0755", Path("/tmp"): "1777", Path("/var/tmp"): "1777", Path("/dev/shm"): "1777"}
_UID_BASE = 1 << 30  # far above any distribution's users; below 2^31 for every tool's taste
_launches = itertools.count()


def next_adapter_uid() -> int:
    """A uid no other running adapter has: unique per referee process (pid) and per launch in it."""
    return _UID_BASE + ((os.getpid() & 0x3FFFFF) << 8) + (next(_launches) & 0xFF)


def referee_alive(uid: int) -> bool:
    """Whether the referee process that handed out adapter `uid` still runs."""
    try:
        os.kill((uid - _UID_BASE) >> 8, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


@dataclass(frozen=True)
class Sandbox:
    uid: int
    writable: Path  # the agent's own folder
    hidden: tuple[Path, ...]  # directories replaced by an empty tmpfs (the match directory, ...)
    readable: tuple[Path, ...] = ()  # re-exposed read-only inside a hidden directory (the Python install, ...)
    files: dict[str, bytes] = field(default_factory=dict)  # in-sandbox path -> content, read-only
    loopback_ports: tuple[int, ...] = ()  # the only loopback TCP ports it may reach (its guest's, ...)
    memory_bytes: int = MEMORY_BYTES
    max_processes: int = MAX_PROCESSES

    def prepare(self) -> PreparedSandbox:
        """Install the uid's firewall, chown the agent folder to the uid, stage the file copies as fds."""
        for tool in ("bwrap", "setpriv", "prlimit"):
            if shutil.which(tool) is None:
                raise AoeError(
                    f"adapter confinement needs {tool} (apt-get install bubblewrap util-linux; scripts/bootstrap)"
                )
        if os.geteuid() != 0:
            raise AoeError("adapter confinement needs root (it gives each adapter its own uid)")
        AdapterFirewall.remove_stale(referee_alive)
        firewall = AdapterFirewall(self.uid, self.loopback_ports)
        try:
            firewall.install()
        except AoeError:
            firewall.remove()
            raise
        self.writable.mkdir(parents=True, exist_ok=True)
        os.chown(self.writable, self.uid, os.getgid())
        files = {
            **self.files,
            "/etc/passwd": _with_line(
                "/etc/passwd", f"aoe-adapter:x:{self.uid}:{self.uid}:aoe adapter:{SANDBOX_HOME}:/bin/sh"
            ),
            "/etc/group": _with_line("/etc/group", f"aoe-adapter:x:{self.uid}:"),
        }
        fds = {path: _memfd(content) for path, content in files.items()}
        return PreparedSandbox(self, fds, firewall)


@dataclass
class PreparedSandbox:
    sandbox: Sandbox
    fds: dict[str, int]
    firewall: AdapterFirewall

    def argv(self, command: list[str]) -> list[str]:
        s = self.sandbox
        args = [
            "prlimit",
            f"--as={s.memory_bytes}",
            f"--nproc={s.max_processes}",
            "--",
            "bwrap",
            "--die-with-parent",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
        ]
        hidden = {**_ALWAYS_HIDDEN, **{Path(h): "0755" for h in s.hidden}}
        for directory in sorted(hidden, key=lambda p: len(p.parts)):
            args += ["--perms", hidden[directory], "--tmpfs", str(directory)]
            for readable in _outermost(s.readable):
                if readable.is_relative_to(directory) and readable != directory and readable.exists():
                    args += [*_dirs_between(directory, readable), "--ro-bind", str(readable), str(readable)]
        holders = [h for h in hidden if s.writable.is_relative_to(h)]
        if holders:
            args += _dirs_between(max(holders, key=lambda p: len(p.parts)), s.writable)
        args += ["--bind", str(s.writable), str(s.writable)]
        for parent in sorted({str(Path(p).parent) for p in self.fds} - {"/etc"}):
            args += ["--perms", "0755", "--dir", parent]
        for path, fd in self.fds.items():
            args += ["--perms", "0444", "--ro-bind-data", str(fd), path]
        args += [
            "--cap-add",
            "CAP_SETUID",
            "--cap-add",
            "CAP_SETGID",
            "--chdir",
            str(s.writable),
            "--",
            "setpriv",
            f"--reuid={s.uid}",
            f"--regid={s.uid}",
            "--clear-groups",
            "--no-new-privs",
            "--inh-caps=-all",
            "--",
        ]
        return args + command

    def close_fds(self) -> None:
        """After the spawn: bwrap has its own copies of the fds."""
        for fd in self.fds.values():
            os.close(fd)
        self.fds = {}

    def release(self) -> None:
        """Once the adapter is gone: drop its firewall, give its folder back to the referee (links not followed)."""
        self.close_fds()
        self.firewall.remove()
        writable = self.sandbox.writable
        for root, dirs, names in os.walk(writable):
            for name in (*dirs, *names):
                _lchown_back(Path(root) / name)
        _lchown_back(writable)


def python_install() -> tuple[Path, ...]:
    """What a built-in adapter (`python -m aoe_tui...`) needs to read: the interpreter, its venv, the package."""
    package_root = Path(__file__).resolve().parents[2]
    return tuple(dict.fromkeys(Path(p).resolve() for p in (sys.base_prefix, sys.prefix, package_root)))


def _outermost(paths: tuple[Path, ...]) -> list[Path]:
    """Drop paths that lie inside another one of them (binding the outer one exposes them already)."""
    return [p for p in dict.fromkeys(paths) if not any(p != q and p.is_relative_to(q) for q in paths)]


def _dirs_between(top: Path, target: Path) -> list[str]:
    """`--dir` (mode 0755) for each level strictly between `top` and `target`: bwrap would make them 0700."""
    args: list[str] = []
    for part in target.relative_to(top).parts[:-1]:
        top = top / part
        args += ["--perms", "0755", "--dir", str(top)]
    return args


def _with_line(path: str, line: str) -> bytes:
    try:
        existing = Path(path).read_bytes()
    except OSError:
        existing = b""
    return existing.rstrip(b"\n") + b"\n" + line.encode() + b"\n"


def _memfd(content: bytes) -> int:
    fd = os.memfd_create("aoe-sandbox-file")  # close-on-exec: only the adapter's spawn inherits it (pass_fds)
    os.write(fd, content)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _lchown_back(path: Path) -> None:
    try:
        os.chown(path, os.getuid(), os.getgid(), follow_symlinks=False)
    except OSError:
        pass
