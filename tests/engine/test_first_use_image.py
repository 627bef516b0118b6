"""A match on an empty cache builds its image first (as `aoe demo` does), its progress told as setup lines:
`aoe run`, `aoe series`, `aoe cup` and `aoe benchmark` all boot through `LibvirtProvider`."""

from __future__ import annotations

import threading

import pytest

from aoe_tui.domain.errors import AoeError
from aoe_tui.engine import libvirt_host
from aoe_tui.engine.clock import MatchClock
from aoe_tui.engine.libvirt_host import LibvirtProvider
from aoe_tui.engine.match_dir import MatchDirectory
from aoe_tui.engine.recorder import MatchRecorder, Progress
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.testing.clock import ManualSource
from tests.fixture_paths import PROJECT


@pytest.mark.parametrize(
    ("arena", "image_names"), [("first-build", {"debian-bookworm"}), ("first-contact", {"first-contact"})]
)
async def test_the_provider_builds_a_missing_image_with_progress_instead_of_stopping(
    arena, image_names, tmp_path, monkeypatch
) -> None:
    loop_thread = threading.current_thread()
    asked: list[set] = []

    def build(names, progress):
        asked.append(names)
        progress("mmdebstrap bookworm (40 packages)")  # from the build's own thread, as the real one
        raise AoeError("the build stops here")

    monkeypatch.setattr(libvirt_host, "ensure_image", build)
    recorder = MatchRecorder(MatchClock(ManualSource()))
    told: list[tuple[str, str, bool]] = []
    recorder.subscribe(
        lambda u: (
            told.append((u.stage, u.message, threading.current_thread() is loop_thread))
            if isinstance(u, Progress)
            else None
        )
    )
    manifest = load_manifest(PROJECT / "arenas" / arena / "arena.toml")
    with pytest.raises(AoeError, match="the build stops here"):
        await LibvirtProvider().boot(manifest, MatchDirectory(tmp_path / "match"), recorder, recorder.clock)
    assert asked == [image_names]
    assert ("image", "mmdebstrap bookworm (40 packages)", True) in told
