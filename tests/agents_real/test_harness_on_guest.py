"""The built-in harness against a real guest: it builds the First Build service, and the
arena's own verifier scripts (verify/*.sh) confirm all four milestones.

One guest serves the whole module (TCG is slow and the machine is shared), so
the tests run in file order: the build first, then scenarios that only need
a reachable guest.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
import pytest_asyncio

from aoe_tui.agents.protocol import AgentResult
from aoe_tui.domain.transcript import ToolTraceEntry
from aoe_tui.engine.verifier import VerifierOutcome, run_verifier
from aoe_tui.runtime.guest import TerritoryVM
from tests.agents_real.builder_script import SUMMARY, builder_script
from tests.agents_real.fake_provider import ScriptedProvider, bash, error, final, tool_calls
from tests.agents_real.guest import PROJECT, access, boot_shared_guest
from tests.agents_real.harness_run import (
    DISTINCTIVE_KEY,
    HarnessFiles,
    assert_key_absent,
    harness_env,
    run_harness,
    start_harness,
)

pytestmark = [pytest.mark.vm, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def guest(tmp_path_factory: pytest.TempPathFactory):
    async for vm in boot_shared_guest(tmp_path_factory.mktemp("guest"), "agents-real"):
        yield vm


async def verify(vm: TerritoryVM, milestone: str, scratch: Path, timeout: float = 60, **phase: str) -> VerifierOutcome:
    scratch.mkdir(parents=True, exist_ok=True)
    previous = scratch / "previous.json"
    previous.write_text("{}")
    env = {
        "AOE_TERRITORY_ID": vm.territory_id,
        "AOE_HOST": "127.0.0.1",
        "AOE_SSH_PORT": str(vm.ssh_port),
        "AOE_SERVICE_PORT": str(vm.service_port),
        "AOE_PREVIOUS_EVIDENCE": str(previous),
        "AOE_SSH_KEY": str(vm.keys.private_key_path),
        "AOE_KNOWN_HOSTS": str(vm.keys.known_hosts_path),
        "AOE_SSH_USER": "root",
        **phase,
    }
    return await run_verifier(PROJECT / "verify" / f"{milestone}.sh", env, timeout, scratch / f"{milestone}.json")


async def test_scripted_model_builds_a_durable_service_that_passes_all_four_milestones(
    guest: TerritoryVM, tmp_path: Path
) -> None:
    agent_dir = tmp_path / "agents" / "real-builder"
    files = HarnessFiles(agent_dir)
    async with ScriptedProvider(builder_script(final_delay_s=3)) as provider:
        process = await start_harness(harness_env(agent_dir, provider.base_url, access(guest)))
        seen_while_running = 0
        while process.returncode is None:
            seen_while_running = max(seen_while_running, len(files.trace()))
            try:
                await asyncio.wait_for(process.wait(), 0.2)
            except TimeoutError:
                pass
    assert seen_while_running >= 4, "the live tool trace must grow while the harness runs"

    result = files.result()
    assert (result["status"], result["summary"], result["source"]) == ("completed", SUMMARY, None)
    assert result["usage"] == {
        "resource_units": 5,
        "input_tokens": 5000,
        "output_tokens": 500,
        "cost_microusd": 7000,
        "rounds": 5,
        "tool_calls": 5,
    }
    trace = files.trace()
    assert [entry["name"] for entry in trace] == ["Bash", "Write", "Bash", "Read", "Bash"]
    assert not any(entry["is_error"] for entry in trace), [e["output"] for e in trace if e["is_error"]]
    assert trace[2]["input"]["description"] == "Start the unit and wait for health"
    assert trace[4]["output"].startswith("204 opaque-self-check")
    assert all(later["started_after_ms"] >= earlier["started_after_ms"] for earlier, later in zip(trace, trace[1:]))
    transcript = files.transcript()
    assert transcript.outcome.status == "completed" and transcript.outcome.result == SUMMARY
    assert [entry.model_dump(exclude_unset=True) for entry in transcript.tool_calls] == trace
    assert len(transcript.timing.model_rounds) == 5 and transcript.usage.cost_usd == pytest.approx(0.007)
    assert files.json("usage.json")["cost_microusd"] == 7000
    assert "tools" in provider.requests[0].body and provider.requests[0].body["reasoning_effort"] == "high"
    assert_key_absent(agent_dir)

    scratch = tmp_path / "verifier"
    for milestone in ("service-up", "write-read", "service-restart"):
        outcome = await verify(guest, milestone, scratch)
        assert outcome.passed, f"{milestone}: {outcome.detail}"
    prepared = {"AOE_PREPARED_FILE": str(scratch / "prepared.json")}
    assert (await verify(guest, "host-reboot", scratch, AOE_VERIFY_PHASE="before_reboot", **prepared)).passed
    reboot = await guest.reboot(240)
    proof = scratch / "proof.json"
    proof.write_text(json.dumps(reboot.to_json()))
    outcome = await verify(
        guest, "host-reboot", scratch, 90, AOE_VERIFY_PHASE="after_reboot", AOE_REBOOT_PROOF=str(proof), **prepared
    )
    assert outcome.passed, outcome.detail
    assert outcome.evidence["boot_id_before"] != outcome.evidence["boot_id_after"]


async def test_429_then_recovery_keeps_working_in_the_guest(guest: TerritoryVM, tmp_path: Path) -> None:
    script = [
        error(429, "slow down", retry_after="1"),
        tool_calls(bash("uname -s", "Kernel name")),
        error(502, "bad gateway"),
        final("Checked the kernel."),
    ]
    async with ScriptedProvider(script) as provider:
        await run_harness(harness_env(tmp_path, provider.base_url, access(guest)))
    files = HarnessFiles(tmp_path)
    assert files.result()["status"] == "completed"
    assert len(provider.requests) == 4
    assert [entry["output"] for entry in files.trace()] == ["Linux\n[exit status 0]"]
    assert files.json("usage.json")["rounds"] == 2


async def test_round_budget_stops_the_run_with_budget_exceeded(guest: TerritoryVM, tmp_path: Path) -> None:
    endless = [tool_calls(bash(f"echo round {n}")) for n in range(10)]
    async with ScriptedProvider(endless) as provider:
        await run_harness(harness_env(tmp_path, provider.base_url, access(guest), AOE_BUDGET_RESOURCE_UNITS="3"))
    files = HarnessFiles(tmp_path)
    result = files.result()
    assert (result["status"], result["source"]) == ("budget_exceeded", "player")
    assert "3 of 3 model rounds" in result["summary"]
    assert len(provider.requests) == 3 and len(files.trace()) == 3
    assert result["usage"]["resource_units"] == 3


async def test_cost_budget_stops_before_running_the_tools_of_the_round_that_broke_it(
    guest: TerritoryVM, tmp_path: Path
) -> None:
    endless = [tool_calls(bash(f"echo round {n}"), cost=0.0015) for n in range(10)]
    async with ScriptedProvider(endless) as provider:
        await run_harness(harness_env(tmp_path, provider.base_url, access(guest), AOE_BUDGET_MAX_COST_MICROUSD="2500"))
    files = HarnessFiles(tmp_path)
    assert files.result()["status"] == "budget_exceeded"
    assert len(provider.requests) == 2 and len(files.trace()) == 1
    assert files.result()["usage"]["cost_microusd"] == 3000


async def test_the_provider_key_never_reaches_the_guest_or_any_output_file(guest: TerritoryVM, tmp_path: Path) -> None:
    probe = "env; cat /proc/1/environ 2>/dev/null | tr '\\0' '\\n'; grep -rs sk-aoe /root /etc /opt /tmp | head -3"
    async with ScriptedProvider(
        [tool_calls(bash(probe, "Look for secrets")), final(f"I found nothing like {DISTINCTIVE_KEY}")]
    ) as provider:
        await run_harness(harness_env(tmp_path, provider.base_url, access(guest)))
    files = HarnessFiles(tmp_path)
    output = files.trace()[0]["output"]
    assert "OPENAI" not in output and "[redacted]" not in output, "the key must not exist in the guest at all"
    assert files.result()["summary"] == "I found nothing like [redacted]"
    assert_key_absent(tmp_path)


async def test_a_reboot_mid_command_reconnects_and_the_run_continues(guest: TerritoryVM, tmp_path: Path) -> None:
    boot_id = "cat /proc/sys/kernel/random/boot_id"
    script = [
        tool_calls(bash(boot_id)),
        tool_calls(bash("sleep 1; systemctl reboot; sleep 120", "Reboot the host")),
        tool_calls(bash(boot_id)),
        final("Rebooted."),
    ]
    async with ScriptedProvider(script) as provider:
        await run_harness(harness_env(tmp_path, provider.base_url, access(guest)), timeout=400)
    files = HarnessFiles(tmp_path)
    assert files.result()["status"] == "completed", files.result()["summary"]
    first, lost, second = files.trace()
    assert lost["is_error"] and "reconnected after" in lost["output"]
    assert first["output"].split()[0] != second["output"].split()[0]


async def test_the_example_external_adapter_writes_every_protocol_file(guest: TerritoryVM, tmp_path: Path) -> None:
    env = harness_env(tmp_path, "unused", access(guest), AOE_SSH_USER="root")
    process = await asyncio.create_subprocess_exec(
        str(PROJECT / "examples" / "adapters" / "ssh-survey.sh"),
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, stderr.decode()
    files = HarnessFiles(tmp_path)
    result = AgentResult.model_validate(files.result())
    assert (result.status, result.agent, result.territory) == ("completed", "real-builder", "builder-one")
    trace = [ToolTraceEntry.model_validate(entry) for entry in files.trace()]
    assert [entry.name for entry in trace] == ["Bash", "Bash"]
    assert trace[0].output.startswith("Linux ") and "Debian GNU/Linux 12" in trace[0].output
    assert trace[1].output.splitlines()[0] == "enabled" and not trace[1].is_error
    assert files.json("usage.json")["tool_calls"] == 2 and result.usage.resource_units == 2


async def test_a_harness_in_the_guest_reaches_the_gateway_through_the_reverse_forward(guest: TerritoryVM) -> None:
    """The guest has no route out; the referee's SSH connection carries its loopback port to the gateway, where
    only this agent's token is good (another token, or none, is refused) and the provider's key never enters;
    after the referee's reboot the forward is there again."""
    from aoe_tui.agents.gateway.metering import Charge
    from aoe_tui.agents.gateway.server import Gateway
    from aoe_tui.agents.providers import ProviderConfig
    from aoe_tui.testing.model_server import ScriptedModelServer, Turn

    charges: list[Charge] = []

    class Meter:
        def refusal(self, agent_id: str, rounds_in_flight: int) -> None:
            return None

        def charge(self, agent_id: str, charge: Charge) -> None:
            charges.append(charge)

        def refused_over_budget(self, agent_id: str, reason: str) -> None:
            raise AssertionError(reason)

        def gateway_failed(self, agent_id: str, detail: str) -> None:
            raise AssertionError(detail)

    async with ScriptedModelServer([Turn(text="hello from the model")]) as upstream:
        gateway = Gateway(Meter())
        await gateway.start()
        provider = ProviderConfig("scripted", DISTINCTIVE_KEY, {"openai": upstream.openai_base_url})
        token = await gateway.add_agent("in-guest", "scripted/in-guest", provider, guest.config.directory / "agent")
        other = Gateway(Meter())
        await other.start()
        foreign = await other.add_agent("in-guest", "scripted/in-guest", provider, guest.config.directory / "other")
        await guest.ssh.forward_to_host(18411, gateway.port("in-guest"))
        try:
            body = '{"model": "scripted/in-guest", "messages": [{"role": "user", "content": "hi"}]}'

            async def ask(key: str) -> str:
                result = await guest.ssh.run(
                    f"curl -sS -w ' %{{http_code}}' -H 'Authorization: Bearer {key}' "
                    f"-H 'Content-Type: application/json' --data '{body}' "
                    "http://127.0.0.1:18411/v1/chat/completions",
                    timeout=30,
                )
                return result.stdout + result.stderr

            answer = await ask(token)
            assert answer.rstrip().endswith(" 200") and "hello from the model" in answer, answer
            assert (await ask(foreign)).rstrip().endswith(" 401")
            assert (await ask("sk-guessed")).rstrip().endswith(" 401")
            # The referee's reboot cuts the connection; the next one carries the forward again.
            await guest.reboot(240)
            again = await ask(token)
            assert again.rstrip().endswith(" 200"), again
            assert {request.headers["Authorization"] for request in upstream.requests} == {f"Bearer {DISTINCTIVE_KEY}"}
            assert len(charges) == len(upstream.requests) == 2
        finally:
            await gateway.close()
            await other.close()


