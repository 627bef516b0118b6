"""A real OpenSSH server on a loopback port: this machine made into a second, "remote" hypervisor.

Its own host key, one authorized client key, root login by key only, local
forwards allowed, SFTP, and nothing but 127.0.0.1. Tests and the scale-out
benchmark reach libvirt through it (`qemu+ssh://root@127.0.0.1:PORT/system`,
a different URI and transport from the local socket) and the coordinator's
tunnels go through it, so killing it is a host dropping mid-match. It logs at
DEBUG1, which names every forwarded connection's target port
(`direct-tcpip` lines): the proof of what went through it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import asyncssh

from aoe_tui.runtime.ports import LOOPBACK, port_is_free

SSHD = Path("/usr/sbin/sshd")
PRIVSEP_DIR = Path("/run/sshd")
_DIRECT = "server_request_direct_tcpip"


@dataclass
class LoopbackSSHD:
    directory: Path
    port: int
    process: subprocess.Popen | None = None

    @property
    def key_file(self) -> Path:
        return self.directory / "client_key"

    @property
    def known_hosts(self) -> Path:
        return self.directory / "known_hosts"

    @property
    def log(self) -> Path:
        return self.directory / "sshd.log"

    def libvirt_uri(self) -> str:
        """libvirt over this server, by its `ssh` transport with our key.

        `no_verify=1`: that transport runs the `ssh` program, which checks host keys only against the user's
        own ~/.ssh/known_hosts, and a test must not edit root's. The coordinator's own link (every guest
        byte) pins the host key in `known_hosts`; docs/hosts.md says how to pin it for libvirt too."""
        query = f"keyfile={quote(str(self.key_file))}&no_verify=1&no_tty=1"
        return f"qemu+ssh://root@{LOOPBACK}:{self.port}/system?{query}"

    def hosts_entry(
        self, name: str, vcpus: int, memory_mib: int, work_dir: Path, guest_base_port: int, guest_address: str
    ) -> str:
        """This server as one `[[hosts]]` table of a hosts.toml."""
        return (
            f'[[hosts]]\nname = "{name}"\nuri = "{self.libvirt_uri()}"\nwork_dir = "{work_dir}"\n'
            f'guest_base_port = {guest_base_port}\nguest_address = "{guest_address}"\n'
            f"capacity = {{ vcpus = {vcpus}, memory_mib = {memory_mib} }}\n"
            f'ssh = {{ host = "{LOOPBACK}", port = {self.port}, user = "root", key_file = "{self.key_file}", '
            f'known_hosts = "{self.known_hosts}" }}\n'
        )

    def forwarded(self) -> list[tuple[str, int]]:
        """The target (address, port) of every connection forwarded through this server so far (from its log)."""
        targets = []
        for line in self.log.read_text(errors="replace").splitlines():
            if _DIRECT in line and " target " in line:
                address, _, port = line.rsplit(" target ", 1)[1].split()[:3]
                targets.append((address, int(port)))
        return targets

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
        host_key = asyncssh.generate_private_key("ssh-ed25519")
        (self.directory / "host_key").write_bytes(host_key.export_private_key())
        (self.directory / "host_key").chmod(0o600)
        client = asyncssh.generate_private_key("ssh-ed25519", comment="aoe-coordinator")
        self.key_file.write_bytes(client.export_private_key())
        self.key_file.chmod(0o600)
        (self.directory / "authorized_keys").write_bytes(client.export_public_key())
        self.known_hosts.write_text(f"[{LOOPBACK}]:{self.port} {host_key.export_public_key().decode().strip()}\n")
        config = self.directory / "sshd_config"
        config.write_text(
            "\n".join(
                [
                    f"Port {self.port}",
                    f"ListenAddress {LOOPBACK}",
                    f"HostKey {self.directory / 'host_key'}",
                    f"PidFile {self.directory / 'sshd.pid'}",
                    f"AuthorizedKeysFile {self.directory / 'authorized_keys'}",
                    "PermitRootLogin prohibit-password",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "UsePAM no",
                    "StrictModes no",
                    "AllowTcpForwarding local",
                    "GatewayPorts no",
                    "X11Forwarding no",
                    "MaxSessions 100",
                    "MaxStartups 100",
                    "Subsystem sftp internal-sftp",
                    "LogLevel DEBUG1",
                    "",
                ]
            )
        )
        self.process = subprocess.Popen([str(SSHD), "-D", "-f", str(config), "-E", str(self.log)])
        deadline = time.monotonic() + 10
        while port_is_free(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"sshd did not start on {LOOPBACK}:{self.port}: {self.log.read_text()[-500:]}")
            time.sleep(0.05)

    def kill(self) -> None:
        """The host drops: this server and every connection it serves die at once (SIGKILL, no goodbye)."""
        if self.process is None or self.process.poll() is not None:
            return
        for pid in _descendants(self.process.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.kill()
        self.process.wait()


def _descendants(pid: int) -> list[int]:
    """Every process below `pid` (sshd forks one per connection), children first found, from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


@contextlib.contextmanager
def loopback_sshd(directory: Path, ports: range = range(32540, 32560)) -> Iterator[LoopbackSSHD]:
    """A started server on the first free port of `ports`; killed on the way out."""
    server = LoopbackSSHD(Path(directory), next(p for p in ports if port_is_free(p)))
    server.start()
    try:
        yield server
    finally:
        server.kill()
