"""Waiting for sshd's greeting through a forward that accepts everything: fast, on loopback servers.

QEMU's user-mode forward accepts every connection at once and loses those opened before the guest has an
address (they stay silent); once the guest is up, a connection greets, or is refused while sshd is not yet
listening. The wait must notice a greeting as soon as the guest says it is up, keep one connection open at a time
(each one opened reaches sshd in the end), and never take anything but sshd's greeting for one.
"""

from __future__ import annotations

import asyncio
import socket
import time
from unittest import mock

from aoe_tui.runtime import ssh_greeting
from aoe_tui.runtime.ssh_greeting import first_greeting

GREETING = b"SSH-2.0-OpenSSH_9.2p1\r\n"


class Forward:
    """A loopback listener like the forward: connections accepted before `up_at` stay silent for good;
    later ones are greeted after `greet_delay` seconds with `greeting`."""

    def __init__(self, up_at: float, greet_delay: float = 0.0, greeting: bytes = GREETING) -> None:
        self.up_at = up_at
        self.greet_delay = greet_delay
        self.greeting = greeting
        self.accepted = 0
        self._held: list[asyncio.StreamWriter] = []

    async def __aenter__(self) -> Forward:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *_exc: object) -> None:
        for writer in self._held:
            writer.close()
        self.server.close()

    async def _serve(self, _reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        self._held.append(writer)
        if time.monotonic() < self.up_at:
            return  # lost on its way to a guest without an address: silent
        await asyncio.sleep(self.greet_delay)
        writer.write(self.greeting)


async def test_a_greeting_is_seen_as_soon_as_the_guest_says_it_is_up() -> None:
    async with Forward(up_at=time.monotonic() + 1.0) as forward:
        up = lambda: time.monotonic() >= forward.up_at  # noqa: E731 (the console's login prompt)
        started = time.monotonic()
        sock = await first_greeting("127.0.0.1", forward.port, 10, up, patience=5)
        waited = time.monotonic() - started
    assert sock is not None
    assert sock.recv(64, socket.MSG_PEEK) == GREETING  # still unread: the SSH handshake reads it
    sock.close()
    assert 1.0 <= waited < 1.5  # not the patience of the silent connection opened before
    assert forward.accepted == 2  # that one and a fresh one: the guest is never flooded


async def test_without_word_from_the_guest_a_silent_connection_is_replaced_after_its_patience() -> None:
    async with Forward(up_at=time.monotonic() + 0.3) as forward:
        started = time.monotonic()
        sock = await first_greeting("127.0.0.1", forward.port, 10, patience=1.0)
        assert sock is not None
        sock.close()
    assert 1.0 <= time.monotonic() - started < 1.5 and forward.accepted == 2


async def test_a_slow_greeting_is_waited_for_on_one_connection() -> None:
    async with Forward(up_at=0, greet_delay=1.0) as forward:
        sock = await first_greeting("127.0.0.1", forward.port, 10, patience=5)
        assert sock is not None
        sock.close()
        assert forward.accepted == 1


async def test_a_refused_port_is_retried_at_a_measured_pace_until_the_time_is_up() -> None:
    attempts = 0
    real = ssh_greeting._greeted

    async def counted(*args):
        nonlocal attempts
        attempts += 1
        return await real(*args)

    with socket.socket() as probe, mock.patch.object(ssh_greeting, "_greeted", counted):
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, never listening: refused
        started = time.monotonic()
        assert await first_greeting("127.0.0.1", port, 1.0) is None
    assert 1.0 <= time.monotonic() - started < 1.4
    assert 3 <= attempts <= 5  # one each RETRY_S


async def test_only_an_ssh_greeting_counts() -> None:
    async with Forward(up_at=0, greeting=b"HTTP/1.1 400 Bad Request\r\n") as forward:
        assert await first_greeting("127.0.0.1", forward.port, 0.8, patience=0.5) is None


async def test_once_up_a_silent_connection_is_soon_replaced_but_never_in_a_flood() -> None:
    async with Forward(up_at=time.monotonic() + 2.5) as forward:  # the network comes up after the prompt
        started = time.monotonic()
        sock = await first_greeting("127.0.0.1", forward.port, 10, lambda: True, patience=8)
        assert sock is not None
        sock.close()
    assert 3.0 <= time.monotonic() - started < 3.5  # replaced after 1 s and 2 s: the third greets
    assert forward.accepted == 3
