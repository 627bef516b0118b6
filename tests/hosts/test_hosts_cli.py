"""`--hosts` on the command line: bad inventories are one line, a series names each round's host, doctor
checks every host (here one whose SSH is down: no VM, no libvirt needed)."""

from __future__ import annotations

import json

from aoe_tui.cli import series_commands
from aoe_tui.cli.main import main
from aoe_tui.engine.placement import match_need
from aoe_tui.store.hosts_file import read_inventory
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.testing.loopback_sshd import loopback_sshd
from aoe_tui.testing.scripted_hosts import ScriptedHostPool
from tests.series.helpers import ScriptedRounds, quick_arena


def test_a_missing_or_bad_hosts_file_is_one_line(tmp_path, capsys):
    arena = quick_arena(tmp_path / "arena")
    argv = ["series", str(arena), "--headless", "--output", str(tmp_path / "s"), "--hosts"]
    assert main([*argv, str(tmp_path / "hosts.toml")]) == 2
    assert capsys.readouterr().err.strip().endswith("hosts.toml: no such hosts file")
    (tmp_path / "hosts.toml").write_text('[[hosts]]\nname = "a"\nuri = "qemu:///system"\n')
    assert main([*argv, str(tmp_path / "hosts.toml")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("hosts.toml: field hosts[0].capacity: Field required") and "\n" not in err


def test_aoe_series_with_hosts_names_each_rounds_host(tmp_path, monkeypatch, capsys):
    arena, output = quick_arena(tmp_path / "arena"), tmp_path / "series"
    need = match_need(load_manifest(arena))
    capacity = f"capacity = {{ vcpus = {need.vcpus}, memory_mib = {need.memory_mib} }}"
    hosts = tmp_path / "hosts.toml"
    hosts.write_text("".join(f'[[hosts]]\nname = "{n}"\nuri = "qemu:///system"\n{capacity}\n' for n in "ab"))
    monkeypatch.setattr(
        series_commands, "real_round_factory", lambda args, manifest, pool=None: ScriptedRounds(manifest)
    )
    monkeypatch.setattr(
        series_commands, "host_pool", lambda args: ScriptedHostPool(read_inventory(args.hosts), series_commands._say)
    )
    assert (
        main(["series", str(arena), "--output", str(output), "--rounds", "2", "--headless", "--hosts", str(hosts)]) == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert f"aoe series: host a ready: qemu:///system, {need.vcpus} vCPUs, {need.memory_mib} MiB" in out
    assert any(line.startswith("aoe series: round 1/2 started on host a: ") for line in out)
    assert any(line.startswith("aoe series: round 2/2 started on host b: ") for line in out)
    assert [r["host"] for r in json.loads((output / "series.json").read_text())["rounds"]] == ["a", "b"]


def test_doctor_with_hosts_fails_a_host_whose_ssh_is_down(tmp_path, capsys):
    with loopback_sshd(tmp_path / "sshd") as sshd:
        entry = sshd.hosts_entry("second", 2, 2048, tmp_path / "work", 29600, "127.0.0.2")
    (tmp_path / "hosts.toml").write_text(entry)  # its sshd is gone now: the host is down
    assert main(["doctor", "--hosts", str(tmp_path / "hosts.toml")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"[FAIL] host second: ssh: host second: SSH to root@127.0.0.1:{sshd.port} failed: ")
    assert out[-1] == "not ready: fix host second: ssh"
