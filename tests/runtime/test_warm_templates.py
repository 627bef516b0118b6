"""Warm-start templates on disk (no guests): what makes one complete, and which are superseded."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest

from aoe_tui.runtime.doctor import warm_templates_check
from aoe_tui.runtime.keys import MatchKeys
from aoe_tui.runtime.paths import images_dir
from aoe_tui.runtime.warm_start import (
    DESCRIPTION,
    DISK,
    KEYS,
    SAVED_STATE,
    TemplateClass,
    image_stamp,
    open_template_lock,
    read_template,
    templates_dir,
)
from aoe_tui.runtime.warm_template import _remove_superseded, ensure_template, kept_templates


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path


def _class(stamp: str = "1:100:5", recipe: str = "recipe-a", memory_mib: int = 768) -> TemplateClass:
    return TemplateClass(recipe, stamp, "qemu", 1, memory_mib, 4096, 7_002_000)


def _made(template_class: TemplateClass, *, without: str | None = None) -> Path:
    directory = templates_dir() / template_class.digest
    directory.mkdir(parents=True)
    return _made_in(directory, template_class, without)


def _made_in(directory: Path, template_class: TemplateClass | None = None, without: str | None = None) -> Path:
    template_class = template_class or _class()
    MatchKeys.ensure(directory / KEYS)
    (directory / SAVED_STATE).write_bytes(b"state")
    (directory / DISK).write_bytes(b"disk")
    description = {"host_key": "ssh-ed25519 AAAA", "cold_boot_seconds": 19.0, "class": template_class.__dict__}
    (directory / DESCRIPTION).write_text(json.dumps(description))
    if without is not None:
        (directory / without).unlink()
    return directory


def test_a_template_is_read_only_when_complete() -> None:
    assert read_template(_class()) is None
    _made(_class())
    template = read_template(_class())
    assert template is not None and template.host_key == "ssh-ed25519 AAAA" and template.cold_boot_seconds == 19.0
    for index, missing in enumerate((SAVED_STATE, DISK, DESCRIPTION)):
        incomplete = _class(memory_mib=512 + index)
        _made(incomplete, without=missing)
        assert read_template(incomplete) is None, missing


def test_every_field_of_the_class_is_in_its_digest() -> None:
    base = _class()
    changed = [
        TemplateClass("recipe-b", *list(base.__dict__.values())[1:]),
        _class(stamp="2:100:5"),
        TemplateClass(base.recipe_hash, base.image_stamp, "kvm", 1, 768, 4096, 7_002_000),
        TemplateClass(base.recipe_hash, base.image_stamp, "qemu", 2, 768, 4096, 7_002_000),
        _class(memory_mib=1024),
        TemplateClass(base.recipe_hash, base.image_stamp, "qemu", 1, 768, 8192, 7_002_000),
        TemplateClass(base.recipe_hash, base.image_stamp, "qemu", 1, 768, 4096, 8_000_000),
        TemplateClass(base.recipe_hash, base.image_stamp, "qemu", 1, 768, 4096, 7_002_000, "/cache/bundle.ext4"),
    ]
    assert len({base.digest, *(c.digest for c in changed)}) == 1 + len(changed)


def test_a_class_without_a_harness_bundle_keeps_the_digest_it_had_before_harness_guests() -> None:
    import hashlib
    import json

    from aoe_tui.runtime.warm_start import FORMAT

    base = _class()
    before = {key: value for key, value in base.__dict__.items() if key != "harness_bundle"}
    old = hashlib.sha256(json.dumps({**before, "format": FORMAT}, sort_keys=True).encode()).hexdigest()[:16]
    assert base.digest == old


def test_templates_over_an_earlier_build_of_the_same_recipe_are_removed() -> None:
    old, other_recipe, current = _class("1:100:5"), _class("9:9:9", recipe="recipe-b"), _class("2:100:6")
    old_dir, other_dir, current_dir = _made(old), _made(other_recipe), _made(current)
    _remove_superseded(current)
    assert not old_dir.exists() and other_dir.exists() and current_dir.exists()


def test_doctor_lists_templates_and_clean_removes_only_those_no_match_can_restore() -> None:
    base = images_dir() / "recipe-a" / "base.raw"
    base.parent.mkdir(parents=True)
    base.write_bytes(b"\0" * 4096)
    usable = _made(_class(image_stamp(base)))
    rebuilt = _made(_class("1:1:1", memory_mib=1024))  # over an image file that is gone
    cut_short = _made(_class(image_stamp(base), memory_mib=512), without=DESCRIPTION)
    being_made = _made(_class("2:2:2", memory_mib=2048), without=SAVED_STATE)
    check = warm_templates_check()
    assert check.status == "warn" and check.fix == "aoe doctor --clean", check
    assert check.detail.startswith(f"4 in {templates_dir()}, ") and "of which 3 no match can restore" in check.detail
    maker = os.open(being_made.with_suffix(".lock"), os.O_CREAT | os.O_RDWR)
    fcntl.flock(maker, fcntl.LOCK_EX)  # a match making that template holds its lock
    try:
        cleaned = warm_templates_check(clean=True)
    finally:
        os.close(maker)
    assert usable.exists() and being_made.exists() and not rebuilt.exists() and not cut_short.exists()
    assert cleaned.status == "warn" and "removed 2 no match could restore" in cleaned.detail, cleaned
    assert [t.directory for t in kept_templates() if t.usable] == [usable]


async def _lease(template_class: TemplateClass):
    """A match's lease on an existing template (never made here: no hypervisor is needed, or given)."""
    return await ensure_template(template_class, None, None, None)  # type: ignore[arg-type]


async def test_matches_share_a_template_and_a_spoiled_one_goes_only_when_no_match_holds_it() -> None:
    directory = _made(_class())
    first, second = await _lease(_class()), await _lease(_class())  # the second did not wait for the first
    assert first.template.directory == second.template.directory == directory
    first.spoiled = True
    assert first.release() is False and directory.exists(), "another match still restores from it"
    assert first.release() is False  # letting go twice is letting go once
    second.spoiled = True
    assert second.release() is True and not directory.exists()


async def test_nothing_removes_a_template_a_match_holds() -> None:
    current, older = _class("2:100:6"), _class("1:100:5")
    older_dir = _made(older)
    held = await _lease(older)  # a match started before the image was rebuilt is still running
    _made(current)
    _remove_superseded(current)
    assert older_dir.exists()
    assert held.release() is False
    _remove_superseded(current)
    assert not older_dir.exists()


async def test_a_template_being_made_is_waited_for_then_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from aoe_tui.runtime import warm_template

    monkeypatch.setattr(warm_template, "_LOCK_POLL_S", 0.01)
    directory = templates_dir() / _class().digest
    directory.mkdir(parents=True)
    maker = open_template_lock(directory)
    fcntl.flock(maker, fcntl.LOCK_EX)  # another process is making it
    waiting = asyncio.ensure_future(_lease(_class()))
    await asyncio.sleep(0.1)
    assert not waiting.done()
    _made_in(directory)
    fcntl.flock(maker, fcntl.LOCK_UN)
    os.close(maker)
    lease = await asyncio.wait_for(waiting, 5)
    assert lease.template.directory == directory
    lease.release()
