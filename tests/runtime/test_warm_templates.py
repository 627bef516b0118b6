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
    read_template,
    templates_dir,
)
from aoe_tui.runtime.warm_template import _remove_superseded, kept_templates


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path


def _class(stamp: str = "1:100:5", recipe: str = "recipe-a", memory_mib: int = 768) -> TemplateClass:
    return TemplateClass(recipe, stamp, "qemu", 1, memory_mib, 4096, 7_002_000)


def _made(template_class: TemplateClass, *, without: str | None = None) -> Path:
    directory = templates_dir() / template_class.digest
    directory.mkdir(parents=True)
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
    ]
    assert len({base.digest, *(c.digest for c in changed)}) == 1 + len(changed)


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
