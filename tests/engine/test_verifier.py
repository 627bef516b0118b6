"""The verifier contract: exit codes, evidence, readable details, and timeouts that kill everything."""

from __future__ import annotations

import os
import time
from pathlib import Path

from aoe_tui.engine.verifier import run_verifier


def script(tmp_path, body: str):
    path = tmp_path / "check.sh"
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(0o755)
    return path


async def test_exit_zero_with_evidence_passes(tmp_path):
    check = script(tmp_path, 'echo \'{"health": "ready"}\' > "$AOE_EVIDENCE_FILE"\n')
    outcome = await run_verifier(check, {}, 5, tmp_path / "evidence.json")
    assert outcome.passed and outcome.evidence == {"health": "ready"}


async def test_exit_one_fails_with_the_last_stderr_line(tmp_path):
    check = script(tmp_path, 'echo "trying" >&2\necho "GET /health returned 503, expected 200" >&2\nexit 1\n')
    outcome = await run_verifier(check, {}, 5, tmp_path / "evidence.json")
    assert outcome.verdict == "failed"
    assert outcome.detail == "GET /health returned 503, expected 200"


async def test_other_exits_are_a_broken_verifier_not_a_failed_player(tmp_path):
    check = script(tmp_path, 'echo "jq: command not found" >&2\nexit 127\n')
    outcome = await run_verifier(check, {}, 5, tmp_path / "evidence.json")
    assert outcome.verdict == "broken" and "exit 127" in outcome.detail and "jq: command not found" in outcome.detail


async def test_passing_without_evidence_is_a_broken_verifier(tmp_path):
    outcome = await run_verifier(script(tmp_path, "exit 0\n"), {}, 5, tmp_path / "evidence.json")
    assert outcome.verdict == "broken" and "no evidence" in outcome.detail


async def test_an_earlier_runs_evidence_is_never_read_as_this_runs(tmp_path):
    evidence = tmp_path / "evidence.json"
    first = await run_verifier(script(tmp_path, 'echo \'{"run": 1}\' > "$AOE_EVIDENCE_FILE"\n'), {}, 5, evidence)
    assert first.passed and evidence.exists()
    second = await run_verifier(script(tmp_path, "exit 0\n"), {}, 5, evidence)
    assert second.verdict == "broken" and "no evidence" in second.detail


async def test_a_timeout_kills_the_whole_process_group(tmp_path):
    pid_file = tmp_path / "child.pid"
    check = script(tmp_path, f"sleep 300 &\necho $! > {pid_file}\nwait\n")
    started = time.monotonic()
    outcome = await run_verifier(check, {}, 1, tmp_path / "evidence.json")
    assert outcome.verdict == "timeout" and "did not finish within 1 s" in outcome.detail
    assert time.monotonic() - started < 5
    child = int(pid_file.read_text())
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        raise AssertionError(f"background child {child} of the verifier survived its timeout")


async def test_the_environment_reaches_the_script(tmp_path):
    check = script(tmp_path, 'echo "{\\"port\\": \\"$AOE_SERVICE_PORT\\"}" > "$AOE_EVIDENCE_FILE"\n')
    outcome = await run_verifier(check, {"AOE_SERVICE_PORT": "26001"}, 5, tmp_path / "evidence.json")
    assert outcome.evidence == {"port": "26001"}


def _rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


async def test_a_flooding_verifier_is_killed_at_the_cap_and_the_referee_stays_small(tmp_path):
    pid_file = tmp_path / "yes.pid"
    check = script(tmp_path, f"yes flood >&2 &\necho $! > {pid_file}\nyes out | head -c 50G\n")
    before = _rss_bytes()
    started = time.monotonic()
    outcome = await run_verifier(check, {}, 60, tmp_path / "evidence.json")
    growth = _rss_bytes() - before
    assert outcome.verdict == "failed" and "printed more than 1024 KiB and was killed" in outcome.detail
    assert len(outcome.detail) < 600
    assert growth < 8 * 1024 * 1024, f"referee grew by {growth / 2**20:.1f} MiB"
    assert time.monotonic() - started < 10
    flooder = int(pid_file.read_text())
    for _ in range(50):
        if not os.path.exists(f"/proc/{flooder}") or Path(f"/proc/{flooder}/stat").read_text().split()[2] == "Z":
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the verifier's background flood outlived it")


async def test_long_output_below_the_cap_keeps_its_last_line(tmp_path):
    check = script(
        tmp_path, 'head -c 600000 /dev/zero | tr "\\0" x >&2; echo >&2; echo "the real reason" >&2; exit 1\n'
    )
    outcome = await run_verifier(check, {}, 10, tmp_path / "evidence.json")
    assert outcome.verdict == "failed" and outcome.detail == "the real reason"


async def test_oversized_evidence_is_a_broken_verifier(tmp_path):
    check = script(tmp_path, 'head -c 100000 /dev/zero | tr "\\0" 1 > "$AOE_EVIDENCE_FILE"\n')
    outcome = await run_verifier(check, {}, 10, tmp_path / "evidence.json")
    assert outcome.verdict == "broken" and "more than 64 KiB of evidence" in outcome.detail
