"""`hosts.toml`: a good inventory reads back with its paths resolved; every mistake is one line naming the field."""

from __future__ import annotations

import pytest

from aoe_tui.domain.errors import AoeError
from aoe_tui.store.hosts_file import read_inventory

REMOTE = """
[[hosts]]
name = "local"
uri = "qemu:///system"
capacity = { vcpus = 2, memory_mib = 4096 }

[[hosts]]
name = "rack-2"
uri = "qemu+ssh://root@10.0.0.2/system"
labels = ["fast"]
capacity = { vcpus = 16, memory_mib = 65536 }
ssh = { host = "10.0.0.2", key_file = "keys/id_ed25519", known_hosts = "keys/known_hosts" }
"""


def write(tmp_path, text):
    keys = tmp_path / "keys"
    keys.mkdir(exist_ok=True)
    (keys / "id_ed25519").write_text("key")
    (keys / "known_hosts").write_text("pins")
    path = tmp_path / "hosts.toml"
    path.write_text(text)
    return path


def test_an_inventory_reads_with_key_paths_resolved_beside_it(tmp_path):
    inventory = read_inventory(write(tmp_path, REMOTE))
    local, remote = inventory.hosts
    assert (local.name, local.remote, local.capacity.vcpus) == ("local", False, 2)
    assert remote.remote and remote.labels == ["fast"] and remote.ssh.port == 22 and remote.ssh.user == "root"
    assert remote.ssh.key_file == str(tmp_path / "keys" / "id_ed25519")
    assert remote.work_dir == "/var/lib/aoe_tui" and remote.accel == "tcg"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda t: t.replace("vcpus = 16", "vcpu = 16"),
            "field hosts[1].capacity.vcpu: Extra inputs are not permitted",
        ),
        (lambda t: t.replace('labels = ["fast"]', 'lables = ["fast"]'), "field hosts[1].lables: Extra inputs"),
        (lambda t: t.replace('name = "rack-2"', 'name = "local"'), "host name 'local' appears more than once"),
        (lambda t: t.replace("vcpus = 2,", "vcpus = 0,"), "field hosts[0].capacity.vcpus: Input should be greater"),
        (
            lambda t: t.replace('known_hosts = "keys/known_hosts"', 'known_hosts = "keys/nope"'),
            "hosts[1].ssh.known_hosts",
        ),
        (lambda t: t.replace("[[hosts]]", "[[host]]", 1), "field host: Extra inputs are not permitted"),
        (lambda t: t + "\n[[hosts\n", "hosts.toml: "),
        (
            lambda t: t.replace('labels = ["fast"]', 'guest_address = "10.0.0.2"'),
            "field hosts[1].guest_address: String",
        ),
    ],
)
def test_every_mistake_is_one_line_naming_the_file_and_field(tmp_path, edit, message):
    path = write(tmp_path, edit(REMOTE))
    with pytest.raises(AoeError) as error:
        read_inventory(path)
    assert str(error.value).startswith(f"{path}: ") and message in str(error.value)
    assert "\n" not in str(error.value)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(AoeError, match="no such hosts file"):
        read_inventory(tmp_path / "hosts.toml")
