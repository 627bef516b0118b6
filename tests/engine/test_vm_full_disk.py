"""The match folder's filesystem filling up mid-race on real guests (issue 31): a loop-mounted ext4 just big
enough for the guests' disks, its free bytes taken once the agents run. `aoe run` stops with one line naming
the full filesystem, no traceback, a non-zero exit; no guest is left; what was written replays."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from aoe_tui.runtime.image import image_mib, require_image
from aoe_tui.runtime.overlay import ROOM_MARGIN_MIB
from aoe_tui.store.saved_match import load_match
from tests.engine.vm_cli import domains_of, only_match_in, short_arena, start_headless, wait_for_line
from tests.fixture_paths import PROJECT

pytestmark = pytest.mark.vm
MATCH_TIMEOUT_S = 900


@pytest.fixture
def small_disk(tmp_path):
    """An ext4 holding two guests' disks (the image's size: its class asks for less), the runtime's margin and
    ext4's own overhead, mounted at tmp_path/mnt."""
    image, mount = tmp_path / "disk.img", tmp_path / "mnt"
    mount.mkdir()
    guest_mib = image_mib(require_image())
    subprocess.run(["truncate", "-s", f"{2 * guest_mib + ROOM_MARGIN_MIB + 512}M", str(image)], check=True)
    subprocess.run(["mkfs.ext4", "-q", "-m", "0", str(image)], check=True)
    subprocess.run(["mount", "-o", "loop", str(image), str(mount)], check=True)
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_match_folder_mid_race_is_one_line_and_strands_nothing(tmp_path, small_disk):
    subprocess.run([str(PROJECT / "scripts" / "services")], check=True)
    arena = short_arena(tmp_path / "arena", duration_seconds=120)
    process = start_headless(arena, small_disk)
    seen = wait_for_line(process, "started adapter", timeout=MATCH_TIMEOUT_S)
    free = shutil.disk_usage(small_disk).free
    subprocess.run(["fallocate", "-l", str(free), str(small_disk / "ballast")], check=False)
    subprocess.run(["dd", "if=/dev/zero", f"of={small_disk / 'crumbs'}", "bs=4k"], capture_output=True)
    output, _ = process.communicate(timeout=MATCH_TIMEOUT_S)
    output = "".join(seen) + output
    assert process.returncode != 0, output[-3000:]
    assert "Traceback" not in output, output[-4000:]
    full = [line for line in output.splitlines() if f"the file system at {small_disk}" in line]
    assert len(full) == 1 and full[0].startswith("aoe: "), output[-3000:]
    match_dir = only_match_in(small_disk)
    assert domains_of(match_dir) == []
    match = load_match(match_dir)  # what `aoe replay` opens
    # Aborted when the log is refused first; void when the guests, paused by their full disks, are lost first (the
    # log then refuses a later event); running when the log ends at its last whole event.
    assert match.events and match.world.match_state in ("running", "aborted", "void")
    aborts = [e for e in match.events if e.kind == "match_state_changed" and e.to_json()["to"] == "aborted"]
    assert len(aborts) <= 1
    # A guest lost to its full disk is named as paused by it, not as a VM that stopped.
    lost = [
        e.to_json()["detail"]
        for e in match.events
        if e.kind == "milestone_failed" and "the VM " in (e.to_json().get("detail") or "")
    ]
    assert all("the VM was paused by a failing disk write" in detail for detail in lost), lost
