"""The agent's three tools, executed in its guest over SSH.

Each call has a timeout (a runaway command is killed with its whole process
group) and an output cap (a `cat` of a log must not blow the model's context
or the budget; SSH keeps only head+tail while streaming and kills a command
past its byte cap, so `yes` cannot grow the harness either). A dropped connection usually means the referee is rebooting
the guest: the harness waits for SSH to come back, tells the model what
happened, and carries on; only a guest that stays unreachable ends the run.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import time
from dataclasses import dataclass
from typing import Any

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.ssh import GuestSSH, RemoteTimeout, SSHUnavailable

_CUT_GRACE_S = 0.5

DEFINITIONS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command as root on the host (sh -c). Returns stdout, stderr and the exit status. "
            "The command is killed when it exceeds its timeout; start long-running services with systemd, "
            "not in the foreground.",
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The shell command to run."},
                    "description": {
                        "type": "string",
                        "description": "Five to ten words saying what the command is for.",
                    },
                    "timeout_seconds": {
                        "type": "integer",
                        "description": "Kill the command after this many seconds (default 120).",
                    },
                },
                "required": ["command"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a text file on the host. Long files are cut off; use bash with sed -n for ranges.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Absolute path of the file."},
                },
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "description": "Create or replace a file on the host with exactly the given content (parent directories are created).",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Absolute path of the file."},
                    "content": {"type": "string", "description": "The complete new content."},
                },
                "required": ["path", "content"],
            },
        },
    },
]


@dataclass(frozen=True)
class ToolLimits:
    default_timeout_s: float = 120.0
    max_timeout_s: float = 900.0
    file_timeout_s: float = 30.0
    output_cap_chars: int = 16_000
    read_cap_bytes: int = 64_000
    reconnect_s: float = 240.0


@dataclass(frozen=True)
class ToolResult:
    """What the live trace and the transcript record, in the fixtures' vocabulary (Bash/Read/Write)."""

    name: str
    input: dict[str, Any]
    output: str
    is_error: bool
    read_only: bool


class GuestUnreachable(AoeError):
    """SSH stayed down for longer than the reconnect window: the run cannot continue."""


