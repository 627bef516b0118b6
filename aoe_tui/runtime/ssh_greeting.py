"""The first moment a guest's sshd greets, without losing seconds to its port forward, nor flooding it.

A guest's SSH is reached through QEMU's user-mode forward, which accepts every TCP connection at once
and only then tries the guest. While the guest has no address yet (its kernel and DHCP are still
starting) that try is lost and repeated on the forward's own backoff, seconds apart, so a connection
opened early sits silent well past the moment sshd starts: the referee's reboot lost 3-9 s to it
after every reboot, waiting out an 8 s SSH attempt begun before the guest's network was up. Nor can
the host give up on such a connection: the forward does not look at the host's side until the guest
answers, so every connection opened while the guest is down reaches its sshd later, which forks and
starts a child for each (benchmarks/reboot.py saw a probe every 0.2 s through a reboot delay the
guest's SSH by a minute, on a busy host).

So one connection is open at a time: refused (the guest is on the network, its sshd not yet), it is
tried again a moment later; silent, it is kept for `patience` seconds (a guest busy booting under TCG
can take seconds to greet), unless the guest says it has come up (`reachable`: the referee watches
its serial console for the login prompt) after it was opened: then a fresh one is opened, and replaced
after 1 s, 2 s, 4 s... while it stays silent (the guest's DHCP may finish seconds after its prompt: a
few connections are held for it, never a flood).
The caller then runs the SSH handshake on the greeted socket, for as long as it needs.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable

PATIENCE_S = 8.0
# Once the guest says it is up, a silent connection is replaced after 1 s, then 2, 4, ... up to PATIENCE_S:
# its network may come up seconds after the login prompt (DHCP), and its sshd may greet slowly.
HURRIED_PATIENCE_S = 1.0
RETRY_S = 0.25  # after a refusal; also how often `reachable` is asked
_GREETING = b"SSH-"


def always() -> bool:
    return True


async def first_greeting(
    host: str, port: int, seconds: float, reachable: Callable[[], bool] = always, patience: float = PATIENCE_S
) -> socket.socket | None:
    """A connected socket whose peer has sent sshd's greeting (still unread), or None after `seconds`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    hurried = HURRIED_PATIENCE_S
    while (left := deadline - loop.time()) > 0:
        opened_reachable = reachable()
        wait = patience
        if opened_reachable and reachable is not always:  # up, but maybe not yet on its network: try again soon
            wait, hurried = hurried, min(2 * hurried, patience)
        attempt = asyncio.ensure_future(_greeted(host, port, min(wait, left)))
        try:
            while not attempt.done() and (opened_reachable or not reachable()):
                await asyncio.wait({attempt}, timeout=RETRY_S)
        except BaseException:
            _discard(attempt)
            raise
        if not attempt.done():  # opened before the guest came up: a fresh one reaches it at once
            _discard(attempt)
            continue
        if (greeted := attempt.result()) is not None:
            return greeted
        if loop.time() - (deadline - left) < wait:  # refused, not merely silent: again in a moment
            await asyncio.sleep(min(RETRY_S, max(deadline - loop.time(), 0)))
    return None


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
        if head and _GREETING.startswith(head):
            return sock
    except (OSError, TimeoutError):
        pass
    except asyncio.CancelledError:
        sock.close()
        raise
    sock.close()
    return None


def _discard(attempt: asyncio.Task[socket.socket | None]) -> None:
    """Stop an attempt (it closes its own socket), or close the socket it found a moment too late."""
    if not attempt.done():
        attempt.cancel()
    elif not attempt.cancelled() and attempt.exception() is None and (greeted := attempt.result()) is not None:
        greeted.close()


async def _readable(loop: asyncio.AbstractEventLoop, sock: socket.socket) -> None:
    ready: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(sock, readable)
    try:
        await ready
    finally:
        loop.remove_reader(sock)
