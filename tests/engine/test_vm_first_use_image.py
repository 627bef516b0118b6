"""The unattended commands on a machine whose cache is empty: `aoe run`, `aoe series` and `aoe benchmark` of a
conquest arena (First Contact, on its image layer) build what they need first, with progress, instead of
stopping with "guest image missing ... build it with `aoe image build`".

One empty cache serves the three: `aoe run` builds the base image (mmdebstrap, minutes) and the layer, the two
others find them current. Each command is stopped (SIGTERM) once its guests answer SSH: the point is that they
get there, not the race.
"""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from aoe_tui.engine.stop_signals import exit_status
from tests.engine.vm_cli import AOE, wait_for_line
from tests.fixture_paths import PROJECT

pytestmark = pytest.mark.vm
ARENA = PROJECT / "arenas" / "first-contact" / "arena.toml"
BUILD_TIMEOUT_S = 3600  # the base image and the layer, both from Debian's archive, under a loaded machine


def start(cache, cwd, *command: str) -> subprocess.Popen:
    return subprocess.Popen(
        [*AOE, *command],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": str(PROJECT), "XDG_CACHE_HOME": str(cache)},
    )


def up_then_stopped(process: subprocess.Popen, timeout: float) -> list[str]:
    """The command's lines until its guests answer SSH, then SIGTERM: it must stop as a stopped match does."""
    lines = wait_for_line(process, "SSH preflight passed", timeout=timeout)
    process.send_signal(signal.SIGTERM)
    rest, _ = process.communicate(timeout=300)
    assert process.returncode == exit_status(signal.SIGTERM), "".join(lines)[-2000:] + rest[-2000:]
    return lines


def test_run_series_and_benchmark_build_the_image_and_layer_on_first_use(tmp_path) -> None:
    subprocess.run([str(PROJECT / "scripts" / "services")], check=True)
    cache = tmp_path / "cache"
    cache.mkdir()
    ran = "".join(up_then_stopped(start(cache, tmp_path, "run", str(ARENA), "--headless"), BUILD_TIMEOUT_S))
    assert "image missing" not in ran and "layer first-contact missing" not in ran
    assert "mmdebstrap" in ran and "layer first-contact" in ran and " built in " in ran, ran[-3000:]
    suite = tmp_path / "suite.toml"
    suite.write_text(f'[suite]\nid = "first-use"\n\n[[arenas]]\nmanifest = "{ARENA}"\nrounds = 1\n')
    for command in (["series", str(ARENA), "--rounds", "1"], ["benchmark", str(suite)]):
        told = "".join(up_then_stopped(start(cache, tmp_path, *command), 1200))
        assert "layer first-contact" in told and "is current" in told, told[-3000:]
