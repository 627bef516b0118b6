"""The arena segment (First Contact): a second NIC on a QEMU dgram netdev to the match's hub, all on loopback.

No bridge, no tap, no host address, no multicast: the frames are unicast UDP
payloads between QEMU processes and the hub on 127.0.0.1, so the segment
cannot put a packet on the host's networks. The real-VM proof (tests/engine/test_vm_first_contact.py) tries the
host and the outside from inside a guest."""

from __future__ import annotations

import asyncio
import socket
import xml.etree.ElementTree as ET

from aoe_tui.runtime.arena_segment import SegmentHub
from aoe_tui.runtime.domain_xml import QEMU_NS, ArenaNic, arena_mac, render_domain_xml
from aoe_tui.runtime.image_layer import FIRST_CONTACT, LAYERS, layer_for
from aoe_tui.runtime.match_runtime import MatchRuntime, TerritorySpec
from tests.runtime.free_ports import free_base_port
from tests.runtime.test_domain_xml import _spec


def _args(spec) -> list[str]:
    root = ET.fromstring(render_domain_xml(spec))
    return [a.get("value") for a in root.findall(f"{{{QEMU_NS}}}commandline/{{{QEMU_NS}}}arg")]


def test_without_a_segment_a_guest_has_one_nic():
    args = _args(_spec())
    assert args.count("-netdev") == 1 and args.count("-device") == 1


def test_the_arena_nic_is_a_loopback_multicast_socket_with_the_originals_mac():
    args = _args(_spec(arena_nic=ArenaNic(arena_mac(11), 33202, 33200)))
    netdevs = [args[i + 1] for i, a in enumerate(args) if a == "-netdev"]
    devices = [args[i + 1] for i, a in enumerate(args) if a == "-device"]
    assert netdevs[1] == (
        "dgram,id=a0,local.type=inet,local.host=127.0.0.1,local.port=33202,"
        "remote.type=inet,remote.host=127.0.0.1,remote.port=33200"
    )
    assert devices[1] == "virtio-net-pci,netdev=a0,mac=52:54:00:77:00:0b,bus=pci.0,addr=0xa"
    assert "restrict=on" in netdevs[0] and "hostfwd=tcp:127.0.0.1:26000-:22" in netdevs[0]  # SSH: management only
    assert all("hostfwd" not in n for n in netdevs[1:])
    assert [arena_mac(o) for o in (10, 11, 12)] == ["52:54:00:77:00:0a", "52:54:00:77:00:0b", "52:54:00:77:00:0c"]


def test_first_contact_names_its_layer_and_the_originals_addresses():
    assert layer_for({"first-contact"}) is FIRST_CONTACT and layer_for({"debian-bookworm", None}) is None
    segment = FIRST_CONTACT.segment
    assert {t: segment.octet(t) for t in ("gatekeeper", "archivist", "courier")} == {
        "gatekeeper": 10,
        "archivist": 11,
        "courier": 12,
    }
    assert {"nginx", "postgresql-15", "redis-server", "redis-tools", "nftables"} <= set(FIRST_CONTACT.packages)
    assert set(LAYERS) == {"first-contact"}


def test_the_layer_hash_follows_the_base_and_the_recipe():
    assert FIRST_CONTACT.digest("aaaa") != FIRST_CONTACT.digest("bbbb")
    assert FIRST_CONTACT.digest("aaaa") == FIRST_CONTACT.digest("aaaa")


def test_each_match_has_its_own_segment_port(tmp_path):
    """The hub takes the match's first port, each member the next. (A free block of this suite's range: a fixed
    port in the kernel's ephemeral range was once taken by some connection's own end in CI.)"""
    specs = [TerritorySpec(t, 1, 768, arena_octet=o) for t, o in (("gatekeeper", 10), ("courier", 12))]
    base = free_base_port(territories=2)
    runtime = MatchRuntime(tmp_path, "m1", specs, base_port=base)
    try:
        assert runtime._arena_nic(specs[0]) == ArenaNic("52:54:00:77:00:0a", base + 1, base)
        assert runtime._arena_nic(specs[1]) == ArenaNic("52:54:00:77:00:0c", base + 2, base)
        assert runtime._arena_nic(TerritorySpec("plain", 1, 768)) is None
    finally:
        if runtime.reservation is not None:
            runtime.reservation.release()


async def test_the_hub_repeats_a_members_frame_to_the_other_members_only_and_drops_strangers():
    sockets = {}
    for name in ("a", "b", "c", "stranger"):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(0.5)
        sockets[name] = sock
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    hub_port = probe.getsockname()[1]
    probe.close()
    members = {sockets[n].getsockname()[1]: n for n in ("a", "b", "c")}
    hub = SegmentHub(hub_port, members)
    await hub.start()
    loop = asyncio.get_running_loop()
    try:
        sockets["a"].sendto(b"frame-from-a", ("127.0.0.1", hub_port))
        got = {n: await loop.run_in_executor(None, sockets[n].recv, 100) for n in ("b", "c")}
        assert got == {"b": b"frame-from-a", "c": b"frame-from-a"}
        sockets["stranger"].sendto(b"let me in", ("127.0.0.1", hub_port))
        await asyncio.sleep(0.1)
        for n in ("a", "b", "c"):
            sockets[n].setblocking(False)
            try:
                leaked = sockets[n].recv(100)
            except BlockingIOError:
                leaked = None
            assert leaked is None  # neither the sender's own frame nor the stranger's came back
        assert hub.frames == {"a": 1} and hub.dropped == 1
    finally:
        hub.close()
        for sock in sockets.values():
            sock.close()
