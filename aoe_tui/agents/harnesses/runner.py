"""A real harness raced in its own guest: the adapter process `python -m aoe_tui.agents.harnesses ADAPTER`.

The referee starts this like any adapter (confined, with the agent's SSH key
for its one guest and its gateway token, docs/adapters.md). It

- mounts the harness bundle (the read-only disk the referee attached) at
  `bundle.GUEST_MOUNT`, opens the reverse forward that makes the agent's gateway
  port answer on the guest's own 127.0.0.1 (the only way the harness reaches a
  model: the guest has no route out), and writes the harness's configuration
  files under its own HOME in the guest;
- runs the harness there as root, over this SSH connection, in a clean
  environment that holds the gateway token and nothing else secret, on the
  arena's brief verbatim;
- reads its native event stream as it comes (`Harness.parser`) into the live
  `tool_trace.jsonl`, keeps the stream itself (bounded) as `harness_stream.jsonl`,
  and writes the transcript, `usage.json` (the harness's own count: the gateway's
  is the one charged) and `result.json`.

Who is to blame for an ending: a harness that does not start, crashes before
its first event or leaves no record is the harness's failure; a run that went on
and ended without a tool call, with the harness's own error, or refused by the
budget is the player's; a session cut by the guest going away (the referee's
reboot) is `interrupted`, which the referee attributes.
"""

from __future__ import annotations

import asyncio
import shlex
import signal
import sys
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import asyncssh

from aoe_tui.agents.harnesses import HARNESS_MODULES
from aoe_tui.agents.harnesses.base import MAX_DOCUMENT_BYTES, Harness, HarnessContext, HarnessReport, error_line
from aoe_tui.agents.harnesses.bundle import GUEST_MOUNT
from aoe_tui.agents.openai_harness.main import guest_ssh
from aoe_tui.agents.openai_harness.outputs import Outcome, RunOutputs, write_result
from aoe_tui.agents.openai_harness.scrub import Scrubber
from aoe_tui.agents.openai_harness.settings import HarnessSettings
from aoe_tui.agents.openai_harness.usage import UsageTotals
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.transcript import ToolTraceEntry
from aoe_tui.domain.secret_patterns import environment_secrets
from aoe_tui.runtime.domain_xml import HARNESS_DISK_SERIAL
from aoe_tui.runtime.ssh import GuestSSH, kill_session_command, wrap_in_session

GUEST_HOME = "/root/.aoe-harness"  # the harness's HOME: its configuration files and its own session records
GUEST_WORKDIR = "/root/arena"  # where it starts
GUEST_PATH = f"{GUEST_MOUNT}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
STREAM_FILE = "harness_stream.jsonl"  # its native event stream, as it came (bounded), beside result.json
MAX_STREAM_BYTES = 64 * 1024 * 1024
STDERR_KEEP = 64 * 1024
PREPARE_TIMEOUT_S = 60.0
NOT_STARTED_EXITS = (126, 127)  # the shell's "cannot execute" and "not found"
CLOSE_TIMEOUT_S = 15.0  # for a channel whose output ended to close: past it, the connection is taken as lost
MAX_RESUMES = 3  # a harness cut more often than this in one match stays cut
TRAJECTORY_POLL_S = 3.0  # how often a trajectory file is read again for the live trace


@dataclass
class HarnessRun:
    """What one run of the harness in its guest left: its exit, its stderr's tail, whether its stream said anything."""

    exit_status: int | None = None
    stderr_tail: bytes = b""
    stream_bytes: int = 0
    cut: bool = False  # the SSH connection went away under it (the guest rebooted or vanished)


