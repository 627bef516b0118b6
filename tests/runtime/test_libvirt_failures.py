"""Failures a user meets before any VM exists: no libvirtd, no image, a taken port."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.hypervisor import Hypervisor, socket_hint
from aoe_tui.runtime.match_runtime import MatchRuntime, TerritorySpec
from tests.runtime.free_ports import free_base_port

MISSING_SOCKET_URI = "qemu+unix:///system?socket=/nonexistent/aoe-test/libvirt-sock"


async def test_libvirtd_not_running_names_socket_and_fix() -> None:
    with pytest.raises(AoeError) as caught:
        await Hypervisor.connect(MISSING_SOCKET_URI)
    message = str(caught.value)
    assert "/nonexistent/aoe-test/libvirt-sock" in message and "scripts/services" in message


def test_socket_hint_for_each_uri_style() -> None:
    assert socket_hint("qemu:///system") == "socket /var/run/libvirt/libvirt-sock"
    assert socket_hint("qemu+ssh://root@10.9.9.9/system") == "host 10.9.9.9"
    assert socket_hint("qemu:///system?socket=/run/x.sock") == "socket /run/x.sock"


async def test_missing_image_fails_before_anything_boots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    runtime = MatchRuntime(tmp_path / "match", "noimage", [TerritorySpec("alpha", 1, 512)], free_base_port(1))
    with pytest.raises(AoeError, match="aoe image build"):
        await runtime.start()
    assert runtime.vms == {}


async def test_taken_port_fails_before_anything_boots(tmp_path: Path, guest_image) -> None:
    base = free_base_port(2)
    runtime = MatchRuntime(
        tmp_path / "match",
        "porttaken",
        [TerritorySpec("alpha", 1, 512), TerritorySpec("beta", 1, 512)],
        base,
        image=guest_image,
    )
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", base + 2))
        holder.listen()
        with pytest.raises(AoeError, match=f"port {base + 2} .*ssh of territory beta"):
            await runtime.start()
    assert runtime.vms == {}
    assert not (tmp_path / "match" / "territories").exists()


async def test_unknown_libvirt_socket_in_a_match_is_the_same_clear_error(
    tmp_path: Path, guest_image, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AOE_ACCEL", "tcg")
    runtime = MatchRuntime(
        tmp_path / "match",
        "nolibvirt",
        [TerritorySpec("alpha", 1, 512, uri=MISSING_SOCKET_URI)],
        free_base_port(1),
        image=guest_image,
    )
    with pytest.raises(AoeError, match="cannot connect to libvirtd"):
        await runtime.start()
    await runtime.close()  # idempotent after a failed start