class GuestTools:
    def __init__(self, ssh: GuestSSH, limits: ToolLimits) -> None:
        self.ssh = ssh
        self.limits = limits

    async def call(self, name: str, arguments_text: str) -> ToolResult:
        try:
            arguments = json.loads(arguments_text or "{}")
            if not isinstance(arguments, dict):
                raise ValueError("not an object")
        except ValueError:
            return ToolResult(
                name, {"raw_arguments": arguments_text}, f"error: arguments of {name} are not a JSON object", True, True
            )
        handler = {"bash": self._bash, "read_file": self._read, "write_file": self._write}.get(name)
        if handler is None:
            return ToolResult(
                name, arguments, f"error: unknown tool {name!r}; use bash, read_file or write_file", True, True
            )
        try:
            return await handler(arguments)
        except (KeyError, TypeError) as error:
            return ToolResult(name, arguments, f"error: missing or invalid argument {error}", True, True)

    async def _bash(self, arguments: dict[str, Any]) -> ToolResult:
        command = str(arguments["command"])
        traced: dict[str, Any] = {"command": command, "description": str(arguments.get("description") or "")}
        timeout = self._timeout(arguments.get("timeout_seconds"))
        if arguments.get("timeout_seconds") is not None:
            traced["timeout"] = int(timeout * 1000)
        output, failed = await self._run(command, timeout)
        return ToolResult("Bash", traced, output, failed, False)

    async def _read(self, arguments: dict[str, Any]) -> ToolResult:
        path = str(arguments["path"])
        cap = self.limits.read_cap_bytes
        command = (
            f'f={shlex.quote(path)}; test -f "$f" || {{ echo "no such file: $f" >&2; exit 1; }}; '
            f'head -c {cap} "$f"; size=$(wc -c < "$f"); '
            f'[ "$size" -gt {cap} ] && printf \'\\n[file is %s bytes; only the first {cap} are shown]\' "$size"; true'
        )
        output, failed = await self._run(command, self.limits.file_timeout_s, show_status=False)
        return ToolResult("Read", {"file_path": path}, output, failed, True)

    async def _write(self, arguments: dict[str, Any]) -> ToolResult:
        path, content = str(arguments["path"]), str(arguments["content"])
        traced = {"file_path": path, "content": content}
        data = content.encode("utf-8")
        try:
            await self._with_reconnect(lambda: self.ssh.write_file(path, data, timeout=self.limits.file_timeout_s))
        except _Lost as lost:
            return ToolResult("Write", traced, lost.explanation, True, False)
        except RemoteTimeout:
            return ToolResult("Write", traced, f"error: writing {path} did not finish in time", True, False)
        except AoeError as error:
            return ToolResult("Write", traced, f"error: {error}", True, False)
        return ToolResult("Write", traced, f"Successfully wrote {len(data)} bytes to {path}", False, False)

    def _timeout(self, requested: Any) -> float:
        try:
            seconds = float(requested) if requested is not None else self.limits.default_timeout_s
        except (TypeError, ValueError):
            seconds = self.limits.default_timeout_s
        return min(max(seconds, 1.0), self.limits.max_timeout_s)

    async def _run(self, command: str, timeout: float, show_status: bool = True) -> tuple[str, bool]:
        try:
            result = await self._with_reconnect(lambda: self.ssh.run(command, timeout))
        except _Lost as lost:
            return lost.explanation, True
        except RemoteTimeout as error:
            text = self._cap(_join(error.stdout, error.stderr))
            return f"{text}\n[killed: the command did not finish within {timeout:g} s]".lstrip(), True
        body = self._cap(_join(result.stdout, result.stderr))
        if result.capped:
            return (
                f"{body.rstrip()}\n[killed: the command printed more than {self.ssh.output_cap_bytes // 2**20} MiB; "
                f"redirect big output to a file and read parts of it]"
            ).lstrip(), True
        if result.exit_status < 0 and (explanation := await self._check_connection_after_cut()):
            return f"{body.rstrip()}\n{explanation}".lstrip(), True
        if show_status:
            body = f"{body.rstrip()}\n[exit status {result.exit_status}]".lstrip()
        return body, result.exit_status != 0

    async def _with_reconnect(self, operation):
        """Run `operation`; if the connection drops, wait for the guest to come back (or give up)."""
        try:
            return await operation()
        except (RemoteTimeout, GuestUnreachable):
            raise
        except SSHUnavailable as error:
            raise GuestUnreachable(str(error)) from None
        except AoeError as error:
            if self.ssh.connected:
                raise
            raise _Lost(await self._reconnect(str(error))) from None

    async def _check_connection_after_cut(self) -> str | None:
        """A command ended without an exit status: killed by a signal, or sshd died because the host is
        going down. Tell them apart by the connection; reconnect and explain in the second case."""
        await asyncio.sleep(_CUT_GRACE_S)  # let the connection's own close arrive first
        if self.ssh.connected:
            try:
                await self.ssh.run("true", self.limits.file_timeout_s)
                return None
            except SSHUnavailable as error:
                raise GuestUnreachable(str(error)) from None
            except AoeError:
                pass
        return await self._reconnect("the session was cut")

    async def _reconnect(self, cause: str) -> str:
        lost_at = time.monotonic()
        try:
            await self.ssh.connect(self.limits.reconnect_s)
        except AoeError as error:
            raise GuestUnreachable(f"{cause}; reconnecting failed: {error}") from None
        return (
            f"error: the SSH connection to the host was lost during this call (the host may have rebooted); "
            f"reconnected after {time.monotonic() - lost_at:.0f} s. The call may or may not have taken effect; "
            f"check before repeating it."
        )

    def _cap(self, text: str) -> str:
        cap = self.limits.output_cap_chars
        if len(text) <= cap:
            return text
        half = cap // 2
        return f"{text[:half]}\n[... {len(text) - cap} characters omitted ...]\n{text[-half:]}"


class _Lost(Exception):
    def __init__(self, explanation: str) -> None:
        super().__init__(explanation)
        self.explanation = explanation


def _join(stdout: str, stderr: str) -> str:
    if stdout and stderr:
        return f"{stdout.rstrip()}\n[stderr]\n{stderr}"
    return stdout or stderr
