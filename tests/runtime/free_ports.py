"""Loopback ports for runtime tests that no other suite and no earlier test of this run is using."""

from __future__ import annotations

import os

from aoe_tui.runtime.ports import port_is_free

# Other suites take 27100+ (headless matches) and 31000+; the default 26000+ stays free for real use.
# Each pytest-xdist worker gets its own slice, so two workers never hand out the same block at once.
_WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
_PORT_RANGE = range(28400 + 400 * _WORKER, 28800 + 400 * _WORKER, 2)
_handed_out: set[int] = set()


def free_base_port(territories: int = 1) -> int:
    """A base port with 2*territories consecutive free loopback ports, never handed out twice."""
    for base in _PORT_RANGE:
        wanted = range(base, base + 2 * territories)
        if not set(wanted) & _handed_out and all(port_is_free(p) for p in wanted):
            _handed_out.update(wanted)
            return base
    raise RuntimeError("no free loopback ports for runtime tests")
