"""Running one milestone verifier script.

Verifiers are plain programs (`verify/*.sh`), so anyone can read what the
referee checks. Their exit status is a contract: 0 and an evidence JSON is a
pass, 1 is a failed check (the player's fault, explained on stderr), anything
else means the verifier itself broke (an arena fault, never blamed on the
player). Each runs in its own process group so a timeout kills curl, ssh and
whatever else it started. Its output is read as it comes into bounded
head+tail buffers, and a verifier that prints more than `PIPE_CAP_BYTES`
(say, echoing a flooding guest) is killed: the check failed, the referee did
not grow.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from aoe_tui.agents.environment import basic_env
from aoe_tui.domain.head_tail import HeadTail

FAILED_CHECK_EXIT = 1
PIPE_CAP_BYTES = 1024 * 1024
EVIDENCE_CAP_BYTES = 64 * 1024
_DETAIL_LIMIT = 400
_READ_CHUNK = 64 * 1024
_REAP_SECONDS = 5

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
    _empty(evidence_file)
    # Never the operator's secrets; AOE_PYTHON runs the project's host programs (the load generator).
    full_env = {**basic_env(), "AOE_PYTHON": sys.executable, **env, "AOE_EVIDENCE_FILE": str(evidence_file)}
    try:
        process = await asyncio.create_subprocess_exec(
            str(script),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=full_env,
            start_new_session=True,
        )
    except OSError as error:
        return VerifierOutcome("broken", detail=f"cannot execute verifier {script.name}: {error.strerror}")
    stdout, stderr = HeadTail(), HeadTail()
    try:
        await asyncio.wait_for(_drain(process, stdout, stderr), timeout)
    except _CapReached:
        await _reap(process)
        return VerifierOutcome(
            "failed",
            detail=f"{script.name} printed more than {PIPE_CAP_BYTES // 1024} KiB and was "
            f"killed (a flood from the guest?): {last_line(stderr.text()) or ''}",
        )
    except TimeoutError:
        await _reap(process)
        return VerifierOutcome("timeout", detail=f"{script.name} did not finish within {timeout:g} s")
    except asyncio.CancelledError:
        _kill_group(process.pid)
        raise
    finally:
        _kill_group(process.pid)  # nothing it started may outlive it
    return _judge(script, process.returncode, stdout.text(), stderr.text(), evidence_file)


def _empty(evidence_file: Path) -> None:
    """Make sure no earlier run's evidence is read as this run's: an empty file is "no evidence JSON".

    Emptied, not deleted: an ext4 without a journal passes over inodes freed recently when it allocates one,
    scanning its inode tables, so deleting one evidence file a run made every file the referee created next
    cost several times more (benchmarks/referee_overhead.py).
    """
    try:
        os.truncate(evidence_file, 0)
    except FileNotFoundError:
        pass


async def _drain(process: asyncio.subprocess.Process, stdout: HeadTail, stderr: HeadTail) -> None:
    """Read both pipes to EOF into their buffers and wait for the exit; raise _CapReached past the cap."""

    async def pump(reader: asyncio.StreamReader, buffer: HeadTail) -> None:
        while chunk := await reader.read(_READ_CHUNK):
            buffer.add(chunk)
            if stdout.total + stderr.total > PIPE_CAP_BYTES:
                raise _CapReached()

    out, err = process.stdout, process.stderr
    assert out is not None and err is not None, "run_verifier starts the verifier with both pipes"
    pumps = [asyncio.ensure_future(pump(out, stdout)), asyncio.ensure_future(pump(err, stderr))]
    try:
        await asyncio.gather(*pumps)
    finally:
        for task in pumps:
            task.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)
    await process.wait()


class _CapReached(Exception):
    """The verifier printed more than PIPE_CAP_BYTES."""


def _judge(script: Path, code: int | None, stdout: str, stderr: str, evidence_file: Path) -> VerifierOutcome:
    detail = last_line(stderr) or last_line(stdout)
    if code == 0:
        try:
            with open(evidence_file, "rb") as handle:
                raw = handle.read(EVIDENCE_CAP_BYTES + 1)
            if len(raw) > EVIDENCE_CAP_BYTES:
                return VerifierOutcome(
                    "broken", detail=f"{script.name} wrote more than {EVIDENCE_CAP_BYTES // 1024} KiB of evidence"
                )
            return VerifierOutcome("passed", evidence=json.loads(raw))
        except (OSError, ValueError):
            return VerifierOutcome("broken", detail=f"{script.name} exited 0 but wrote no evidence JSON")
    if code == FAILED_CHECK_EXIT:
        return VerifierOutcome("failed", detail=detail or f"{script.name} failed without saying why")
    reason = f"killed by signal {-code}" if code is not None and code < 0 else f"exit {code}"
    return VerifierOutcome("broken", detail=f"{script.name} crashed ({reason}): {detail or 'no output'}")


async def _reap(process: asyncio.subprocess.Process) -> None:
    """Kill the verifier's group, then read its pipes to EOF and wait for it.

    The pumps were cancelled with data still buffered, so the pipe transports may
    be paused; asyncio only reports the exit once both pipes are closed, so
    without this discard `wait()` can hang forever.
    """
    _kill_group(process.pid)

    async def discard(reader: asyncio.StreamReader | None) -> None:
        while reader is not None and await reader.read(_READ_CHUNK):
            pass

    try:
        await asyncio.wait_for(
            asyncio.gather(discard(process.stdout), discard(process.stderr), process.wait()), _REAP_SECONDS
        )
    except TimeoutError:
        pass  # something kept a pipe open outside the group; the verdict stands


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
