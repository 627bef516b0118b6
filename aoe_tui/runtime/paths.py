"""Where the runtime keeps machine-wide state.

Everything cached (base images, `aoe vm` state) lives under one directory so a
user can see and delete it in one place; XDG_CACHE_HOME is honoured so tests
and CI can point it elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "aoe_tui"


def images_dir() -> Path:
    return cache_root() / "images"


def vms_dir() -> Path:
    return cache_root() / "vms"
