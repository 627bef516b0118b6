"""The optional Nix path: a clear way out without nix, the exact build with it."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.nixos import build_nixos_config

PROJECT = Path(__file__).resolve().parents[2]
REFERENCE = "./arenas/first-build#nixosConfigurations.builder-one.config.system.build.vm"


def test_without_nix_the_error_names_the_debian_alternative(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(AoeError) as caught:
        build_nixos_config(REFERENCE, tmp_path / "result", tmp_path)
    assert "nix" in str(caught.value) and "aoe image build" in str(caught.value)


def _fake_nix(bin_dir: Path, body: str) -> None:
    bin_dir.mkdir()
    script = bin_dir / "nix"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)


def test_with_nix_it_runs_a_flake_build_into_the_out_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "store-path"
    store.mkdir()
    _fake_nix(tmp_path / "bin", f'echo "$@" > {tmp_path}/args; ln -s {store} "$6"')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    result = build_nixos_config(REFERENCE, tmp_path / "result", tmp_path)
    assert result == store.resolve()
    args = (tmp_path / "args").read_text().split()
    assert args[:5] == ["--extra-experimental-features", "nix-command", "flakes", "build", REFERENCE]


def test_failed_nix_build_reports_its_last_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_nix(tmp_path / "bin", "echo 'error: flake has no attribute builder-nine' >&2; exit 1")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(AoeError, match="no attribute builder-nine"):
        build_nixos_config(REFERENCE, tmp_path / "result", tmp_path)


def test_nix_files_describe_the_same_guest() -> None:
    guest = (PROJECT / "nix" / "guest.nix").read_text()
    for needle in (
        "builder-app",
        "/opt/builder/app.py",
        'Restart = "always"',
        "ConditionPathExists",
        "PasswordAuthentication = false",
        "python3",
        "sqlite",
        "curl",
        "jq",
    ):
        assert needle in guest
    flake = (PROJECT / "nix" / "flake.nix").read_text()
    assert "nixosModules.aoe-guest" in flake and "nixosConfigurations" in flake
    for text in (guest, flake):  # syntactic sanity without nix: balanced brackets
        stripped = re.sub(r"#.*|''(?:.|\n)*?''|\"(?:\\.|[^\"\\])*\"", "", text)
        for open_, close in ("{}", "[]", "()"):
            assert stripped.count(open_) == stripped.count(close)