async def run_guest_harness(adapter: str, guest: TerritoryVM, directory: Path, timeout: float = 120) -> dict:
    """The real harnesses' adapter (`python -m aoe_tui.agents.harnesses ADAPTER`) against this guest; its result."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "instruction.md").write_text("Build the service.")
    env = harness_env(directory, "http://127.0.0.1:9/unused", access(guest))
    env.update(AOE_GATEWAY_URL="http://127.0.0.1:18412", AOE_GATEWAY_TOKEN="aoe-gw-test-token")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "aoe_tui.agents.harnesses", adapter, env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, stderr = await asyncio.wait_for(process.communicate(), timeout)
    assert b"Traceback" not in stderr, stderr.decode()[-2000:]
    return json.loads((directory / "result.json").read_text())


async def test_a_harness_whose_bundle_is_missing_fails_as_the_harness_with_one_line(
    guest: TerritoryVM, tmp_path: Path
) -> None:
    """This guest has no bundle disk attached: the harness cannot start, and that is never the player's fault."""
    result = await run_guest_harness("claude-code", guest, tmp_path / "agent")
    assert (result["status"], result["source"]) == ("harness_error", "harness"), result
    assert "harness bundle is not attached" in result["summary"] and "\n" not in result["summary"]


async def test_a_harness_that_crashes_at_start_is_blamed_on_the_harness_with_its_own_last_line(
    guest: TerritoryVM, tmp_path: Path
) -> None:
    """A bundle whose claude dies before its first event (here a stand-in on a tmpfs at the mount point)."""
    crash = (
        "#!/bin/sh\necho 'loading claude' >&2\necho 'claude: fatal: illegal instruction (core dumped)' >&2\nexit 132\n"
    )
    await guest.ssh.run(
        "mkdir -p /opt/aoe-harnesses && mount -t tmpfs tmpfs /opt/aoe-harnesses && mkdir /opt/aoe-harnesses/bin", 30
    )
    try:
        await guest.ssh.write_file("/opt/aoe-harnesses/bin/claude", crash.encode(), 0o755)
        result = await run_guest_harness("claude-code", guest, tmp_path / "agent")
    finally:
        await guest.ssh.run("umount /opt/aoe-harnesses", 30)
    assert (result["status"], result["source"]) == ("harness_error", "harness"), result
    assert result["summary"] == "claude-code did not start: claude: fatal: illegal instruction (core dumped)"
