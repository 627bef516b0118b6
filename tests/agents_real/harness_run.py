"""Run the harness the way the controller does: a process with the adapter environment."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aoe_tui.domain.transcript import Transcript

DISTINCTIVE_KEY = "sk-aoe-test-9f3c2b7e1d4a6f80-DO-NOT-LEAK"
INSTRUCTION = """# Contract

Serve HTTP on port 8080 from /opt/builder/app.py run by the enabled unit builder-app.service:
GET /health -> 200 `ready`; PUT /records/<id> stores the exact body -> 204; GET /records/<id> -> 200 with
exactly those bytes, 404 if unknown. Records must survive a service restart and a host reboot.
"""


@dataclass
class GuestAccess:
    host: str
    ssh_port: int
    key: Path
    known_hosts: Path


@dataclass
class HarnessFiles:
    directory: Path

    def path(self, name: str) -> Path:
        return self.directory / name

    def json(self, name: str) -> Any:
        return json.loads(self.path(name).read_text())

    def trace(self) -> list[dict[str, Any]]:
        path = self.path("tool_trace.jsonl")
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def result(self) -> dict[str, Any]:
        return self.json("result.json")

    def transcript(self) -> Transcript:
        return Transcript.model_validate_json(self.path("transcript.json").read_text())


def harness_env(directory: Path, base_url: str, guest: GuestAccess, **extra: str) -> dict[str, str]:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "instruction.md").write_text(INSTRUCTION)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("AOE_", "OPENAI_"))}
    env.update(
        {
            "AOE_AGENT_ID": "real-builder",
            "AOE_TERRITORY_ID": "builder-one",
            "AOE_TERRITORY_HOST": guest.host,
            "AOE_SSH_PORT": str(guest.ssh_port),
            "AOE_SSH_KEY": str(guest.key),
            "AOE_KNOWN_HOSTS": str(guest.known_hosts),
            "AOE_MODEL": "scripted/builder",
            "AOE_REASONING_EFFORT": "high",
            "AOE_INSTRUCTION_FILE": str(directory / "instruction.md"),
            "AOE_RESULT_FILE": str(directory / "result.json"),
            "AOE_USAGE_FILE": str(directory / "usage.json"),
            "AOE_STDOUT_FILE": str(directory / "stdout.log"),
            "AOE_STDERR_FILE": str(directory / "stderr.log"),
            "AOE_OPENAI_BASE_URL": base_url,
            "AOE_OPENAI_API_KEY": DISTINCTIVE_KEY,
            "AOE_OPENAI_RETRY_FIRST_DELAY_SECONDS": "0.2",
            "XDG_CONFIG_HOME": str(directory / "no-config"),
        }
    )
    env.update(extra)
    return env


async def start_harness(env: dict[str, str]) -> asyncio.subprocess.Process:
    directory = Path(env["AOE_RESULT_FILE"]).parent
    stdout = open(directory / "stdout.log", "ab")  # noqa: SIM115  (handed to the child, closed below)
    stderr = open(directory / "stderr.log", "ab")  # noqa: SIM115  (likewise)
    try:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "aoe_tui.agents.openai_harness",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            env=env,
            start_new_session=True,
        )
    finally:
        stdout.close()
        stderr.close()


async def run_harness(env: dict[str, str], timeout: float = 300) -> int:
    process = await start_harness(env)
    try:
        return await asyncio.wait_for(process.wait(), timeout)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise AssertionError(
            f"harness did not finish within {timeout} s; stderr: {(Path(env['AOE_STDERR_FILE'])).read_text()[-2000:]}"
        ) from None


def assert_key_absent(directory: Path) -> None:
    for path in directory.rglob("*"):
        if path.is_file():
            assert DISTINCTIVE_KEY not in path.read_text(errors="replace"), f"provider key leaked into {path}"
