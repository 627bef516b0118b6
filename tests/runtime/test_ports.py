"""Port plan per territory and the error when one is taken."""

from __future__ import annotations

import socket

import pytest

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.ports import TerritoryPorts, assign_ports, check_ports_free, port_is_free, reserve_ports
from tests.runtime.free_ports import free_base_port


def test_two_ports_per_territory_in_order() -> None:
    assert assign_ports(["a", "b", "c"], 26000) == {
        "a": TerritoryPorts(26000, 26001),
        "b": TerritoryPorts(26002, 26003),
        "c": TerritoryPorts(26004, 26005),
    }


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


def _time_wait_on(port: int) -> None:
    """Leave a server-side TIME_WAIT on `port`, as QEMU's forward does after the referee's HTTP checks."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen()
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = listener.accept()
        accepted.close()  # the server closes first: its side of the connection lingers in TIME_WAIT
        client.recv(1)
        client.close()


def test_time_wait_left_by_the_previous_match_does_not_make_a_port_taken() -> None:
    port = free_base_port(1)
    _time_wait_on(port)
    assert port_is_free(port)


def test_automatic_blocks_never_overlap_and_are_released(tmp_path) -> None:
    first = reserve_ports(["a", "b", "c"], lock_dir=tmp_path)
    second = reserve_ports(["a", "b", "c"], lock_dir=tmp_path)
    try:
        assert first.automatic and second.automatic
        taken = {p for r in (first, second) for pair in r.ports.values() for p in (pair.ssh, pair.service)}
        assert len(taken) == 12
        assert first.to_json()["territories"]["a"] == {"ssh": first.base_port, "service": first.base_port + 1}
    finally:
        second.release()
    again = reserve_ports(["a", "b", "c"], lock_dir=tmp_path)
    assert again.base_port == second.base_port  # released blocks are handed out again
    again.release()
    first.release()
    first.release()  # idempotent


def test_a_named_block_held_by_another_process_is_refused(tmp_path) -> None:
    import subprocess
    import sys

    held = reserve_ports(["a"], lock_dir=tmp_path)
    base = held.base_port
    held.release()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; "
            "from aoe_tui.runtime.ports import reserve_ports; "
            f"r = reserve_ports(['a'], {base}, lock_dir=Path({str(tmp_path)!r})); print('held', flush=True); "
            "time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(AoeError, match="another aoe match"):
            reserve_ports(["a"], base, lock_dir=tmp_path)
        automatic = reserve_ports(["a"], lock_dir=tmp_path)
        assert automatic.base_port != base
        automatic.release()
    finally:
        holder.kill()
        holder.wait()
    reserve_ports(["a"], base, lock_dir=tmp_path).release()  # the dead holder's lock went with it
