"""Per-territory key pairs and known_hosts pinning, in OpenSSH's formats."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import asyncssh

from aoe_tui.runtime.keys import MatchKeys
from aoe_tui.store.match_layout import MatchLayout


def test_key_pair_is_generated_once_and_private(tmp_path: Path) -> None:
    keys = MatchKeys.ensure(tmp_path / "ssh")
    assert stat.S_IMODE(keys.private_key_path.stat().st_mode) == 0o600
    assert keys.public_key_openssh().startswith("ssh-ed25519 ")
    again = MatchKeys.ensure(tmp_path / "ssh")
    assert again.public_key_openssh() == keys.public_key_openssh()
    assert keys.client_key().export_public_key().decode().split()[1] == keys.public_key_openssh().split()[1]
    # OpenSSH itself accepts the private key file.
    derived = subprocess.run(["ssh-keygen", "-y", "-f", str(keys.private_key_path)], capture_output=True, text=True)
    assert derived.returncode == 0 and derived.stdout.split()[1] == keys.public_key_openssh().split()[1]


def test_pin_forget_and_openssh_known_hosts_format(tmp_path: Path) -> None:
    keys = MatchKeys.ensure(tmp_path / "ssh")
    host_a = asyncssh.generate_private_key("ssh-ed25519")
    host_b = asyncssh.generate_private_key("ssh-ed25519")
    assert keys.pinned_line("127.0.0.1", 26000) is None
    keys.pin("127.0.0.1", 26000, host_a)
    keys.pin("127.0.0.1", 26002, host_b)
    line = keys.pinned_line("127.0.0.1", 26000)
    assert line.startswith("[127.0.0.1]:26000 ssh-ed25519 ")
    # asyncssh (our client) and ssh-keygen (OpenSSH, for verifiers and humans) both read the file.
    trusted, _, _, _, _, _, _ = asyncssh.match_known_hosts(str(keys.known_hosts_path), "127.0.0.1", "127.0.0.1", 26000)
    assert {k.export_public_key().split()[1] for k in trusted} == {host_a.export_public_key().split()[1]}
    found = subprocess.run(
        ["ssh-keygen", "-F", "[127.0.0.1]:26002", "-f", str(keys.known_hosts_path)], capture_output=True, text=True
    )
    assert found.returncode == 0 and host_b.export_public_key().decode().split()[1] in found.stdout
    keys.forget("127.0.0.1", 26000)
    assert keys.pinned_line("127.0.0.1", 26000) is None
    assert keys.pinned_line("127.0.0.1", 26002) is not None


def test_openssh_argv_pins_identity_and_host(tmp_path: Path) -> None:
    keys = MatchKeys.ensure(tmp_path / "ssh")
    argv = keys.openssh_argv("127.0.0.1", 26004)
    assert argv[0] == "ssh" and argv[-1] == "root@127.0.0.1"
    assert ["-p", "26004"] == argv[argv.index("-p") : argv.index("-p") + 2]
    assert f"UserKnownHostsFile={keys.known_hosts_path}" in argv and "StrictHostKeyChecking=yes" in argv


def test_each_territory_has_its_own_private_key_directory(tmp_path: Path) -> None:
    layout = MatchLayout(tmp_path)
    one = MatchKeys.for_territory(layout.ssh_directory("one"), "m1", "one")
    two = MatchKeys.for_territory(layout.ssh_directory("two"), "m1", "two")
    assert one.private_key_path == tmp_path / "ssh" / "one" / "id_ed25519"
    assert two.known_hosts_path == tmp_path / "ssh" / "two" / "known_hosts"
    assert one.public_key_openssh() != two.public_key_openssh()
    assert one.public_key_openssh().endswith(" aoe-m1-one") and two.public_key_openssh().endswith(" aoe-m1-two")
    for keys in (one, two):
        assert stat.S_IMODE(keys.private_key_path.stat().st_mode) == 0o600
        assert stat.S_IMODE(keys.directory.stat().st_mode) == 0o700
    one.pin("127.0.0.1", 32200, asyncssh.generate_private_key("ssh-ed25519"))
    assert two.known_hosts_path.read_text() == "", "a pin lands in its own territory's known_hosts only"
