"""Runtime test plumbing: a real (cached) guest image, libvirt daemons and free ports.

VM tests share booted guests per module because every TCG boot costs ~20 s of
a 2-core machine that other suites use too.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from aoe_tui.runtime.image import ImageInfo, build_image
from aoe_tui.runtime.ports import port_is_free

PROJECT = Path(__file__).resolve().parents[2]
# Other suites take 27100+ (headless matches) and 31000+; the default 26000+ stays free for real use.
_PORT_RANGE = range(28400, 30000, 2)
_handed_out: set[int] = set()


def free_base_port(territories: int = 1) -> int:
    """A base port with 2*territories consecutive free loopback ports, never handed out twice."""
    for base in _PORT_RANGE:
        wanted = range(base, base + 2 * territories)
        if not set(wanted) & _handed_out and all(port_is_free(p) for p in wanted):
            _handed_out.update(wanted)
            return base
    raise RuntimeError("no free loopback ports for runtime tests")


@pytest.fixture(scope="session")
def libvirt_services() -> None:
    subprocess.run([str(PROJECT / "scripts" / "services")], check=True)


@pytest.fixture(scope="session")
def guest_image(libvirt_services: None) -> ImageInfo:
    """The cached guest image, built on first use (about 45 s cold)."""
    return build_image()
