"""The harness bundle's build against a registry that refuses (a real npm against a registry on loopback): one
line naming the package, the registry and its error, before any guest is made; nothing half-built is kept."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from aoe_tui.agents.harnesses.bundle import build_bundle, bundles_dir
from aoe_tui.domain.errors import AoeError
from tests.fixture_paths import PROJECT

ARENA = PROJECT / "arenas" / "first-build" / "arena.toml"
EXHIBITION = PROJECT / "arenas" / "first-build" / "fleets" / "harness-exhibition.toml"


class Refusing(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b'{"error":"Not found"}'
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def refusing_registry(tmp_path, monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    monkeypatch.setenv("npm_config_registry", url)
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))  # nothing of the real cache answers
    monkeypatch.setenv("npm_config_fetch_retries", "0")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    yield url
    server.shutdown()


def test_a_package_the_registry_refuses_is_one_line_naming_it(refusing_registry, tmp_path) -> None:
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(
        '[harnesses.codex]\nregistry = "npm"\npackage = "@openai/codex"\nversion = "0.171.0"\n'
        'protocol = "openai-responses"\nexecutable = "codex"\n'
    )
    lines: list[str] = []
    with pytest.raises(AoeError) as error:
        build_bundle(recipe, progress=lines.append)
    message = str(error.value)
    assert "\n" not in message and "@openai/codex@0.171.0 from npm failed" in message and "404" in message, message
    assert any("installing @openai/codex@0.171.0 from npm" in line for line in lines), lines
    assert [p.name for p in bundles_dir().iterdir() if not p.name.endswith(".lock")] == []  # nothing half-built


def test_aoe_run_of_a_harness_fleet_stops_before_any_guest_with_that_line(refusing_registry, tmp_path) -> None:
    (tmp_path / "providers.toml").write_text(
        '[providers.local]\nopenai_base_url = "http://127.0.0.1:9/v1"\nanthropic_base_url = "http://127.0.0.1:9"\n'
        'models = ["z-ai/glm-5.2"]\n'
    )
    env = {**os.environ, "AOE_PROVIDERS_FILE": str(tmp_path / "providers.toml")}
    result = subprocess.run(
        [sys.executable, "-m", "aoe_tui.cli.main", "run", str(ARENA), "--agents", str(EXHIBITION), "--headless",
         "--output", str(tmp_path / "match")],
        capture_output=True, text=True, cwd=PROJECT, timeout=120, env=env,
    )  # fmt: skip
    errors = [line for line in result.stderr.splitlines() if line.startswith("aoe:")]
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert len(errors) == 1 and "@anthropic-ai/claude-code@2.1.332 from npm failed" in errors[0], result.stderr[-2000:]
    assert not list(Path(tmp_path / "match").glob("territories/*/overlay.qcow2")), "no guest disk was made"


def test_a_new_bundle_removes_earlier_recipes_bundles_and_abandoned_builds(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = bundles_dir()
    for stale in ("0351159943ee9749", ".build-0351159943ee9749-999999"):
        (root / stale).mkdir(parents=True)
        (root / stale / "bundle.ext4").write_bytes(b"\0" * 4096)
    (root / "notes").mkdir()  # not a bundle: left alone
    recipe = tmp_path / "recipe.toml"
    recipe.write_text("# no harness: an empty bundle\n")
    said: list[str] = []
    bundle = build_bundle(recipe, progress=said.append)
    assert bundle.image.is_file() and bundle.image.parent.parent == root
    assert sorted(p.name for p in root.iterdir() if p.is_dir()) == sorted([bundle.image.parent.name, "notes"])
    removed = [line for line in said if line.startswith("harness bundle: removed")]
    assert len(removed) == 2 and any("0351159943ee9749 (0 MiB)" in line for line in removed), said
