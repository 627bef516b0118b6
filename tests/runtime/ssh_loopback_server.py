"""A real SSH server on loopback for fast tests of the referee's SSH client.

Run as its own process (so its memory is not the client's): asyncssh accepts
only the given client key and runs each command with /bin/sh on this host,
its pipes wired straight to the channel, just as sshd would. Prints "ready"
once listening.

usage: python ssh_loopback_server.py PORT HOST_KEY AUTHORIZED_KEYS
"""

import asyncio
import subprocess
import sys

import asyncssh


async def handle(process: asyncssh.SSHServerProcess) -> None:
    local = subprocess.Popen(["/bin/sh", "-c", process.command or "true"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    await process.redirect(stdin=local.stdin, stdout=local.stdout, stderr=local.stderr)
    process.exit(await asyncio.to_thread(local.wait))


async def main(port: int, host_key: str, authorized_keys: str) -> None:
    await asyncssh.listen("127.0.0.1", port, server_host_keys=[host_key], authorized_client_keys=authorized_keys,
                          process_factory=handle, encoding=None)
    print("ready", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], sys.argv[3]))
