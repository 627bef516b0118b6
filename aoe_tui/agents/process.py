"""One running adapter process, as the referee sees it.

The adapter runs in its own session/process group, so pausing the match can
SIGSTOP everything it started (ssh, a model client, ...) and the drain can
kill the whole group at the deadline. Stopping politely is SIGTERM: the
protocol asks an adapter to hand in `result.json` (status `interrupted`) and
exit.

An external adapter runs confined (`sandbox.py`): its own uid, a read-only
view of the host with only its agent folder writable, loopback reaching only
its own guest. The confinement is undone once the process is gone.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import BinaryIO

from aoe_tui.agents.protocol import AgentFiles, AgentResult, Usage, read_result, read_usage
from aoe_tui.agents.sandbox import PreparedSandbox, Sandbox


class AgentProcess:
    def __init__(self, agent_id: str, territory_id: str, files: AgentFiles) -> None:
        self.agent_id = agent_id
        self.territory_id = territory_id
        self.files = files
        self._process: asyncio.subprocess.Process | None = None
        self._stdout: BinaryIO | None = None
        self._stderr: BinaryIO | None = None
        self._sandbox: PreparedSandbox | None = None
        self.reaper: asyncio.Future | None = None  # the referee watches it: a failed release is recorded

    async def start(
        self, command: list[str], env: dict[str, str], sandbox: Sandbox | None = None, cwd: Path | None = None
    ) -> None:
        """Start `command` with exactly `env` (nothing inherited), confined by `sandbox` when given."""
        self.files.directory.mkdir(parents=True, exist_ok=True)
        self._stdout = open(self.files.stdout, "ab")  # noqa: SIM115  (the child's, closed once it has exited)
        self._stderr = open(self.files.stderr, "ab")  # noqa: SIM115  (likewise)
        self._sandbox = await asyncio.to_thread(sandbox.prepare) if sandbox else None
        argv = self._sandbox.argv(command) if self._sandbox else command
        try:
            self._process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=self._stdout,
                stderr=self._stderr,
                env=env,
                cwd=str(cwd) if cwd else None,
                start_new_session=True,
                pass_fds=tuple(self._sandbox.fds.values()) if self._sandbox else (),
            )
        except BaseException:
            self._release()
            raise
        finally:
            if self._sandbox:
                self._sandbox.close_fds()
        self.reaper = asyncio.ensure_future(self._close_when_exited(self._process))

    async def _close_when_exited(self, process: asyncio.subprocess.Process) -> None:
        """The referee may only poll `exited`; the logs and the confinement are undone as soon as it exits."""
        await process.wait()
        self._close_logs()

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    @property
    def exited(self) -> bool:
        return self._process is not None and self._process.returncode is not None

    @property
    def exit_code(self) -> int | None:
        return self._process.returncode if self._process else None

    def usage(self) -> Usage | None:
        return read_usage(self.files.usage)

    def result(self) -> AgentResult | None:
        return read_result(self.files.result)

    def _signal(self, signum: int) -> None:
        if self._process is not None and self._process.returncode is None:
            try:
                os.killpg(self._process.pid, signum)
            except (ProcessLookupError, PermissionError):
                pass

    async def suspend(self) -> None:
        self._signal(signal.SIGSTOP)

    async def resume(self) -> None:
        self._signal(signal.SIGCONT)

    async def request_stop(self) -> None:
        self._signal(signal.SIGCONT)
        self._signal(signal.SIGTERM)

    async def kill(self) -> None:
        self._signal(signal.SIGKILL)
        await self.wait(5)
        self._close_logs()

    async def wait(self, timeout: float) -> bool:
        """Wait for exit; True when it exited within `timeout` seconds."""
        if self._process is None:
            return True
        try:
            await asyncio.wait_for(self._process.wait(), timeout)
        except TimeoutError:
            return False
        self._close_logs()
        return True

    def _close_logs(self) -> None:
        for handle in (self._stdout, self._stderr):
            if handle is not None and not handle.closed:
                handle.close()
        self._release()

    def _release(self) -> None:
        sandbox, self._sandbox = self._sandbox, None
        if sandbox is not None:
            sandbox.release()
