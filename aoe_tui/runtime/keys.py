"""SSH identity and host-key pinning, one per guest.

Each territory of a match has its own ed25519 key pair (never a user's own
key) in `ssh/<territory>/`, handed to that guest alone through an SMBIOS
credential, and its own known_hosts pinning that guest alone: an adapter given
territory A's files can neither log in to B (B does not authorize A's key) nor
trust B's host key. Host keys are trusted on first contact, so later
connections (ours, a verifier's `ssh`, a human's paste) all refuse an impostor.
"""

from __future__ import annotations

import os
from pathlib import Path

import asyncssh

PRIVATE_KEY = "id_ed25519"
KNOWN_HOSTS = "known_hosts"


def host_pattern(host: str, port: int) -> str:
    return host if port == 22 else f"[{host}]:{port}"


class MatchKeys:
    """One guest's key files in one directory: `id_ed25519` (0600), `id_ed25519.pub`, `known_hosts`."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    @classmethod
    def ensure(cls, directory: Path, comment: str | None = None) -> MatchKeys:
        """Load the key pair in `directory`, generating it on first use (`comment`: whose key it is)."""
        keys = cls(directory)
        if not keys.private_key_path.exists():
            keys.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            key = asyncssh.generate_private_key("ssh-ed25519", comment=comment or f"aoe-{keys.directory.parent.name}")
            temporary = keys.private_key_path.with_suffix(".tmp")
            temporary.write_bytes(key.export_private_key())
            os.chmod(temporary, 0o600)
            keys.public_key_path.write_bytes(key.export_public_key())
            os.replace(temporary, keys.private_key_path)
        keys.known_hosts_path.touch(exist_ok=True)
        return keys

    @classmethod
    def for_territory(cls, directory: Path, match_id: str, territory_id: str) -> MatchKeys:
        """The territory's own identity in `directory` (store.match_layout: `ssh/<territory>/`), made on first use."""
        return cls.ensure(Path(directory), comment=f"aoe-{match_id}-{territory_id}")

    @property
    def private_key_path(self) -> Path:
        return self.directory / PRIVATE_KEY

    @property
    def public_key_path(self) -> Path:
        return self.directory / f"{PRIVATE_KEY}.pub"

    @property
    def known_hosts_path(self) -> Path:
        return self.directory / KNOWN_HOSTS

    def public_key_openssh(self) -> str:
        """The single `ssh-ed25519 AAAA... comment` line to authorize in guests."""
        return self.public_key_path.read_text().strip()

    def client_key(self) -> asyncssh.SSHKey:
        return asyncssh.read_private_key(str(self.private_key_path))

    def pinned_line(self, host: str, port: int) -> str | None:
        pattern = host_pattern(host, port)
        for line in self.known_hosts_path.read_text().splitlines():
            if line.split(" ", 1)[0] == pattern:
                return line
        return None

    def pin(self, host: str, port: int, key: asyncssh.SSHKey) -> None:
        """Trust `key` for host:port from now on (first contact only)."""
        entry = f"{host_pattern(host, port)} {key.export_public_key().decode().strip()}\n"
        with open(self.known_hosts_path, "a") as handle:
            handle.write(entry)

    def openssh_argv(self, host: str, port: int) -> list[str]:
        """The `ssh` invocation that logs in as root with this identity and these pins."""
        return [
            "ssh",
            "-i",
            str(self.private_key_path),
            "-p",
            str(port),
            "-o",
            f"UserKnownHostsFile={self.known_hosts_path}",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "PasswordAuthentication=no",
            f"root@{host}",
        ]

    def forget(self, host: str, port: int) -> None:
        """Drop the pin for host:port, for a port reused by a brand-new guest."""
        pattern = host_pattern(host, port)
        kept = [line for line in self.known_hosts_path.read_text().splitlines() if line.split(" ", 1)[0] != pattern]
        self.known_hosts_path.write_text("".join(f"{line}\n" for line in kept))