class GuestHarness:
    def __init__(self, harness: Harness, settings: HarnessSettings, ssh: GuestSSH, outputs: RunOutputs) -> None:
        self.harness = harness
        self.settings = settings
        self.ssh = ssh
        self.outputs = outputs
        self.parser = harness.parser()
        self._started = time.monotonic()
        self._stream_path = settings.result_file.parent / STREAM_FILE
        self._token: str | None = None
        self.resumed = 0  # sessions carried on after a cut
        self._emitted = 0  # tool calls sent to the live trace

    def context(self, prompt: str, guest_port: int) -> HarnessContext:
        assert self.settings.gateway_token is not None
        return HarnessContext(
            prompt=prompt,
            model=self.settings.model,
            gateway_url=f"http://127.0.0.1:{guest_port}",
            gateway_token=self.settings.gateway_token,
            home=f"{GUEST_HOME}/{self.harness.adapter_id}",
            workdir=GUEST_WORKDIR,
        )

    async def prepare(self, ctx: HarnessContext, host_port: int) -> None:
        """The bundle mounted, the gateway's forward open (kept on every later connection), the configuration
        written."""
        await self.mount_bundle()
        await self.ssh.forward_to_host(int(ctx.gateway_url.rsplit(":", 1)[1]), host_port)
        await self.ssh.run(f"mkdir -p {shlex.quote(ctx.home)} {shlex.quote(ctx.workdir)}", PREPARE_TIMEOUT_S)
        for config in self.harness.files(ctx):
            await self.ssh.write_file(config.path, config.text.encode(), config.mode, PREPARE_TIMEOUT_S)

    async def mount_bundle(self) -> None:
        """The bundle's disk at GUEST_MOUNT (again after a reboot)."""
        device = f"/dev/disk/by-id/virtio-{HARNESS_DISK_SERIAL}"
        mount = (
            f"mkdir -p {GUEST_MOUNT} && {{ mountpoint -q {GUEST_MOUNT} || mount -o ro {device} {GUEST_MOUNT} "
            f"|| mount -o ro LABEL={HARNESS_DISK_SERIAL} {GUEST_MOUNT}; }}"
        )
        result = await self.ssh.run(mount, PREPARE_TIMEOUT_S)
        if result.exit_status != 0:
            raise HarnessNotStarted(
                f"the harness bundle is not attached to this guest ({GUEST_MOUNT}): "
                f"{error_line(result.stderr) or f'mount exit {result.exit_status}'}"
            )

    def command(self, ctx: HarnessContext, argv: tuple[str, ...] | None = None) -> str:
        environment = {"PATH": GUEST_PATH, "LANG": "C.UTF-8", "TERM": "dumb", **self.harness.env(ctx)}
        assignments = " ".join(shlex.quote(f"{name}={value}") for name, value in environment.items())
        words = " ".join(shlex.quote(part) for part in (argv or self.harness.argv(ctx)))
        return f"cd {shlex.quote(ctx.workdir)} && exec env -i {assignments} {words} </dev/null"

    async def run(self, ctx: HarnessContext, argv: tuple[str, ...] | None = None) -> HarnessRun:
        """Run it (`argv`: its resume command) to its end or the connection's, feeding its stream to the parser
        and the live trace."""
        outcome = HarnessRun()
        stderr = bytearray()
        connection = await self.ssh.connect()
        self._token = uuid.uuid4().hex
        process = await connection.create_process(wrap_in_session(self.command(ctx, argv), self._token), encoding=None)
        process.stdin.write_eof()

        async def drain_stderr() -> None:
            while chunk := await process.stderr.read(65536):
                stderr.extend(chunk)
                del stderr[:-STDERR_KEEP]

        errors = asyncio.ensure_future(drain_stderr())
        try:
            with open(self._stream_path, "ab") as stream:
                while chunk := await process.stdout.read(65536):
                    if outcome.stream_bytes + len(chunk) <= MAX_STREAM_BYTES:
                        stream.write(chunk)
                        stream.flush()
                    outcome.stream_bytes += len(chunk)
                    if self.harness.trajectory is None:  # else its stdout is console text; its record is a file
                        self._emit(self.parser.feed(chunk, self.elapsed_ms()))
            await asyncio.wait_for(errors, CLOSE_TIMEOUT_S)
            await asyncio.wait_for(process.wait_closed(), CLOSE_TIMEOUT_S)
            outcome.exit_status = process.returncode
            # A channel that ended without an exit status lost its connection (the guest went away): a cut.
            outcome.cut = outcome.exit_status is None
        except (OSError, asyncssh.Error, TimeoutError):
            outcome.cut = True
        finally:
            errors.cancel()
            process.close()
        if outcome.cut:
            self.ssh.drop()
        outcome.stderr_tail = bytes(stderr)
        self._token = None
        return outcome

    async def resume(self, ctx: HarnessContext, cut: HarnessRun) -> HarnessRun | None:
        """After the guest came back from a cut (the referee's reboot), the harness's session carried on where it
        stopped, when it can resume one headless and said which; None when it cannot (the run stays cut)."""
        if self.harness.resume_argv is None or (session := self.parser.report.session_id) is None:
            return None
        try:
            await self.ssh.connect(self.settings.limits.reconnect_s)  # its forwards open again with it
            await self.mount_bundle()
        except AoeError:
            return None
        self.resumed += 1
        run = await self.run(ctx, self.harness.resume_argv(ctx, session))
        run.stream_bytes += cut.stream_bytes
        return run

    async def read_trajectory(self, ctx: HarnessContext) -> None:
        """A harness whose record is a file (mini-swe-agent's trajectory): read it whole once the run ended; the
        calls not yet in the live trace go there."""
        if self.harness.trajectory is not None and (document := await self._trajectory(ctx)) is not None:
            self.parser.feed(document)
            self._emit(self.parser.finish().tool_trace[self._emitted :])

    async def follow_trajectory(self, ctx: HarnessContext) -> None:
        """While it runs: its trajectory file (rewritten after each of its steps) read again every few seconds,
        each call not yet emitted sent to the live trace."""
        while True:
            await asyncio.sleep(TRAJECTORY_POLL_S)
            try:
                document = await self._trajectory(ctx)
            except AoeError:
                continue  # the guest is away (rebooting); the next look may find it
            if document is not None:
                reading = self.harness.parser()
                reading.feed(document)
                self._emit(reading.finish().tool_trace[self._emitted :])

    async def _trajectory(self, ctx: HarnessContext) -> bytes | None:
        """The trajectory file whole (up to MAX_DOCUMENT_BYTES): not through `GuestSSH.run`, which keeps only the
        head and tail of an output, as a command's output is shown."""
        path = shlex.quote(f"{ctx.home}/{self.harness.trajectory}")
        try:
            connection = await self.ssh.connect()
            # asyncio.timeout, not wait_for: Python 3.11's wait_for can swallow a cancellation that arrives as the
            # read completes, and the follower, cancelled when the harness ends, would then poll forever.
            async with asyncio.timeout(PREPARE_TIMEOUT_S):
                result = await connection.run(f"head -c {MAX_DOCUMENT_BYTES} {path}", check=False, encoding=None)
        except (OSError, asyncssh.Error, TimeoutError) as error:
            self.ssh.drop()
            raise AoeError(f"{self.settings.territory_id}: cannot read the trajectory: {error}") from None
        return result.stdout if result.exit_status == 0 and isinstance(result.stdout, bytes) else None

    def _emit(self, entries: list[ToolTraceEntry]) -> None:
        for entry in entries:
            self.outputs.tool_call(entry.model_dump(exclude_none=True))
        self._emitted += len(entries)

    async def stop(self) -> None:
        """Kill what runs in the guest (the referee's SIGTERM at the end of the match)."""
        if self._token is not None and self.ssh.connected:
            try:
                connection = await asyncio.wait_for(self.ssh.connect(5), 5)
                await asyncio.wait_for(connection.run(kill_session_command(self._token), check=False), 5)
            except (OSError, asyncssh.Error, AoeError, TimeoutError):
                pass

    def elapsed_ms(self) -> int:
        return int((time.monotonic() - self._started) * 1000)


