"""A real SSH server on loopback for fast tests of the referee's SSH client.

Run as its own process (so its memory is not the client's): asyncssh accepts
only the given client key and runs each command with /bin/sh on this host,
its pipes wired straight to the channel, just as sshd would. Prints "ready PORT"
once listening on a port of its own choosing. Tests start it with `running_server(directory)`.

usage: python ssh_loopback_server.py HOST_KEY AUTHORIZED_KEYS
"""

import asyncio
import contextlib
import subprocess
import sys
from pathlib import Path

import asyncssh


@contextlib.contextmanager
def running_server(directory: Path):
    """Yield (MatchKeys, port) of a fresh server authorizing a fresh client key in `directory`."""
    from aoe_tui.runtime.keys import MatchKeys

    keys = MatchKeys.ensure(directory / "client")
    host_key = directory / "host_key"
    host_key.write_bytes(asyncssh.generate_private_key("ssh-ed25519").export_private_key())
    # The server binds a port of the kernel's choosing and names it: two test workers never race for one.
    process = subprocess.Popen(
        [sys.executable, __file__, str(host_key), str(keys.public_key_path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        word, port = process.stdout.readline().split()
        assert word == "ready"
        yield keys, int(port)
    finally:
        process.kill()
        process.wait()


async def handle(process: asyncssh.SSHServerProcess) -> None:
    local = subprocess.Popen(
        ["/bin/sh", "-c", process.command or "true"],
        bufsize=0,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    feeding = asyncio.ensure_future(_feed(process.stdin, local.stdin))
    copies = [
        asyncio.ensure_future(_copy(pipe, to))
        for pipe, to in ((local.stdout, process.stdout), (local.stderr, process.stderr))
    ]
    status = await asyncio.to_thread(local.wait)
    await asyncio.gather(*copies)  # every byte out before the exit status: a loaded machine lost the tail
    process.exit(status)
    feeding.cancel()


async def _copy(pipe, channel: asyncssh.SSHWriter) -> None:
    """stdout and stderr by hand, to their end: asyncssh's redirect let `exit()` overtake the last bytes."""
    try:
        while data := await asyncio.to_thread(pipe.read, 65536):
            channel.write(data)
            await channel.drain()
    except (OSError, asyncssh.Error):
        pass  # the client went away
    finally:
        pipe.close()


async def _feed(channel: asyncssh.SSHReader, pipe) -> None:
    """stdin by hand: asyncssh's own stdin redirect was seen to drop data when the pipe backs up."""
    try:
        while data := await channel.read(65536):
            await asyncio.to_thread(pipe.write, data)
    except OSError:
        pass  # the command exited without reading everything
    finally:
        pipe.close()


async def main(host_key: str, authorized_keys: str) -> None:
    server = await asyncssh.listen(
        "127.0.0.1",
        0,
        server_host_keys=[host_key],
        authorized_client_keys=authorized_keys,
        process_factory=handle,
        encoding=None,
    )
    print("ready", server.get_port(), flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
