"""Placement: a match only where all of it fits; the emptiest host first; equal hosts take alternate rounds."""

from __future__ import annotations

from aoe_tui.domain.hosts import Capacity, Inventory
from aoe_tui.engine.host_pool import HostPool
from aoe_tui.engine.placement import HostLoad, choose_host

NEED = Capacity(vcpus=2, memory_mib=2048)


def two_hosts(big_vcpus: int = 4) -> Inventory:
    return Inventory.model_validate(
        {
            "hosts": [
                {"name": "a", "uri": "qemu:///system", "capacity": {"vcpus": 4, "memory_mib": 8192}},
                {"name": "b", "uri": "qemu:///system", "capacity": {"vcpus": big_vcpus, "memory_mib": 8192}},
            ]
        }
    )


def test_rounds_spread_over_equal_hosts_and_wait_when_full():
    pool = HostPool(two_hosts(), report=lambda _line: None)
    assert [pool.place(n, NEED) for n in (1, 2, 3, 4)] == ["a", "b", "a", "b"]
    assert pool.place(5, NEED) is None  # both hosts full
    pool.release("b", NEED)
    assert pool.place(5, NEED) == "b"


def test_idle_equal_hosts_rotate_by_round_so_no_seat_always_gets_the_same_host():
    loads = [HostLoad("a", Capacity(vcpus=4, memory_mib=8192)), HostLoad("b", Capacity(vcpus=4, memory_mib=8192))]
    assert [choose_host(loads, NEED, n).name for n in (1, 2, 3, 4)] == ["a", "b", "a", "b"]


def test_the_host_with_more_left_takes_the_round_and_a_match_never_splits():
    pool = HostPool(two_hosts(big_vcpus=16), report=lambda _line: None)
    assert pool.place(1, NEED) == "b"
    assert pool.place(1, Capacity(vcpus=6, memory_mib=1024)) == "b"  # never on a, which has 4 vCPUs in all
    assert not pool.could_ever_fit(Capacity(vcpus=17, memory_mib=1024))


def test_a_lost_host_takes_no_more_rounds():
    pool = HostPool(two_hosts(), report=lambda _line: None)
    pool.mark_lost("a", "host a: its SSH connection was lost")
    assert [pool.place(n, NEED) for n in (1, 2)] == ["b", "b"] and pool.lost("a").startswith("host a")
    assert pool.place(3, NEED) is None
