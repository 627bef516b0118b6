"""One managed asyncssh connection to a guest.

Guests reboot under us (that is half the game), so the connection is re-made
on demand, and a dead guest is told apart from a slow one by asking the
hypervisor instead of waiting out a timeout. Remote commands run in their own
session so a timeout can kill the whole process tree in the guest, not just
close our channel and leave an agent's runaway loop behind. Their output is
streamed into bounded head+tail buffers and the command is killed once it has
sent `output_cap_bytes`: a guest's `yes` must not grow the referee.
"""

from __future__ import annotations

import asyncio
import shlex
import socket
import time
import uuid
from pathlib import Path
from typing import NamedTuple
from collections.abc import Awaitable, Callable

import asyncssh

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.head_tail import DEFAULT_KEEP, HeadTail
from aoe_tui.runtime.keys import MatchKeys, host_pattern
from aoe_tui.runtime.ssh_greeting import PATIENCE_S, always, first_greeting

Liveness = Callable[[], Awaitable[bool]]
RUN_DIR = "/run/aoe-run"
LOOPBACK_HOST = "127.0.0.1"  # both ends of a forward: the guest's own loopback and the host's
DEFAULT_CONNECT_TIMEOUT_S = 30.0
# How long to wait for sshd's greeting before asking the hypervisor again whether the guest still runs
# (twice an attempt's patience: a silent attempt is seldom cut short by it).
_LIVENESS_EVERY_S = 2 * PATIENCE_S
# Past this much output (stdout + stderr) a command is killed: nobody reads 8 MiB of a tool's output.
OUTPUT_CAP_BYTES = 8 * 1024 * 1024
_READ_CHUNK = 64 * 1024


class CommandResult(NamedTuple):
    """A finished command. `truncated`: the middle of an output was dropped (head and tail kept);
    `capped`: the command was killed for sending more than the output cap (exit_status is then -1)."""

    exit_status: int
    stdout: str
    stderr: str
    truncated: bool = False
    capped: bool = False


class SSHUnavailable(AoeError):
    """SSH did not answer in time (the guest may still be booting or broken)."""


class GuestGone(AoeError):
    """The guest's domain no longer runs; retrying cannot help."""


class RemoteTimeout(AoeError):
    """A remote command overran its timeout and was killed with its process group."""

    def __init__(self, message: str, stdout: str, stderr: str) -> None:
        super().__init__(message)
        self.stdout = stdout
        self.stderr = stderr


def wrap_in_session(command: str, token: str) -> str:
    """Run `command` as leader of a fresh session whose id is saved under RUN_DIR/token.

    `setsid -w` keeps the SSH channel open until the command ends and passes
    its exit status through; the saved id lets us kill the whole group.
    """
    pid_file = f"{RUN_DIR}/{token}"
    inner = f'echo $$ > {pid_file}; sh -c "$1"; status=$?; rm -f {pid_file}; exit $status'
    return f"mkdir -p {RUN_DIR} && exec setsid -w sh -c {shlex.quote(inner)} aoe-run {shlex.quote(command)}"


def kill_session_command(token: str) -> str:
    """Kill the saved group. `-s KILL --`: dash (Debian's sh) rejects `kill -KILL -- -PGID`."""
    pid_file = f"{RUN_DIR}/{token}"
    return f"test -s {pid_file} && kill -s KILL -- -$(cat {pid_file}); rm -f {pid_file}"


