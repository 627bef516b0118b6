"""Disks sized from the class, room checked up front, the console tail across rotation, and who runs QEMU.

All real: qemu-img makes the overlays, the free space is the filesystem's, and
reachability is tested by running `test` as the qemu user from qemu.conf.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.guest import TerritoryConfig, TerritoryVM
from aoe_tui.runtime.image import ImageInfo, image_mib
from aoe_tui.runtime.overlay import ROOM_MARGIN_MIB, check_disk_room, create_overlay
from aoe_tui.runtime.ports import TerritoryPorts
from aoe_tui.runtime.qemu_user import choose_for, configured_user, stage_image

MIB = 1024 * 1024


@pytest.fixture
def image(tmp_path: Path) -> ImageInfo:
    directory = tmp_path / "cache"
    directory.mkdir()
    base = directory / "base.raw"
    with open(base, "wb") as handle:
        handle.truncate(64 * MIB)
    for name in ("vmlinuz", "initrd.img"):
        (directory / name).write_bytes(b"boot file " + name.encode())
    return ImageInfo(base, directory / "vmlinuz", directory / "initrd.img", "test")


@pytest.fixture
def reachable_dir():
    """A directory the qemu user may enter (pytest's own tmp is private to root)."""
    directory = Path(tempfile.mkdtemp(prefix="aoe-qemu-user-", dir="/var/tmp"))
    directory.chmod(0o755)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def _virtual_size(path: Path) -> int:
    info = subprocess.run(
        ["qemu-img", "info", "--output=json", "-U", str(path)], capture_output=True, text=True, check=True
    )
    return json.loads(info.stdout)["virtual-size"]


def test_the_overlay_takes_the_requested_size_or_the_base_size(image: ImageInfo, tmp_path: Path) -> None:
    create_overlay(image.path, tmp_path / "big.qcow2", 256)
    create_overlay(image.path, tmp_path / "same.qcow2")
    assert _virtual_size(tmp_path / "big.qcow2") == 256 * MIB
    assert _virtual_size(tmp_path / "same.qcow2") == 64 * MIB


def test_a_guest_disk_is_the_class_size_but_never_below_the_image(image: ImageInfo, tmp_path: Path) -> None:
    def vm(disk_mib):
        config = TerritoryConfig("m", "t1", 1, 512, tmp_path, TerritoryPorts(32590, 32591), disk_mib=disk_mib)
        return TerritoryVM(config, hypervisor=None, keys=None, image=image, accel=None)

    assert image_mib(image) == 64
    assert vm(1024).disk_mib == 1024 and vm(16).disk_mib == 64 and vm(None).disk_mib == 64


def test_free_space_is_checked_up_front_in_one_line(tmp_path: Path) -> None:
    free_mib = shutil.disk_usage(tmp_path).free // MIB
    check_disk_room(tmp_path, {"t1": 1024, "t2": 1024})
    with pytest.raises(AoeError) as caught:
        check_disk_room(tmp_path, {"t1": free_mib, "t2": 4096})
    message = str(caught.value)
    assert "\n" not in message and str(tmp_path) in message and f"{free_mib + 4096 + ROOM_MARGIN_MIB} MiB" in message
    assert "t1" in message and "disk_mib" in message


def test_the_console_tail_reads_across_a_rotation(tmp_path: Path, image: ImageInfo) -> None:
    config = TerritoryConfig("m", "t1", 1, 512, tmp_path, TerritoryPorts(32590, 32591))
    vm = TerritoryVM(config, hypervisor=None, keys=None, image=image, accel=None)
    (tmp_path / "console.log.0").write_bytes(b"old line\nDebian GNU/Linux 12 t1 ttyS0\n\x1b[31mt1 login: \n")
    (tmp_path / "console.log").write_bytes(b"")
    assert vm.console_tail(2) == "Debian GNU/Linux 12 t1 ttyS0\nt1 login:"
    (tmp_path / "console.log").write_bytes(b"fresh\n")
    assert vm.console_tail(1) == "fresh" and vm.console_tail(2) == "t1 login:\nfresh"


def test_qemu_conf_decides_first(tmp_path: Path) -> None:
    conf = tmp_path / "qemu.conf"
    conf.write_text('user = "root"\n')
    assert not configured_user(conf).unprivileged and "root" in configured_user(conf).reason
    conf.write_text('#user = "libvirt-qemu"\ndynamic_ownership = 0\n')
    assert not configured_user(conf).unprivileged
    conf.write_text("# all defaults\n")
    choice = configured_user(conf)
    assert choice.unprivileged and choice.uid != 0 and choice.uid is not None


def test_a_private_match_directory_falls_back_to_root_and_says_why(tmp_path: Path) -> None:
    if not configured_user().unprivileged:
        pytest.skip(f"this host runs guests as root anyway: {configured_user().reason}")
    private = tmp_path / "match"  # under pytest's 0700 base directory
    choice = choose_for(private)
    assert not choice.unprivileged and "cannot enter" in choice.reason and str(private) in choice.reason


def test_a_reachable_match_stages_the_image_for_the_qemu_user(
    reachable_dir: Path, image: ImageInfo, tmp_path: Path
) -> None:
    choice = choose_for(reachable_dir / "match")
    if not configured_user().unprivileged:
        pytest.skip(f"this host runs guests as root anyway: {choice.reason}")
    assert choice.unprivileged, choice.reason
    cache = reachable_dir / "cache"  # same filesystem as the match: the base is hard-linked
    shutil.copytree(image.path.parent, cache)
    source = ImageInfo(cache / "base.raw", cache / "vmlinuz", cache / "initrd.img", "test")
    staged = stage_image(source, reachable_dir / "match" / "image", choice)
    assert os.stat(staged.path).st_ino == os.stat(source.path).st_ino  # one inode, root's, never relabelled
    assert staged.kernel.read_bytes() == source.kernel.read_bytes()
    assert os.stat(staged.kernel).st_ino != os.stat(source.kernel).st_ino  # a copy libvirt may chown
    as_qemu = subprocess.run(
        ["head", "-c", "1", str(staged.path)], user=choice.uid, group=choice.gid, extra_groups=[], capture_output=True
    )
    assert as_qemu.returncode == 0
    as_qemu = subprocess.run(
        ["head", "-c", "1", str(source.path)], user=choice.uid, group=choice.gid, extra_groups=[], capture_output=True
    )
    assert as_qemu.returncode == 0  # (only because this cache is in /var/tmp; root's ~/.cache is not)
