"""The real-guest modules' fixed loopback ports lie below the kernel's ephemeral range.

A port in that range may be taken at any moment as the source port of some client's connection (the
referee's checks, a continuity monitor's samples, an SSH session): QEMU then cannot listen there and the
whole module's race aborts ("port 33100 ... is already in use", seen once in CI)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.fixture_paths import PROJECT

FIXED = re.compile(r"^(?:REMOTE_)?BASE_PORT = (\d+)", re.MULTILINE)
SPAN = 200  # the widest range a module gives itself


def ephemeral_start() -> int:
    """The first port the kernel hands out as a source port (Linux's default when it cannot be read)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def test_every_fixed_base_port_is_below_the_ephemeral_range() -> None:
    found = {
        path.relative_to(PROJECT): int(port)
        for path in (PROJECT / "tests").rglob("test_*.py")
        for port in FIXED.findall(path.read_text())
    }
    assert len(found) >= 10, found  # the real-guest modules were found
    start = min(ephemeral_start(), 32768)
    assert {str(path): port for path, port in found.items() if port + SPAN > start} == {}