class HarnessNotStarted(AoeError):
    """The harness could not be set up or started in its guest: its own failure, never the player's."""


def judge(harness: Harness, run: HarnessRun, report: HarnessReport) -> Outcome:
    """The run's ending, blamed on who caused it (module docstring). Its own record's error comes first; its
    stderr's last line speaks only for a run that exited non-zero (harnesses warn there on a good run too)."""
    stderr_line = error_line(run.stderr_tail.decode("utf-8", errors="replace"))
    last = report.last_error or (stderr_line if run.exit_status else None)
    name = harness.adapter_id
    if run.cut:
        return Outcome("interrupted", f"{name}: the session was cut (the guest went away under it)", "arena")
    if run.exit_status in NOT_STARTED_EXITS or (
        run.stream_bytes == 0 and harness.trajectory is None and run.exit_status
    ):
        reason = report.last_error or stderr_line or f"exit {run.exit_status}"
        return Outcome("harness_error", f"{name} did not start: {reason}", "harness")
    if last is not None and ("402" in last or "budget" in last.lower()):
        return Outcome("budget_exceeded", f"{name}: {last}", "player")
    if run.exit_status == 0 and report.completed and report.tool_trace:
        return Outcome("completed", report.result or f"{name} finished", "player")
    if run.exit_status == 0 and not report.tool_trace and last is None:
        tail = f": {error_line(report.result)}" if report.result else ""
        return Outcome("failed", f"{name}: the model never called a tool{tail}", "player")
    detail = last or (f"exit {run.exit_status}" if run.exit_status else "it ended without saying it finished")
    return Outcome("failed", f"{name}: {detail}", "player")


def reported_usage(report: HarnessReport, tool_calls: int) -> UsageTotals:
    """usage.json from the harness's own count (the referee charges what the gateway measured)."""
    usage = report.usage
    return UsageTotals(
        rounds=report.model_rounds or 0,
        tool_calls=tool_calls,
        input_tokens=usage.input_tokens if usage else None,
        output_tokens=usage.output_tokens if usage else None,
        cache_read_tokens=usage.cache_read_tokens if usage else None,
        cost_usd=float(usage.cost_usd) if usage and usage.cost_usd is not None else None,
        cost_complete=bool(usage and usage.cost_usd is not None),
    )


