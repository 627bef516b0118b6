"""The image pipeline with a stand-in mmdebstrap: caching, atomicity, failure messages.

The real mmdebstrap run is exercised by the VM tests' session fixture; here a
script plays mmdebstrap so each failure mode is provoked on purpose, while
mkfs.ext4 and the cache handling are the real ones.
"""

from __future__ import annotations

import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime import image as image_module
from aoe_tui.runtime.guest_recipe import SLOT_UNIT, GuestRecipe
from aoe_tui.runtime.image import build_image, cached_image, require_image

SMALL = GuestRecipe(disk_mib=16)

_GOOD_ROOTFS = """
for target; do :; done  # the target directory is the last argument
mkdir -p "$target/boot" "$target/etc/ssh"
for arg; do
  case "$arg" in --setup-hook=*) sh -c "${arg#--setup-hook=}" exec "$target" || exit 1 ;; esac
done
echo "I: downloading packages with apt..."
printf kernel > "$target/boot/vmlinuz-6.1.0-test-cloud-amd64"
printf initrd > "$target/boot/initrd.img-6.1.0-test-cloud-amd64"
echo run >> "$CALLS"
"""


@pytest.fixture
def fake_mmdebstrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CALLS", str(tmp_path / "calls"))

    def install(body: str) -> Path:
        script = bin_dir / "mmdebstrap"
        script.write_text(f"#!/bin/sh\n{body}\n")
        script.chmod(0o755)
        return tmp_path / "calls"

    return install


def _images(tmp_path: Path) -> list[str]:
    root = tmp_path / "cache" / "aoe_tui" / "images"
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


def test_builds_once_then_reuses_until_forced(fake_mmdebstrap, tmp_path: Path) -> None:
    calls = fake_mmdebstrap(_GOOD_ROOTFS)
    lines: list[str] = []
    info = build_image(progress=lines.append, recipe=SMALL)
    assert info.recipe_hash == SMALL.digest()
    assert info.kernel.read_bytes() == b"kernel" and info.initrd.read_bytes() == b"initrd"
    assert info.path.stat().st_size == 16 * 1024 * 1024
    assert any("mmdebstrap: I: downloading" in line for line in lines)
    assert cached_image(SMALL) == info
    build_image(recipe=SMALL)
    assert calls.read_text().count("run") == 1
    build_image(force=True, recipe=SMALL)
    assert calls.read_text().count("run") == 2
    assert _images(tmp_path) == [SMALL.digest()]


def _image_file(image: Path, path: str) -> str:
    return subprocess.run(
        ["debugfs", "-R", f"cat {path}", str(image)], capture_output=True, text=True, check=True
    ).stdout


def test_the_raw_image_holds_the_recipe(fake_mmdebstrap) -> None:
    fake_mmdebstrap(_GOOD_ROOTFS)
    info = build_image(recipe=SMALL)
    assert _image_file(info.path, "/etc/initramfs-tools/conf.d/aoe.conf") == "MODULES=list\n"  # setup hook
    assert "manual_add_modules virtio_pci virtio_blk" in _image_file(info.path, "/etc/initramfs-tools/hooks/aoe-virtio")
    assert "Restart=always" in _image_file(info.path, f"/etc/systemd/system/{SLOT_UNIT}")
    hook_mode = subprocess.run(
        ["debugfs", "-R", "stat /etc/initramfs-tools/hooks/aoe-virtio", str(info.path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "Mode:  0755" in hook_mode


def test_recipe_change_means_a_new_image(fake_mmdebstrap) -> None:
    fake_mmdebstrap(_GOOD_ROOTFS)
    build_image(recipe=SMALL)
    assert cached_image(GuestRecipe(disk_mib=32)) is None


def test_unfetchable_package_is_a_clear_error_and_leaves_nothing(fake_mmdebstrap, tmp_path: Path) -> None:
    fake_mmdebstrap('echo "E: Unable to locate package linux-image-cloud-amd64" >&2; exit 1')
    with pytest.raises(AoeError) as caught:
        build_image(recipe=SMALL)
    assert "could not fetch packages" in str(caught.value)
    assert "Unable to locate package linux-image-cloud-amd64" in str(caught.value)
    assert _images(tmp_path) == []
    assert cached_image(SMALL) is None


def test_disk_full_during_build(fake_mmdebstrap, tmp_path: Path) -> None:
    fake_mmdebstrap('echo "tar: ./usr/lib/x: Cannot write: No space left on device" >&2; exit 2')
    with pytest.raises(AoeError, match="disk full"):
        build_image(recipe=SMALL)
    assert _images(tmp_path) == []


def test_not_enough_free_space_is_refused_up_front(fake_mmdebstrap, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = fake_mmdebstrap(_GOOD_ROOTFS)
    monkeypatch.setattr(image_module, "_NEEDED_FREE_MIB", 1 << 40)
    with pytest.raises(AoeError, match=r"disk full: .* MiB free"):
        build_image(recipe=SMALL)
    assert not calls.exists()


def test_half_built_rootfs_never_looks_like_an_image(fake_mmdebstrap, tmp_path: Path) -> None:
    fake_mmdebstrap('for target; do :; done; mkdir -p "$target/boot"; echo "I: interrupted before the kernel"')
    with pytest.raises(AoeError, match="no kernel/initrd"):
        build_image(recipe=SMALL)
    assert _images(tmp_path) == []
    with pytest.raises(AoeError, match="aoe image build"):
        require_image(SMALL)


def test_image_without_manifest_is_not_valid(fake_mmdebstrap) -> None:
    fake_mmdebstrap(_GOOD_ROOTFS)
    info = build_image(recipe=SMALL)
    (info.path.parent / image_module.MANIFEST).unlink()
    assert cached_image(SMALL) is None


def test_two_builds_at_once_build_once_and_both_get_the_image(fake_mmdebstrap, tmp_path: Path) -> None:
    calls = fake_mmdebstrap("sleep 1\n" + _GOOD_ROOTFS)  # slow enough that the second starts mid-build
    lines: list[str] = []
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(build_image, progress=lines.append, recipe=SMALL)
        time.sleep(0.3)
        second = pool.submit(build_image, progress=lines.append, recipe=SMALL)
        infos = [first.result(timeout=60), second.result(timeout=60)]
    assert infos[0] == infos[1] == cached_image(SMALL)
    assert calls.read_text().count("run") == 1
    assert any("another process is building the guest image" in line for line in lines)
