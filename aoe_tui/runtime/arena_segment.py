"""The arena segment's hub: the one L2 network a conquest's guests share, and nothing else.

Each guest's arena NIC is a QEMU `dgram` netdev (`domain_xml.ArenaNic`): every
Ethernet frame it sends is one UDP datagram from its own loopback port to
this hub's, and the hub repeats it to every other member's port, as a hub
repeats a frame to its other ports. Everything is on 127.0.0.1, so frames
never reach the host's network stack as packets (no bridge, tap, host address
or route exists for them) and no multicast is used at all. A datagram from a
port that is not a member is dropped (another local process cannot join the
segment by sending to the hub), and a frame is at most `MAX_FRAME` bytes.

Ports: the hub takes the match's first port number and the guests the next
ones, as UDP ports: those numbers are the match's own (its TCP reservation is
locked per match), so two matches never share a segment. The hub lives in the
match's event loop and closes with the match; nothing outlives it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from aoe_tui.runtime.ports import LOOPBACK

MAX_FRAME = 65535


@dataclass
class SegmentHub(asyncio.DatagramProtocol):
    port: int
    members: dict[int, str]  # guest UDP port -> territory id
    frames: dict[str, int] = field(default_factory=dict)  # frames repeated, per sending territory
    dropped: int = 0
    transport: asyncio.DatagramTransport | None = None

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.create_datagram_endpoint(lambda: self, local_addr=(LOOPBACK, self.port))

    # asyncio hands a datagram endpoint's protocol a DatagramTransport (BaseProtocol declares the base class)
    def connection_made(self, transport: asyncio.DatagramTransport) -> None:  # type: ignore[override]
        self.transport = transport

    def datagram_received(self, data: bytes, addr: tuple[str | Any, int]) -> None:
        host, port = addr[0], addr[1]
        sender = self.members.get(port) if host == LOOPBACK else None
        if sender is None or len(data) > MAX_FRAME or self.transport is None:
            self.dropped += 1
            return
        self.frames[sender] = self.frames.get(sender, 0) + 1
        for member in self.members:
            if member != port:
                self.transport.sendto(data, (LOOPBACK, member))

    def error_received(self, exc: Exception) -> None:
        pass  # a member whose QEMU is gone (eliminated, powered off): its port refuses, the others go on

    def close(self) -> None:
        transport, self.transport = self.transport, None
        if transport is not None:
            transport.close()
