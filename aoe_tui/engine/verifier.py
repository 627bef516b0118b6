"""Running one milestone verifier script.

Verifiers are plain programs (`verify/*.sh`), so anyone can read what the
referee checks. Their exit status is a contract: 0 and an evidence JSON is a
pass, 1 is a failed check (the player's fault, explained on stderr), anything
else means the verifier itself broke (an arena fault, never blamed on the
player). Each runs in its own process group so a timeout kills curl, ssh and
whatever else it started.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from aoe_tui.agents.environment import basic_env

FAILED_CHECK_EXIT = 1
_DETAIL_LIMIT = 400

Verdict = Literal["passed", "failed", "timeout", "broken"]


@dataclass(frozen=True)
class VerifierOutcome:
    verdict: Verdict
    evidence: Any = None
    detail: str | None = None

    @property
    def passed(self) -> bool:
        return self.verdict == "passed"


def last_line(text: str) -> str | None:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:_DETAIL_LIMIT] if lines else None


async def run_verifier(script: Path, env: dict[str, str], timeout: float, evidence_file: Path) -> VerifierOutcome:
    evidence_file.parent.mkdir(parents=True, exist_ok=True)
    evidence_file.unlink(missing_ok=True)
    full_env = {**basic_env(), **env, "AOE_EVIDENCE_FILE": str(evidence_file)}  # never the operator's secrets
    try:
        process = await asyncio.create_subprocess_exec(
            str(script), stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=full_env, start_new_session=True)
    except OSError as error:
        return VerifierOutcome("broken", detail=f"cannot execute verifier {script.name}: {error.strerror}")
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
    except asyncio.TimeoutError:
        _kill_group(process.pid)
        await process.wait()
        return VerifierOutcome("timeout", detail=f"{script.name} did not finish within {timeout:g} s")
    except asyncio.CancelledError:
        _kill_group(process.pid)
        raise
    finally:
        _kill_group(process.pid)  # nothing it started may outlive it
    return _judge(script, process.returncode, stdout.decode(errors="replace"), stderr.decode(errors="replace"),
                  evidence_file)


def _judge(script: Path, code: int | None, stdout: str, stderr: str, evidence_file: Path) -> VerifierOutcome:
    detail = last_line(stderr) or last_line(stdout)
    if code == 0:
        try:
            return VerifierOutcome("passed", evidence=json.loads(evidence_file.read_text()))
        except (OSError, ValueError):
            return VerifierOutcome("broken", detail=f"{script.name} exited 0 but wrote no evidence JSON")
    if code == FAILED_CHECK_EXIT:
        return VerifierOutcome("failed", detail=detail or f"{script.name} failed without saying why")
    reason = f"killed by signal {-code}" if code is not None and code < 0 else f"exit {code}"
    return VerifierOutcome("broken", detail=f"{script.name} crashed ({reason}): {detail or 'no output'}")


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
