"""Build a manifest's `nixos_config` flake reference with Nix, when Nix is there.

Nix is optional: the Debian image is the default guest and needs nothing but
Debian packages, so a missing `nix` is an error that names that alternative.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from aoe_tui.domain.errors import AoeError

_FLAKE_FEATURES = "nix-command flakes"


def nix_build_command(nix: str, reference: str, out_link: Path) -> list[str]:
    return [
        nix,
        "--extra-experimental-features",
        _FLAKE_FEATURES,
        "build",
        reference,
        "--out-link",
        str(out_link),
        "--print-build-logs",
    ]


def build_nixos_config(reference: str, out_link: Path, cwd: Path) -> Path:
    """`nix build` the flake output `reference` (relative to `cwd`); returns the store path."""
    nix = shutil.which("nix")
    if nix is None:
        raise AoeError(
            f"nixos_config {reference}: `nix` is not on PATH; install Nix, or give the territory "
            '`image = "debian-bookworm"` (the Debian guest built by `aoe image build`)'
        )
    result = subprocess.run(nix_build_command(nix, reference, out_link), cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        raise AoeError(
            f"nixos_config {reference}: nix build failed: {lines[-1] if lines else f'exit {result.returncode}'}"
        )
    if not out_link.exists():
        raise AoeError(f"nixos_config {reference}: nix build succeeded but left no result at {out_link}")
    return out_link.resolve()