class GuestSSH:
    def __init__(
        self,
        label: str,
        host: str,
        port: int,
        keys: MatchKeys,
        is_alive: Liveness | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_S,
        output_keep: int = DEFAULT_KEEP,
        output_cap_bytes: int = OUTPUT_CAP_BYTES,
        host_key: str | None = None,
    ) -> None:
        self.label = label
        self.host_key = host_key  # known beforehand ("ssh-ed25519 AAAA..."): pinned as given, never learnt
        self.output_keep = output_keep
        self.output_cap_bytes = output_cap_bytes
        self.host = host
        self.port = port
        self.keys = keys
        self.connect_timeout = connect_timeout
        self._is_alive = is_alive
        self._connection: asyncssh.SSHClientConnection | None = None
        self._lock = asyncio.Lock()
        self._forwards: dict[int, int] = {}  # guest loopback port -> host loopback port, on every connection
        # Whether the guest has said it is up (its console's login prompt), while it boots: see runtime.ssh_greeting.
        self.reachable: Callable[[], bool] = always

    @property
    def connected(self) -> bool:
        return self._connection is not None and not self._connection.is_closed()

    async def connect(self, timeout: float | None = None) -> asyncssh.SSHClientConnection:
        """The live connection, (re)connecting with retries for up to `timeout` seconds."""
        async with self._lock:
            if self._connection is not None and not self._connection.is_closed():
                return self._connection
            connection = await self._connect_with_retries(timeout or self.connect_timeout)
            for guest_port, host_port in self._forwards.items():
                await self._open_forward(connection, guest_port, host_port)
            self._connection = connection
            return connection

    async def _connect_with_retries(self, timeout: float) -> asyncssh.SSHClientConnection:
        """Wait for sshd's greeting (runtime.ssh_greeting), then log in on that very connection, however long
        a busy guest takes: a handshake cut short by a fixed bound would only be started again from scratch."""
        deadline = time.monotonic() + timeout
        last_error = "sshd never greeted"
        while True:
            await self._fail_if_gone()
            left = min(deadline - time.monotonic(), _LIVENESS_EVERY_S)
            greeted = await first_greeting(self.host, self.port, left, self.reachable)
            if greeted is not None:
                try:
                    return await self._connect_once(greeted, max(deadline - time.monotonic(), 1.0))
                except asyncssh.HostKeyNotVerifiable as error:
                    pinned_in = "" if self.host_key is not None else f" in {self.keys.known_hosts_path}"
                    raise AoeError(
                        f"{self.label}: SSH host key of {self.host}:{self.port} does not match the one pinned"
                        f"{pinned_in} ({error.reason})"
                    ) from None
                except (TimeoutError, OSError, asyncssh.Error) as error:
                    last_error = _describe(error)
            if time.monotonic() >= deadline:
                await self._fail_if_gone()
                raise SSHUnavailable(
                    f"{self.label}: SSH on {self.host}:{self.port} did not answer within {timeout:.0f} s "
                    f"(last error: {last_error})"
                )

    async def _connect_once(self, greeted: socket.socket, timeout: float) -> asyncssh.SSHClientConnection:
        known_hosts: asyncssh.SSHKnownHosts | str | None
        if self.host_key is not None:
            pinned = True
            known_hosts = asyncssh.import_known_hosts(f"{host_pattern(self.host, self.port)} {self.host_key}\n")
        else:
            pinned = self.keys.pinned_line(self.host, self.port) is not None
            known_hosts = str(self.keys.known_hosts_path) if pinned else None
        try:
            connection = await asyncssh.connect(
                self.host,
                self.port,
                sock=greeted,
                username="root",
                client_keys=[self.keys.client_key()],
                known_hosts=known_hosts,
                connect_timeout=timeout,
                login_timeout=timeout,
                keepalive_interval=5,
                keepalive_count_max=3,
                agent_path=None,
                config=[],
                preferred_auth="publickey",
            )
        except BaseException:
            greeted.close()  # the connection owns the socket once made; a failed one must not leave it open
            raise
        if not pinned:
            key = connection.get_server_host_key()
            if key is None:  # only a key exchange without host keys (GSS) gives none; our guests never offer one
                connection.close()
                raise AoeError(f"{self.label}: SSH on {self.host}:{self.port} offered no host key to pin")
            self.keys.pin(self.host, self.port, key)
        return connection

    async def _fail_if_gone(self) -> None:
        if self._is_alive is not None and not await self._is_alive():
            raise GuestGone(
                f"{self.label}: the guest is gone (its VM is not running); SSH to {self.host}:{self.port} is impossible"
            )

    async def run(self, command: str, timeout: float, input: bytes | str | None = None) -> CommandResult:
        """Run a shell command as root; on timeout kill its whole process tree and raise RemoteTimeout.

        Output is kept as head+tail (`output_keep` bytes per stream); past `output_cap_bytes` in all the
        command is killed and the result is marked `capped`.
        """
        connection = await self.connect()
        token = uuid.uuid4().hex
        data = input.encode() if isinstance(input, str) else input
        stdout, stderr = HeadTail(self.output_keep), HeadTail(self.output_keep)
        try:
            process = await connection.create_process(wrap_in_session(command, token), encoding=None)
            try:
                status = await asyncio.wait_for(self._stream(process, data, stdout, stderr), timeout)
            finally:
                process.close()
        except TimeoutError:
            await self._kill_session(connection, token)
            raise RemoteTimeout(
                f"{self.label}: `{_short(command)}` did not finish within {timeout:g} s and was killed",
                stdout.text(),
                stderr.text(),
            ) from None
        except _CapReached:
            await self._kill_session(connection, token)
            return CommandResult(-1, stdout.text(), stderr.text(), truncated=True, capped=True)
        except (OSError, asyncssh.Error) as error:
            self.drop()
            await self._fail_if_gone()
            raise AoeError(
                f"{self.label}: SSH connection lost while running `{_short(command)}`: {_describe(error)}"
            ) from None
        return CommandResult(status, stdout.text(), stderr.text(), stdout.truncated or stderr.truncated)

    async def _stream(
        self, process: asyncssh.SSHClientProcess, data: bytes | None, stdout: HeadTail, stderr: HeadTail
    ) -> int:
        """Feed stdin, pump both outputs into their buffers until EOF; the exit status (-1: none)."""

        async def feed() -> None:
            try:
                if data:
                    process.stdin.write(data)
                    await process.stdin.drain()
                process.stdin.write_eof()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the command ended without reading all its input; its status tells what happened

        async def pump(reader: asyncssh.SSHReader, buffer: HeadTail) -> None:
            while chunk := await reader.read(_READ_CHUNK):
                buffer.add(chunk)
                if stdout.total + stderr.total > self.output_cap_bytes:
                    raise _CapReached()

        tasks = [
            asyncio.ensure_future(job) for job in (feed(), pump(process.stdout, stdout), pump(process.stderr, stderr))
        ]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        await process.wait_closed()
        return process.returncode if process.returncode is not None else -1

    async def _kill_session(self, connection: asyncssh.SSHClientConnection, token: str) -> None:
        try:
            await connection.run(kill_session_command(token), check=False, timeout=10)
        except (OSError, asyncssh.Error):
            self.drop()  # the guest went away mid-command; nothing left to kill

    async def write_file(self, remote: str, data: bytes, mode: int = 0o644, timeout: float = 60.0) -> None:
        """Atomically replace `remote` with `data` (temp file + rename in the same directory)."""
        temporary = f"{remote}.aoe-{uuid.uuid4().hex[:8]}"
        command = (
            f"mkdir -p {shlex.quote(str(Path(remote).parent))} && cat > {shlex.quote(temporary)} && "
            f"chmod {mode:o} {shlex.quote(temporary)} && mv -f {shlex.quote(temporary)} {shlex.quote(remote)}"
        )
        result = await self.run(command, timeout, input=data)
        if result.exit_status != 0:
            raise AoeError(f"{self.label}: could not write {remote}: {result.stderr.strip() or result.exit_status}")

    async def upload(self, local: Path, remote: str, timeout: float = 60.0) -> None:
        local = Path(local)
        try:
            data, mode = local.read_bytes(), local.stat().st_mode & 0o777
        except OSError as error:
            raise AoeError(f"{local}: cannot read file to upload to {self.label}: {error.strerror}") from None
        await self.write_file(remote, data, mode, timeout)

    async def forward_to_host(self, guest_port: int, host_port: int) -> None:
        """Listen on the guest's own 127.0.0.1:`guest_port` and carry each connection, over this SSH connection, to
        the host's 127.0.0.1:`host_port`: how a harness inside its guest reaches the match's model gateway, with
        no route out of the guest. Kept for good: every later connection (after a reboot) opens it again."""
        await self._open_forward(await self.connect(), guest_port, host_port)
        self._forwards[guest_port] = host_port  # after: a connection made just now must not open it twice

    async def _open_forward(self, connection: asyncssh.SSHClientConnection, guest_port: int, host_port: int) -> None:
        try:
            await connection.forward_remote_port(LOOPBACK_HOST, guest_port, LOOPBACK_HOST, host_port)
        except (OSError, asyncssh.Error) as error:
            raise AoeError(
                f"{self.label}: cannot forward the guest's 127.0.0.1:{guest_port} to the host's port {host_port}: "
                f"{_describe(error)}"
            ) from None

    def drop(self) -> None:
        """Forget the connection without a goodbye: the guest is resetting or gone."""
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.abort()

    async def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            await close_gracefully(connection)


async def close_gracefully(connection: asyncssh.SSHClientConnection, seconds: float = 5) -> None:
    """Say goodbye, and abort when the other side does not answer it within `seconds` (a stalled guest or host)."""
    connection.close()
    try:
        await asyncio.wait_for(connection.wait_closed(), seconds)
    except (TimeoutError, OSError, asyncssh.Error):
        connection.abort()


class _CapReached(Exception):
    """The command sent more output than the cap allows."""


def _short(command: str, limit: int = 60) -> str:
    flat = " ".join(command.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _describe(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return " ".join(text.split())
