"""KVM is believed only when a guest kernel really prints; AOE_ACCEL overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime import kvm_probe
from aoe_tui.runtime.kvm_probe import _prints_banner, choose_accel, probe_kvm


def test_override_wins_and_maps_to_libvirt_type(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AOE_ACCEL", "tcg")
    assert choose_accel(None).domain_type == "qemu"
    monkeypatch.setenv("AOE_ACCEL", "KVM")
    assert choose_accel(None).domain_type == "kvm"


def test_bad_override_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AOE_ACCEL", "xen")
    with pytest.raises(AoeError, match="AOE_ACCEL"):
        choose_accel(None)


def test_probe_result_is_cached_per_process(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("AOE_ACCEL", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(kvm_probe, "_probed", None)
    calls = []
    monkeypatch.setattr(
        kvm_probe, "probe_kvm", lambda kernel: calls.append(kernel) or kvm_probe.AccelChoice("tcg", "x")
    )
    assert choose_accel(None).accel == "tcg"
    assert choose_accel(None).accel == "tcg"
    assert len(calls) == 1


def test_probe_result_is_cached_on_disk_for_this_host_boot(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("AOE_ACCEL", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    kernel = tmp_path / "vmlinuz"
    kernel.write_bytes(b"kernel")
    calls = []
    monkeypatch.setattr(kvm_probe, "probe_kvm", lambda k: calls.append(k) or kvm_probe.AccelChoice("tcg", "silent"))
    for _ in range(2):  # two processes: the in-process cache is empty each time
        monkeypatch.setattr(kvm_probe, "_probed", None)
        assert choose_accel(kernel).accel == "tcg"
    assert len(calls) == 1
    assert "probed earlier this boot" in choose_accel(kernel).reason
    other_kernel = tmp_path / "vmlinuz-2"
    other_kernel.write_bytes(b"kernel 2")
    monkeypatch.setattr(kvm_probe, "_probed", None)
    choose_accel(other_kernel)
    assert len(calls) == 2


def test_no_kernel_means_tcg(tmp_path: Path) -> None:
    choice = probe_kvm(tmp_path / "missing-vmlinuz")
    assert choice.accel == "tcg" and choice.reason


def test_banner_detection_is_a_real_read_with_a_deadline() -> None:
    assert _prints_banner(["sh", "-c", "echo booting; echo 'Linux version 6.1'; sleep 30"], 5)
    assert not _prints_banner(["sh", "-c", "echo silent-hang; sleep 30"], 0.5)
    assert not _prints_banner(["true"], 5)
