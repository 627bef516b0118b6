"""Making a warm-start template (`runtime.warm_start`): one cold boot of a class's guest, saved.

One maker at a time per class, across processes (a lock file beside the template, held alone by its maker):
a second match that needs the same template waits for it instead of booting another. Every match that found
or made a template keeps holding that lock shared (`TemplateLease`) until it closes, so no one removes it
meanwhile.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.guest import TerritoryConfig, TerritoryVM
from aoe_tui.runtime.hypervisor import Hypervisor
from aoe_tui.runtime.image import ImageInfo
from aoe_tui.runtime.keys import MatchKeys
from aoe_tui.runtime.kvm_probe import AccelChoice
from aoe_tui.runtime.paths import images_dir
from aoe_tui.runtime.ports import LOOPBACK, reserve_ports
from aoe_tui.runtime.warm_start import (
    DESCRIPTION,
    DISK,
    KEYS,
    SAVED_STATE,
    TEMPLATE_TERRITORY,
    TemplateClass,
    TemplateLease,
    WarmTemplate,
    image_stamp,
    open_template_lock,
    read_template,
    read_template_at,
    remove_unless_held,
    templates_dir,
)
from aoe_tui.store.match_layout import OVERLAY_NAME

TEMPLATE_SSH_TIMEOUT_S = 600.0
_LOCK_POLL_S = 0.5


async def ensure_template(
    template_class: TemplateClass,
    hypervisor: Hypervisor,
    image: ImageInfo,
    accel: AccelChoice,
    on_build: Callable[[], None] | None = None,
) -> TemplateLease:
    """The template of this class, made first if there is none (one maker at a time per class, across processes),
    held for the caller until it releases the lease; `on_build()` is called before a template is made."""
    directory = templates_dir() / template_class.digest
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock = open_template_lock(directory)
    try:
        await _hold(lock, fcntl.LOCK_SH)  # waits out a maker
        template = read_template(template_class)
        if template is None:
            fcntl.flock(lock, fcntl.LOCK_UN)
            await _hold(lock, fcntl.LOCK_EX)
            template = read_template(template_class)  # another match may have made it meanwhile
            if template is None:
                if on_build is not None:
                    on_build()
                template = await _make_template(template_class, directory, hypervisor, image, accel)
            fcntl.flock(lock, fcntl.LOCK_SH)
        return TemplateLease(template, lock)
    except BaseException:
        os.close(lock)
        raise


async def _hold(lock: int, mode: int) -> None:
    """Take `lock` in `mode`, polling (another process may hold it for minutes; the loop stays free)."""
    while True:
        try:
            fcntl.flock(lock, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            await asyncio.sleep(_LOCK_POLL_S)


async def _make_template(
    template_class: TemplateClass, directory: Path, hypervisor: Hypervisor, image: ImageInfo, accel: AccelChoice
) -> WarmTemplate:
    build = directory / "build"
    shutil.rmtree(build, ignore_errors=True)
    for leftover in (SAVED_STATE, DISK, DESCRIPTION):
        (directory / leftover).unlink(missing_ok=True)
    keys = MatchKeys.ensure(directory / KEYS, comment=f"aoe-warm-template-{template_class.digest}")
    reservation = reserve_ports([TEMPLATE_TERRITORY])
    config = TerritoryConfig(
        match_id=f"warm-{template_class.digest}",
        territory_id=TEMPLATE_TERRITORY,
        vcpus=template_class.vcpus,
        memory_mib=template_class.memory_mib,
        directory=build,
        ports=reservation.ports[TEMPLATE_TERRITORY],
        disk_mib=template_class.disk_mib,
        harness_bundle=Path(template_class.harness_bundle) if template_class.harness_bundle else None,
    )
    vm = TerritoryVM(config, hypervisor, keys, image, accel)
    try:
        await vm.boot()
        seconds = await vm.wait_for_ssh(TEMPLATE_SSH_TIMEOUT_S)
        await vm.grow_root_fs()
        await vm.run("sync", 60)
        pinned = keys.pinned_line(LOOPBACK, config.ports.ssh)
        if pinned is None:
            raise AoeError(f"warm-start template {template_class.digest}: no host key was pinned")
        await vm.ssh.close()  # no connection of ours inside the saved network state
        await hypervisor.save(vm.name, directory / f"{SAVED_STATE}.tmp")
    finally:
        await vm.destroy()
        reservation.release()
    (directory / f"{SAVED_STATE}.tmp").replace(directory / SAVED_STATE)
    (build / OVERLAY_NAME).replace(directory / DISK)
    os.chmod(directory / DISK, 0o444)  # every clone's backing file: never written again
    shutil.rmtree(build, ignore_errors=True)
    host_key = pinned.split(" ", 1)[1].strip()
    description = {
        "host_key": host_key,
        "cold_boot_seconds": round(seconds, 1),
        "made_at": time.time(),
        "class": template_class.__dict__,
    }
    (directory / f"{DESCRIPTION}.tmp").write_text(json.dumps(description, indent=2) + "\n")
    (directory / f"{DESCRIPTION}.tmp").replace(directory / DESCRIPTION)
    _remove_superseded(template_class)
    return WarmTemplate(directory, host_key, seconds)


def _remove_superseded(current: TemplateClass) -> None:
    """Templates over an earlier build of the same recipe's base are of no use any more (their disks hold blocks
    of a filesystem that is gone): a few hundred MiB each, removed."""
    for described in templates_dir().glob(f"*/{DESCRIPTION}"):
        try:
            made_for = json.loads(described.read_text())["class"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if made_for.get("recipe_hash") == current.recipe_hash and made_for.get("image_stamp") != current.image_stamp:
            remove_unless_held(described.parent)


@dataclass(frozen=True)
class KeptTemplate:
    """A template folder in the cache, as `aoe doctor` reports it."""

    directory: Path
    size_bytes: int
    usable: bool  # complete, and over an image file this machine still has (else it can never be restored)


def kept_templates() -> list[KeptTemplate]:
    """Every template folder in the cache, with its size, and whether any match could still restore it."""
    root = templates_dir()
    if not root.is_dir():
        return []
    images = _image_stamps()
    kept = []
    for directory in sorted(p for p in root.iterdir() if p.is_dir()):
        size = sum(f.stat().st_size for f in directory.rglob("*") if f.is_file() and not f.is_symlink())
        template = read_template_at(directory)
        kept.append(KeptTemplate(directory, size, template is not None and template.image_stamp in images))
    return kept


def remove_unusable(templates: list[KeptTemplate]) -> list[KeptTemplate]:
    """Remove those of `templates` no match can restore (skipping one a match holds now); what was removed."""
    return [template for template in templates if not template.usable and remove_unless_held(template.directory)]


def _image_stamps() -> set[str]:
    """The stamps of the image files this machine has (the bases and their layers)."""
    stamps = set()
    for image in images_dir().rglob("*.raw"):
        try:
            stamps.add(image_stamp(image))
        except OSError:
            continue
    return stamps
