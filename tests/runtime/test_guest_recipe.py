"""The guest recipe written into a fake root filesystem: what the image will contain."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from aoe_tui.runtime.guest_recipe import SLOT_APP, SLOT_UNIT, GuestRecipe


def _apply(tmp_path: Path) -> Path:
    rootfs = tmp_path / "rootfs"
    (rootfs / "etc/ssh").mkdir(parents=True)
    for name in ("ssh_host_rsa_key", "ssh_host_rsa_key.pub", "ssh_host_ed25519_key"):
        (rootfs / "etc/ssh" / name).write_text("baked-in key")
    GuestRecipe().apply(rootfs)
    return rootfs


def test_slot_unit_is_enabled_dormant_and_never_rate_limited(tmp_path: Path) -> None:
    rootfs = _apply(tmp_path)
    unit = (rootfs / "etc/systemd/system" / SLOT_UNIT).read_text()
    assert f"ExecStart=/usr/bin/python3 {SLOT_APP}" in unit
    assert "Restart=always" in unit and "RestartSec=1" in unit
    assert f"ConditionPathExists={SLOT_APP}" in unit
    assert "StartLimitIntervalSec=0" in unit
    link = rootfs / "etc/systemd/system/multi-user.target.wants" / SLOT_UNIT
    assert os.readlink(link) == f"/etc/systemd/system/{SLOT_UNIT}"
    assert (rootfs / "opt/builder").is_dir()


def test_ssh_is_key_only_and_host_keys_are_made_per_guest(tmp_path: Path) -> None:
    rootfs = _apply(tmp_path)
    sshd = (rootfs / "etc/ssh/sshd_config.d/aoe.conf").read_text()
    assert "PasswordAuthentication no" in sshd and "PermitRootLogin prohibit-password" in sshd
    assert not list((rootfs / "etc/ssh").glob("ssh_host_*")), "image must not ship shared host keys"
    assert (rootfs / "etc/systemd/system/multi-user.target.wants/aoe-ssh-hostkeys.service").is_symlink()
    assert oct((rootfs / "root/.ssh").stat().st_mode & 0o777) == "0o700"


def test_dhcp_on_eth0_and_noisy_timers_masked(tmp_path: Path) -> None:
    rootfs = _apply(tmp_path)
    assert "iface eth0 inet dhcp" in (rootfs / "etc/network/interfaces").read_text()
    assert os.readlink(rootfs / "etc/systemd/system/apt-daily.timer") == "/dev/null"


def test_apply_twice_is_idempotent(tmp_path: Path) -> None:
    rootfs = _apply(tmp_path)
    GuestRecipe().apply(rootfs)
    assert os.readlink(rootfs / "etc/systemd/system/multi-user.target.wants" / SLOT_UNIT).endswith(SLOT_UNIT)


def test_digest_follows_every_ingredient() -> None:
    base = GuestRecipe()
    assert base.digest() == GuestRecipe().digest()
    assert dataclasses.replace(base, packages=base.packages + ("vim",)).digest() != base.digest()
    changed_files = dict(base.files, **{"etc/hostname": "other\n"})
    assert dataclasses.replace(base, files=changed_files).digest() != base.digest()
    assert dataclasses.replace(base, disk_mib=8192).digest() != base.digest()


def test_mmdebstrap_command_line(tmp_path: Path) -> None:
    command = GuestRecipe().mmdebstrap_command(tmp_path / "rootfs")
    assert command[:2] == ["mmdebstrap", "--variant=minbase"]
    included = command[2].removeprefix("--include=").split(",")
    for package in (
        "systemd-sysv",
        "openssh-server",
        "python3",
        "sqlite3",
        "linux-image-cloud-amd64",
        "isc-dhcp-client",
    ):
        assert package in included
    assert command[-2:] == ["bookworm", str(tmp_path / "rootfs")]


def test_the_acpi_power_button_reboots_the_guest(tmp_path: Path) -> None:
    rootfs = _apply(tmp_path)
    event = (rootfs / "etc/acpi/events/aoe-power-button").read_text()
    assert "event=button/power" in event and "action=/usr/bin/systemctl --no-block reboot" in event
    assert (rootfs / "etc/modules-load.d/aoe-acpi.conf").read_text().split() == ["button", "evdev"]
    assert "acpid" in GuestRecipe().packages
