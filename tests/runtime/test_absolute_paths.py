"""Match paths handed to libvirtd are absolute: it resolves relative ones in its own working directory.

The README's demo writes to the relative default `./matches/...`; with a
relative path libvirtd could not open the console log and nothing booted.
"""

from pathlib import Path

from aoe_tui.engine.match_dir import MatchDirectory
from aoe_tui.runtime.match_runtime import MatchRuntime, TerritorySpec


def test_match_directory_is_absolute_whatever_it_was_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    directory = MatchDirectory(Path("matches") / "first-build-x")
    assert directory.root == tmp_path / "matches" / "first-build-x"
    assert directory.territory_directory("builder-one").is_absolute()


def test_runtime_keeps_every_guest_path_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runtime = MatchRuntime(Path("matches/m"), "m-1", [TerritorySpec("builder-one", 1, 512)])
    assert runtime.match_dir == tmp_path / "matches" / "m"
