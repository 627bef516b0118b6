"""Fixtures of the runtime tests: a real (cached) guest image and the libvirt daemons.

VM tests share booted guests per module because every TCG boot costs ~20 s of
a 2-core machine that other suites use too.
"""

from __future__ import annotations

import subprocess

import pytest

from aoe_tui.runtime.image import ImageInfo, build_image
from tests.fixture_paths import PROJECT


@pytest.fixture(scope="session")
def libvirt_services() -> None:
    subprocess.run([str(PROJECT / "scripts" / "services")], check=True)


@pytest.fixture(scope="session")
def guest_image(libvirt_services: None) -> ImageInfo:
    """The cached guest image, built on first use (about 45 s cold)."""
    return build_image()