def transcript(
    harness: Harness, settings: HarnessSettings, report: HarnessReport, outcome: Outcome, prompt: str, resumed: int
) -> dict[str, Any]:
    usage = report.usage.model_dump(exclude_none=True) if report.usage else {}
    return {
        "schema_version": 2,
        "model": settings.model,
        "harness": {"adapter": harness.adapter_id, "package": harness.package, "version": harness.version},
        "session_id": report.session_id,
        "resumed_after_reboot": resumed,  # times its session was carried on after the referee's reboot cut it
        "outcome": {"status": outcome.status, "summary": outcome.summary},
        "usage": usage,
        "messages": [{"role": "user", "content": prompt}]
        + ([{"role": "assistant", "content": [{"type": "text", "text": report.result}]}] if report.result else []),
        "tool_trace": [entry.model_dump(exclude_none=True) for entry in report.tool_trace],
        "skipped_stream_lines": report.skipped_lines,
    }


async def run_in_guest(harness: Harness, settings: HarnessSettings, env: Mapping[str, str]) -> int:
    scrub = Scrubber(environment_secrets(env))
    if not settings.gateway_url or not settings.gateway_token:
        outcome = Outcome(
            "harness_error", f"{harness.adapter_id} runs only behind the match's model gateway", "harness"
        )
        write_result(settings, outcome, UsageTotals().result_usage(), scrub, transcript=None)
        return 0
    try:
        prompt = settings.instruction_file.read_text(encoding="utf-8")
    except OSError as error:
        outcome = Outcome("harness_error", f"cannot read {settings.instruction_file}: {error.strerror}", "harness")
        write_result(settings, outcome, UsageTotals().result_usage(), scrub, transcript=None)
        return 0
    ssh = guest_ssh(settings)
    outputs = RunOutputs(settings, scrub)
    guest = GuestHarness(harness, settings, ssh, outputs)
    host_port = urlsplit(settings.gateway_url).port or 80
    ctx = guest.context(prompt, host_port)
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, task.cancel)
    run = HarnessRun()
    try:
        await guest.prepare(ctx, host_port)
        _log(scrub, f"{harness.adapter_id} {harness.version}: started in {settings.territory_id}")
        follower = asyncio.ensure_future(guest.follow_trajectory(ctx)) if harness.trajectory else None
        try:
            run = await guest.run(ctx)
        finally:
            if follower is not None:
                follower.cancel()
                await asyncio.gather(follower, return_exceptions=True)
        while run.cut and guest.resumed < MAX_RESUMES:
            _log(scrub, f"{harness.adapter_id}: the session was cut (the guest went away); resuming it once back")
            resumed = await guest.resume(ctx, run)
            if resumed is None:
                break
            run = resumed
        if not run.cut:
            await guest.read_trajectory(ctx)
        report = guest.parser.finish()
        outcome = judge(harness, run, report)
    except asyncio.CancelledError:
        await guest.stop()
        report = guest.parser.finish()
        outcome = Outcome("interrupted", "stopped by the referee at the end of the match", "controller")
    except HarnessNotStarted as error:
        report = guest.parser.finish()
        outcome = Outcome("harness_error", f"{harness.adapter_id}: {error}", "harness")
    except AoeError as error:  # SSH to the guest failed before or after the run
        report = guest.parser.finish()
        outcome = Outcome(
            "interrupted" if run.stream_bytes else "harness_error",
            str(error),
            "arena" if run.stream_bytes else "harness",
        )
    outputs.final(
        outcome,
        reported_usage(report, len(report.tool_trace)),
        transcript(harness, settings, report, outcome, prompt, guest.resumed),
    )
    _log(scrub, f"{harness.adapter_id}: {outcome.status}: {outcome.summary[:200]}")
    try:
        await asyncio.wait_for(ssh.close(), 2)
    except TimeoutError:
        pass
    return 0


def _log(scrub: Scrubber, line: str) -> None:
    print(scrub(f"[harness] {line}"), file=sys.stderr, flush=True)


def main(adapter_id: str, env: Mapping[str, str]) -> int:
    harness = HARNESS_MODULES.get(adapter_id)
    if harness is None:
        print(f"unknown harness {adapter_id!r} (known: {', '.join(sorted(HARNESS_MODULES))})", file=sys.stderr)
        return 2
    try:
        settings = HarnessSettings.from_env(env)
    except AoeError as error:
        print(Scrubber(environment_secrets(env))(str(error)), file=sys.stderr)
        return 2
    return asyncio.run(run_in_guest(harness, settings, env))
