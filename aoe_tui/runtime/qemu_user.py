"""Who runs a territory's QEMU: libvirt's unprivileged user when the host allows it, else root (said why).

A guest escape into QEMU should land in an account that owns nothing but its
own match's disks. libvirt's DAC driver (`dynamic_ownership`) hands each
domain's overlay, kernel and initrd to the qemu user from qemu.conf while it
runs. That user must also reach them: the base image lives in root's cache
(`~/.cache`, under a `/root` nobody else may enter), so a match stages it in
its own directory: the raw base as a hard link (same root-owned, read-only
inode, never relabelled: the disk XML says `relabel=no` for it) and private
copies of the small kernel and initrd, which libvirt may chown freely. When
the match directory itself is out of the user's reach, when qemu.conf says
root, or when dynamic ownership is off, guests run as root, and `aoe doctor`
says so.
"""

from __future__ import annotations

import grp
import os
import pwd
import re
import shutil
import subprocess
from dataclasses import dataclass
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.image import ImageInfo

T = TypeVar("T")  # what a passwd or group lookup returns

QEMU_CONF = Path("/etc/libvirt/qemu.conf")
DEFAULT_USER = "libvirt-qemu"  # Debian's libvirt is built with this user and group
DEFAULT_GROUP = "libvirt-qemu"
STAGE_DIR = "image"
_CONF_SETTING = re.compile(r"^\s*(user|group|dynamic_ownership)\s*=\s*\"?([^\"#]*?)\"?\s*(#.*)?$")


@dataclass(frozen=True)
class QemuUser:
    """The decision for one match: `unprivileged` or root, and one line saying why."""

    unprivileged: bool
    reason: str
    uid: int | None = None
    gid: int | None = None


def conf_settings(text: str) -> dict[str, str]:
    """The `user`, `group` and `dynamic_ownership` lines of a qemu.conf that are not commented out."""
    settings = {}
    for line in text.splitlines():
        if match := _CONF_SETTING.match(line):
            settings[match.group(1)] = match.group(2).strip()
    return settings


def configured_user(conf: Path = QEMU_CONF) -> QemuUser:
    """What qemu.conf allows, before looking at any path: the user libvirt would run guests as, or why root."""
    try:
        settings = conf_settings(conf.read_text(encoding="utf-8", errors="replace"))
    except OSError as error:
        return QemuUser(False, f"cannot read {conf} ({error.strerror}); cannot tell which user would run guests")
    user, group = settings.get("user", DEFAULT_USER), settings.get("group", DEFAULT_GROUP)
    said = f"{conf}: user = {user}" + ("" if "user" in settings else " (default)")
    uid, gid = _resolve(user, pwd.getpwnam, lambda e: e.pw_uid), _resolve(group, grp.getgrnam, lambda e: e.gr_gid)
    if uid == 0:
        return QemuUser(False, f"{said}: guests run as root")
    if uid is None or gid is None:
        return QemuUser(False, f"{said}, group = {group}, but there is no such user or group on this host")
    if settings.get("dynamic_ownership", "1") == "0":
        return QemuUser(False, f"{said}, dynamic_ownership = 0: libvirt would not hand it the disks")
    return QemuUser(
        True, f"{said} (uid {uid}), dynamic_ownership = {settings.get('dynamic_ownership', '1 (default)')}", uid, gid
    )


def choose_for(directory: Path, conf: Path = QEMU_CONF) -> QemuUser:
    """The qemu user for guests whose files live under `directory`, or root with the reason."""
    choice = configured_user(conf)
    if not choice.unprivileged:
        return choice
    directory.mkdir(parents=True, exist_ok=True)
    if not _can(choice, "-x", directory):
        return QemuUser(
            False, f"uid {choice.uid} cannot enter {directory} (a parent directory is private); guests run as root"
        )
    return choice


def stage_image(image: ImageInfo, directory: Path, user: QemuUser) -> ImageInfo:
    """The image as the qemu user can reach it, staged in `directory` (see the module docstring)."""
    directory.mkdir(parents=True, exist_ok=True)
    staged = ImageInfo(directory / "base.raw", directory / "vmlinuz", directory / "initrd.img", image.recipe_hash)
    try:
        for source, target in ((image.kernel, staged.kernel), (image.initrd, staged.initrd)):
            shutil.copyfile(source, target)
            os.chmod(target, 0o644)
    except OSError as error:
        raise AoeError(f"{directory}: cannot stage the guest image for the qemu user: {error}") from None
    stage_read_only(image.path, staged.path, user, "base image")
    return staged


def stage_read_only(source: Path, target: Path, user: QemuUser, what: str) -> Path:
    """`source` at `target` for the qemu user to read, never to write: the same inode when it can be (a hard
    link, made read-only), else a sparse copy; `what` names it in the error."""
    try:
        target.unlink(missing_ok=True)
        try:
            os.link(source, target)
        except OSError:  # another filesystem: a sparse copy (only the used blocks)
            subprocess.run(
                ["cp", "--sparse=always", "--reflink=auto", str(source), str(target)],
                check=True,
                capture_output=True,
            )
            os.chmod(target, 0o444)
    except (OSError, subprocess.CalledProcessError) as error:
        raise AoeError(f"{target.parent}: cannot stage the {what} for the qemu user: {error}") from None
    if not _can(user, "-r", target):
        raise AoeError(
            f"{target}: uid {user.uid} cannot read the staged {what} (mode "
            f"{target.stat().st_mode & 0o777:o}); make {source} world-readable"
        )
    return target


def _can(user: QemuUser, test_flag: str, path: Path) -> bool:
    """`test FLAG PATH` run as the user (its own uid and gid, no supplementary groups)."""
    try:
        return (
            subprocess.run(
                ["test", test_flag, str(path)], user=user.uid, group=user.gid, extra_groups=[], capture_output=True
            ).returncode
            == 0
        )
    except OSError:
        return False


def _resolve(name: str, lookup: Callable[[str], T], field: Callable[[T], int]) -> int | None:
    if name.startswith("+") and name[1:].isdigit():
        return int(name[1:])
    try:
        return field(lookup(name))
    except KeyError:
        return None
