"""Provider failures and controller signals, end to end through a real harness process.

None of these reach a tool call, and the harness only opens SSH for the first
tool call, so the guest address points at a closed port and no VM is needed.
"""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

from tests.agents_real.fake_provider import ScriptedProvider, Step, error, final
from tests.agents_real.harness_run import (
    DISTINCTIVE_KEY,
    GuestAccess,
    HarnessFiles,
    assert_key_absent,
    harness_env,
    run_harness,
    start_harness,
)

NO_GUEST = GuestAccess("127.0.0.1", 9, Path("/nonexistent/id_ed25519"), Path("/nonexistent/known_hosts"))


async def test_401_ends_unavailable_from_provider_at_once_without_leaking_the_key(tmp_path: Path) -> None:
    echoed = f"Incorrect API key provided: {DISTINCTIVE_KEY}"
    async with ScriptedProvider([error(401, echoed)]) as provider:
        started = time.monotonic()
        code = await run_harness(harness_env(tmp_path, provider.base_url, NO_GUEST), timeout=30)
        elapsed = time.monotonic() - started
    files = HarnessFiles(tmp_path)
    result = files.result()
    assert code == 0
    assert (result["status"], result["source"]) == ("unavailable", "provider")
    assert "HTTP 401" in result["summary"] and "[redacted]" in result["summary"]
    assert len(provider.requests) == 1, "a 401 must not be retried"
    assert provider.requests[0].headers["authorization"] == f"Bearer {DISTINCTIVE_KEY}"
    assert elapsed < 10
    assert files.transcript().outcome.status == "unavailable"
    assert_key_absent(tmp_path)


async def test_402_is_not_retried_either(tmp_path: Path) -> None:
    async with ScriptedProvider([error(402, "insufficient credits")]) as provider:
        await run_harness(harness_env(tmp_path, provider.base_url, NO_GUEST), timeout=30)
    assert HarnessFiles(tmp_path).result()["status"] == "unavailable"
    assert len(provider.requests) == 1


async def test_persistent_5xx_gives_up_after_bounded_retries(tmp_path: Path) -> None:
    script = [error(503, "upstream overloaded") for _ in range(10)]
    async with ScriptedProvider(script) as provider:
        await run_harness(harness_env(tmp_path, provider.base_url, NO_GUEST, AOE_OPENAI_MAX_ATTEMPTS="3"), timeout=30)
    result = HarnessFiles(tmp_path).result()
    assert (result["status"], result["source"]) == ("unavailable", "provider")
    assert "gave up after 3 attempts" in result["summary"]
    assert len(provider.requests) == 3


async def test_retry_after_is_honoured_then_the_run_recovers(tmp_path: Path) -> None:
    async with ScriptedProvider([error(429, "rate limited", retry_after="1"), final("All done.")]) as provider:
        await run_harness(harness_env(tmp_path, provider.base_url, NO_GUEST), timeout=30)
    result = HarnessFiles(tmp_path).result()
    assert result["status"] == "completed" and result["summary"] == "All done."
    assert len(provider.requests) == 2
    assert "retrying in 1.0 s" in (tmp_path / "stderr.log").read_text()


async def test_a_reply_slower_than_the_request_timeout_counts_as_a_transient_failure(tmp_path: Path) -> None:
    slow = Step(body=final("too late").body, delay_s=5)
    async with ScriptedProvider([slow, slow]) as provider:
        env = harness_env(
            tmp_path, provider.base_url, NO_GUEST, AOE_OPENAI_REQUEST_TIMEOUT_SECONDS="0.5", AOE_OPENAI_MAX_ATTEMPTS="2"
        )
        await run_harness(env, timeout=30)
    result = HarnessFiles(tmp_path).result()
    assert result["status"] == "unavailable"
    assert "no response within 0.5 s" in result["summary"]


async def test_sigterm_mid_request_writes_interrupted_result_and_exits_promptly(tmp_path: Path) -> None:
    async with ScriptedProvider([Step(body=final("never seen").body, delay_s=60)]) as provider:
        process = await start_harness(harness_env(tmp_path, provider.base_url, NO_GUEST))
        for _ in range(100):
            if provider.requests:
                break
            await asyncio.sleep(0.1)
        assert provider.requests, "the harness never asked the model"
        stopped = time.monotonic()
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 10)
        took = time.monotonic() - stopped
    result = HarnessFiles(tmp_path).result()
    assert (result["status"], result["source"]) == ("interrupted", "controller")
    assert took < 3
    assert HarnessFiles(tmp_path).transcript().outcome.status == "interrupted"


async def test_reasoning_effort_is_sent_only_when_the_manifest_sets_one(tmp_path: Path) -> None:
    for effort, expected in (("high", "high"), ("none", None), ("unavailable", None)):
        async with ScriptedProvider([final("ok")]) as provider:
            await run_harness(harness_env(tmp_path / effort, provider.base_url, NO_GUEST, AOE_REASONING_EFFORT=effort))
        assert provider.requests[0].body.get("reasoning_effort") == expected
        assert provider.requests[0].body["model"] == "scripted/builder"


async def test_no_provider_configured_is_unavailable_naming_the_config_file(tmp_path: Path) -> None:
    env = harness_env(tmp_path, "unused", NO_GUEST)
    for name in ("AOE_OPENAI_BASE_URL", "AOE_OPENAI_API_KEY"):
        env.pop(name)
    await run_harness(env, timeout=30)
    result = HarnessFiles(tmp_path).result()
    assert result["status"] == "unavailable"
    assert "providers.toml" in result["summary"]
