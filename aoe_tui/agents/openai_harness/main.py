"""Process entry: wire settings, provider, SSH and outputs together; turn every ending into a result.json.

Whatever happens (finished, provider down, SIGTERM from the controller, a bug)
the harness writes its transcript and result before exiting, because the
referee judges agents by those files and a missing result reads as a crash.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import traceback
from pathlib import Path
from collections.abc import Mapping

from aoe_tui.agents.openai_harness.chat import ChatClient
from aoe_tui.agents.openai_harness.guest_tools import GuestTools
from aoe_tui.agents.openai_harness.loop import AgentRun
from aoe_tui.agents.openai_harness.outputs import Outcome, RunOutputs, write_result
from aoe_tui.agents.openai_harness.scrub import Scrubber
from aoe_tui.agents.openai_harness.settings import HarnessSettings
from aoe_tui.agents.openai_harness.usage import UsageTotals
from aoe_tui.agents.providers import ProviderConfig, resolve_provider
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.secret_patterns import environment_secrets
from aoe_tui.runtime.keys import MatchKeys
from aoe_tui.runtime.ssh import GuestSSH


class KeyFiles(MatchKeys):
    """The controller's key and known_hosts files, wherever it keeps them."""

    def __init__(self, private_key: Path, known_hosts: Path) -> None:
        super().__init__(private_key.parent)
        self._private_key = private_key
        self._known_hosts = known_hosts

    @property
    def private_key_path(self) -> Path:
        return self._private_key

    @property
    def known_hosts_path(self) -> Path:
        return self._known_hosts


def guest_ssh(settings: HarnessSettings) -> GuestSSH:
    """The adapter's SSH to its one guest, with the key and known_hosts the controller gave it."""
    return GuestSSH(
        settings.territory_id,
        settings.host,
        settings.ssh_port,
        KeyFiles(settings.ssh_key_file, settings.known_hosts_file),
        connect_timeout=settings.limits.reconnect_s,
    )


async def run_harness(settings: HarnessSettings, env: Mapping[str, str]) -> int:
    try:
        provider = _provider(settings, env)
    except AoeError as error:
        scrub = Scrubber(environment_secrets(env))
        return _finish_early(settings, scrub, Outcome("unavailable", str(error), "provider"))
    scrub = Scrubber([*environment_secrets(env), provider.api_key])
    try:
        instruction = settings.instruction_file.read_text(encoding="utf-8")
    except OSError as error:
        return _finish_early(
            settings,
            scrub,
            Outcome(
                "harness_error",
                f"cannot read instruction file {settings.instruction_file}: {error.strerror}",
                "harness",
            ),
        )
    log = _logger(scrub)
    ssh = guest_ssh(settings)
    chat = ChatClient(
        provider,
        settings.model,
        settings.reasoning_effort,
        settings.retry,
        scrub,
        on_retry=lambda attempt, error, delay: log(
            f"attempt {attempt} failed ({error.detail}); retrying in {delay:.1f} s"
        ),
        stream=settings.stream,
    )
    outputs = RunOutputs(settings, scrub)
    run = AgentRun(instruction, chat, GuestTools(ssh, settings.limits), settings.budget, outputs, log)
    log(f"agent {settings.agent_id}: model {settings.model} via {provider.name} ({provider.base_url})")
    task = asyncio.current_task()
    assert task is not None  # run_harness runs as the task asyncio.run made
    _cancel_on_signals(task)
    exit_code = 0
    try:
        outcome = await run.run()
    except asyncio.CancelledError:
        outcome = Outcome("interrupted", "stopped by the controller (SIGTERM)", "controller")
    except Exception as error:  # noqa: BLE001  (a bug must still leave a result behind, never a silent crash)
        log(traceback.format_exc())
        outcome = Outcome("harness_error", f"{type(error).__name__}: {error}", "harness")
        exit_code = 1
    outputs.final(outcome, run.totals, run.transcript(outcome))
    log(f"agent {settings.agent_id}: {outcome.status}: {outcome.summary[:200]}")
    try:
        await asyncio.wait_for(asyncio.gather(ssh.close(), chat.aclose()), 2)
    except TimeoutError:
        pass
    return exit_code


def _provider(settings: HarnessSettings, env: Mapping[str, str]) -> ProviderConfig:
    """In a match, the gateway with this agent's token (the gateway holds the real key); by hand, the provider."""
    if settings.gateway_url:
        return ProviderConfig("gateway", settings.gateway_token, {"openai": settings.gateway_url.rstrip("/") + "/v1"})
    return resolve_provider(settings.model, env)


def _finish_early(settings: HarnessSettings, scrub: Scrubber, outcome: Outcome) -> int:
    _logger(scrub)(f"agent {settings.agent_id}: {outcome.status}: {outcome.summary}")
    write_result(settings, outcome, UsageTotals().result_usage(), scrub, transcript=None)
    return 0


def _cancel_on_signals(task: asyncio.Task[int]) -> None:
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, task.cancel)


def _logger(scrub: Scrubber):
    def log(line: str) -> None:
        print(scrub(f"[openai-harness] {line}"), file=sys.stderr, flush=True)

    return log


def main(env: Mapping[str, str] | None = None) -> int:
    env = dict(os.environ if env is None else env)
    try:
        settings = HarnessSettings.from_env(env)
    except AoeError as error:
        print(Scrubber(environment_secrets(env))(str(error)), file=sys.stderr)
        return 2
    return asyncio.run(run_harness(settings, env))
