"""The first moment a guest's sshd greets, without losing seconds to its port forward.

A guest's SSH is reached through QEMU's user-mode forward, which accepts every TCP connection at once
and only then tries the guest. While the guest has no address yet (its kernel and DHCP are still
starting) that try is lost and repeated on the forward's own backoff, seconds apart, so a connection
opened early sits silent well past the moment sshd starts: the referee's reboot lost 3-9 s to it
after every reboot, waiting out an 8 s SSH attempt begun before the guest's network was up
(benchmarks/reboot.py). Once the guest is on the network, a closed port is refused at once.

So a fresh connection is opened every `stagger` seconds while none has greeted, each kept for up to
`patience` seconds (a guest busy booting under TCG can take seconds to send its greeting: a
connection that sshd accepted is not cut the moment it is slow, and a slow guest is never flooded
with more than patience / stagger of them); the first whose first bytes are sshd's "SSH-" wins and
the rest are closed. The caller then runs the SSH handshake on that socket for as long as it needs.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket

STAGGER_S = 1.0
PATIENCE_S = 6.0
_GREETING = b"SSH-"


async def first_greeting(
    host: str, port: int, seconds: float, stagger: float = STAGGER_S, patience: float = PATIENCE_S
) -> socket.socket | None:
    """A connected socket whose peer has sent sshd's greeting (still unread), or None after `seconds`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    pending: set[asyncio.Task[socket.socket | None]] = set()
    try:
        while deadline - loop.time() > 0:
            pending.add(asyncio.ensure_future(_greeted(host, port, min(patience, deadline - loop.time()))))
            next_open = min(loop.time() + stagger, deadline)
            while pending and (wait := next_open - loop.time()) > 0:
                done, pending = await asyncio.wait(pending, timeout=wait, return_when="FIRST_COMPLETED")
                if greeted := [sock for task in done if (sock := task.result()) is not None]:
                    for extra in greeted[1:]:
                        extra.close()
                    return greeted[0]
            if not pending:  # each was refused at once: the guest is up, its sshd not yet; again in a moment
                await asyncio.sleep(min(stagger / 4, max(deadline - loop.time(), 0)))
        return None
    finally:
        await _close_all(pending)


async def _greeted(host: str, port: int, patience: float) -> socket.socket | None:
    """One connection, if its peer greets like sshd within `patience`; closed otherwise."""
    loop = asyncio.get_running_loop()
    try:
        family, kind, proto, _, address = (await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM))[0]
    except OSError:
        return None
    sock = socket.socket(family, kind, proto)
    sock.setblocking(False)
    try:
        async with asyncio.timeout(patience):
            await loop.sock_connect(sock, address)
            await _readable(loop, sock)
        head = sock.recv(len(_GREETING), socket.MSG_PEEK)
        if head and _GREETING.startswith(head[: len(_GREETING)]):
            return sock
    except (OSError, TimeoutError):
        pass
    except asyncio.CancelledError:
        sock.close()
        raise
    sock.close()
    return None


async def _readable(loop: asyncio.AbstractEventLoop, sock: socket.socket) -> None:
    ready = loop.create_future()
    loop.add_reader(sock, lambda: ready.done() or ready.set_result(None))
    try:
        await ready
    finally:
        loop.remove_reader(sock)


async def _close_all(tasks: set[asyncio.Task[socket.socket | None]]) -> None:
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError):
            if (sock := await task) is not None:  # greeted just as the winner was chosen
                sock.close()
