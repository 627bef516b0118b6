"""Port plan per territory and the error when one is taken."""

from __future__ import annotations

import socket

import pytest

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.ports import TerritoryPorts, assign_ports, check_ports_free, port_is_free
from tests.runtime.conftest import free_base_port


def test_two_ports_per_territory_in_order() -> None:
    assert assign_ports(["a", "b", "c"], 26000) == {
        "a": TerritoryPorts(26000, 26001), "b": TerritoryPorts(26002, 26003), "c": TerritoryPorts(26004, 26005)}


def test_out_of_range_base_port_is_refused() -> None:
    with pytest.raises(AoeError, match="65535"):
        assign_ports(["a", "b"], 65534)


def test_taken_port_names_port_role_and_territory() -> None:
    base = free_base_port(2)
    plan = assign_ports(["alpha", "beta"], base)
    check_ports_free(plan)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", base + 3))
        holder.listen()
        assert not port_is_free(base + 3)
        with pytest.raises(AoeError) as caught:
            check_ports_free(plan)
    message = str(caught.value)
    assert f"port {base + 3}" in message and "service of territory beta" in message
    assert "aoe doctor --clean" in message
