"""Runs one scripted builder plan as a protocol-speaking adapter process.

Every step is a real `ssh` command into the territory (or, for a step marked
`on_host`, a bash command on the host, run as the adapter itself); each becomes a tool
call in the live trace (`tool_trace.jsonl`), usage is checkpointed after each
call, and the transcript and `result.json` are handed in at the end. SIGTERM
(the referee's "match is over") hands in what exists with status
`interrupted`; an SSH session cut mid-step (the referee rebooted the guest)
does the same.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from aoe_tui.agents import protocol as p
from aoe_tui.agents.scripted.base import Plan, Step
from aoe_tui.domain.head_tail import HeadTail

SSH_LOST = 255
_OUTPUT_LIMIT = 4000
_OUTPUT_CAP_BYTES = 8 * 1024 * 1024


class Stopped(Exception):
    """The referee asked us to stop (SIGTERM)."""


class Builder:
    def __init__(self, plan: Plan, env: dict[str, str]) -> None:
        self.plan = plan
        self.env = env
        self.agent = env[p.ENV_AGENT_ID]
        self.territory = env[p.ENV_TERRITORY_ID]
        self.started = time.monotonic()
        self.trace: list[dict[str, Any]] = []
        self.current: subprocess.Popen[bytes] | None = None

    def elapsed_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)

    def ssh_command(self, command: str) -> list[str]:
        e = self.env
        return [
            "ssh",
            "-q",
            "-F",
            "/dev/null",
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "IdentityAgent=none",
            "-i",
            e[p.ENV_SSH_KEY],
            "-o",
            f"UserKnownHostsFile={e[p.ENV_KNOWN_HOSTS]}",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=15",
            "-o",
            "ServerAliveInterval=5",
            "-o",
            "ServerAliveCountMax=2",
            "-p",
            e[p.ENV_SSH_PORT],
            f"{e.get(p.ENV_SSH_USER, 'root')}@{e[p.ENV_TERRITORY_HOST]}",
            command,
        ]

    def run_step(self, step: Step) -> int:
        started_after = self.elapsed_ms()
        argv = ["bash", "-c", step.command] if step.on_host else self.ssh_command(step.command)
        self.current = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        output, capped = read_bounded(self.current)
        code = self.current.wait()
        self.current = None
        cut = f"\n[killed: more than {_OUTPUT_CAP_BYTES // 2**20} MiB of output]" if capped else ""
        entry = {
            "id": f"call-{len(self.trace) + 1:03d}",
            "name": "Bash",
            "input": {
                "command": step.command,
                "description": step.description,
                **({"where": "host"} if step.on_host else {}),
            },
            "output": output.text() + cut + ("" if code == 0 else f"\n[exit {code}]"),
            "is_error": code != 0,
            "started_after_ms": started_after,
            "duration_ms": self.elapsed_ms() - started_after,
        }
        self.trace.append(entry)
        p.append_jsonl(Path(self.env[p.ENV_TOOL_TRACE_FILE]), entry)
        self.checkpoint_usage()
        print(f"[{entry['id']}] {step.description}: exit {code}", flush=True)
        return code

    def usage(self) -> dict[str, Any]:
        return p.Usage(resource_units=len(self.trace), tool_calls=len(self.trace), rounds=len(self.trace)).model_dump()

    def checkpoint_usage(self) -> None:
        p.write_json_atomic(Path(self.env[p.ENV_USAGE_FILE]), self.usage())

    def hand_in(self, status: str, summary: str) -> None:
        transcript = {
            "schema_version": 1,
            "model": self.env.get(p.ENV_MODEL, f"scripted/{self.plan.name}"),
            "outcome": {"status": status, "result": summary},
            "usage": {
                "input_tokens": None,
                "output_tokens": None,
                "cache_read_tokens": None,
                "cache_creation_tokens": None,
                "cost_usd": None,
            },
            "messages": [
                {"role": "user", "content": _read(self.env.get(p.ENV_INSTRUCTION_FILE))},
                {"role": "assistant", "content": summary},
            ],
            "tool_trace": self.trace,
            "timing": {"total_duration_ms": self.elapsed_ms(), "model_rounds": []},
        }
        p.write_json_atomic(Path(self.env[p.ENV_TRANSCRIPT_FILE]), transcript)
        p.write_json_atomic(
            Path(self.env[p.ENV_RESULT_FILE]),
            {
                "schema_version": 1,
                "agent": self.agent,
                "territory": self.territory,
                "status": status,
                "summary": summary,
                "usage": self.usage(),
                "transcript": Path(self.env[p.ENV_TRANSCRIPT_FILE]).name,
            },
        )

    def run(self) -> int:
        self.checkpoint_usage()
        try:
            for step in self.plan.steps:
                time.sleep(step.think_seconds)
                code = self.run_step(step)
                if code == SSH_LOST:
                    self.hand_in("interrupted", f"SSH session lost during: {step.description}")
                    return 0
                if code != 0:
                    self.hand_in("failed", f"step failed (exit {code}): {step.description}")
                    return 0
        except Stopped:
            if self.current is not None:
                self.current.kill()
            self.hand_in(
                "interrupted",
                f"stopped by the referee after {len(self.trace)} tool calls; {self.plan.summary}"
                if self.trace
                else "stopped before the first tool call",
            )
            return 0
        self.hand_in("completed", self.plan.summary)
        return 0


def read_bounded(process: subprocess.Popen[bytes]) -> tuple[HeadTail, bool]:
    """A step's output as head+tail while it streams; past the cap the step is killed (True)."""
    stdout = process.stdout
    # Started with stdout=PIPE and the default buffering: a BufferedReader, whose read1 returns what is there.
    if not isinstance(stdout, io.BufferedReader):
        raise TypeError("read_bounded reads a process started with stdout=subprocess.PIPE")
    output = HeadTail(_OUTPUT_LIMIT)
    while chunk := stdout.read1(64 * 1024):
        output.add(chunk)
        if output.total > _OUTPUT_CAP_BYTES:
            process.kill()
            return output, True
    return output, False


def _read(path: str | None) -> str:
    try:
        return Path(path).read_text() if path else ""
    except OSError:
        return ""


def _raise_stopped(_signum: int, _frame: object) -> None:
    raise Stopped()


def main(plan: Plan) -> int:
    missing = [
        name
        for name in (
            p.ENV_AGENT_ID,
            p.ENV_TERRITORY_ID,
            p.ENV_TERRITORY_HOST,
            p.ENV_SSH_PORT,
            p.ENV_SSH_KEY,
            p.ENV_KNOWN_HOSTS,
            p.ENV_RESULT_FILE,
            p.ENV_USAGE_FILE,
            p.ENV_TOOL_TRACE_FILE,
            p.ENV_TRANSCRIPT_FILE,
        )
        if not os.environ.get(name)
    ]
    if missing:
        print(f"scripted {plan.name}: missing environment {', '.join(missing)}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _raise_stopped)
    return Builder(plan, dict(os.environ)).run()
