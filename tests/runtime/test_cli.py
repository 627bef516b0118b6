"""`aoe image build`, `aoe doctor`, `aoe vm ...` as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from aoe_tui.cli.main import main

PROJECT = Path(__file__).resolve().parents[2]


def test_doctor_json_reports_each_problem_with_its_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, libvirt_services
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("AOE_ACCEL", "tcg")
    code = main(["doctor", "--json", "--base-port", "28390", "--territories", "2"])
    report = json.loads(capsys.readouterr().out)
    checks = {c["name"]: c for c in report["checks"]}
    assert code == 1 and report["ready"] is False  # forced: no guest image in this cache
    assert checks["guest image"]["status"] == "fail" and checks["guest image"]["fix"] == "aoe image build"
    assert checks["accelerator"]["status"] == "warn" and "AOE_ACCEL" in checks["accelerator"]["detail"]
    assert checks["libvirtd"]["status"] == "ok"
    assert checks["qemu"]["status"] == "ok" and checks["mmdebstrap"]["status"] == "ok"
    assert {"virtlogd", "ports", "leftover VMs", "qemu-img", "mkfs.ext4", "qemu user"} <= set(checks)
    assert main(["doctor", "--base-port", "28390", "--territories", "2"]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "not ready: fix guest image"


def test_real_doctor_verdict_matches_its_checks(capsys: pytest.CaptureFixture, libvirt_services) -> None:
    """This machine as it is: the verdict is exactly "no check failed", and the exit status follows it."""
    code = main(["doctor", "--json", "--base-port", "28390", "--territories", "2"])
    report = json.loads(capsys.readouterr().out)
    failed = [c["name"] for c in report["checks"] if c["status"] == "fail"]
    assert report["ready"] is (not failed) and code == (0 if report["ready"] else 1)
    assert {c["status"] for c in report["checks"]} <= {"ok", "warn", "fail"}
    assert next(c for c in report["checks"] if c["name"] == "libvirtd")["status"] == "ok"
    assert main(["doctor", "--base-port", "28390", "--territories", "2"]) == code
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == ("ready: this machine can run matches" if not failed else f"not ready: fix {', '.join(failed)}")


@pytest.mark.parametrize(
    "conf, status, fragment",
    [
        ('#user = "libvirt-qemu"\n#dynamic_ownership = 1\n', "ok", "user = libvirt-qemu (default)"),
        ('user = "+0"\n', "warn", "guests run as root"),
        ('user = "root" # the old way\n', "warn", "user = root: guests run as root"),
        ('user = "no-such-user-here"\n', "warn", "no such user"),
        ('user = "libvirt-qemu"\ndynamic_ownership = 0\n', "warn", "dynamic_ownership = 0"),
    ],
)
def test_qemu_user_check_reads_qemu_conf(tmp_path: Path, conf: str, status: str, fragment: str) -> None:
    from aoe_tui.runtime.doctor import qemu_user_check

    path = tmp_path / "qemu.conf"
    path.write_text(conf)
    check = qemu_user_check(path)
    assert (check.name, check.status) == ("qemu user", status) and fragment in check.detail, check
    assert qemu_user_check(tmp_path / "missing.conf").status == "warn"


def test_doctor_without_libvirtd_says_how_to_start_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("AOE_ACCEL", "tcg")
    code = main(["doctor", "--uri", "qemu+unix:///system?socket=/nonexistent/libvirt-sock"])
    out = capsys.readouterr().out
    assert code == 1
    assert "[FAIL] libvirtd: cannot connect to libvirtd" in out and "fix: scripts/services" in out


def test_unknown_vm_is_one_line_and_exit_2(capsys: pytest.CaptureFixture) -> None:
    assert main(["vm", "ssh", "no-such-vm-here"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("aoe: vm no-such-vm-here: no such vm") and err.count("\n") == 1
    assert main(["vm", "down", "Bad_Name!"]) == 2
    assert "lowercase letters" in capsys.readouterr().err


def test_image_build_failure_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fake = tmp_path / "bin" / "mmdebstrap"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'E: Failed to fetch http://deb.debian.org/debian/pool/x.deb' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    assert main(["image", "build"]) == 2
    captured = capsys.readouterr()
    assert "mmdebstrap: E: Failed to fetch" in captured.out  # streamed progress
    assert captured.err.startswith("aoe: mmdebstrap could not fetch packages") and captured.err.count("\n") == 1


def _aoe(*args: str, timeout: float = 400) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "aoe_tui.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=PROJECT,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.vm
def test_vm_up_ssh_down_up_keeps_the_disk(guest_image) -> None:
    name = f"pytest-{os.getpid()}"
    try:
        up = _aoe("vm", "up", name, "--memory", "768", "--base-port", "29800")
        assert up.returncode == 0, up.stderr
        assert f"attach: aoe vm ssh {name}" in up.stdout and "ssh -i " in up.stdout
        wrote = _aoe("vm", "ssh", name, "echo kept > /root/kept && sync && hostname", timeout=60)
        assert wrote.returncode == 0, wrote.stderr
        assert wrote.stdout.strip() == name
        doctor = _aoe("doctor", "--json")
        leftovers = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "leftover VMs")
        assert name not in leftovers["detail"], "a manual vm is not a leftover"
        down = _aoe("vm", "down", name)
        assert down.returncode == 0 and "destroyed" in down.stdout and "disk kept" in down.stdout
        assert _aoe("vm", "up", name).returncode == 0
        read = _aoe("vm", "ssh", name, "cat /root/kept", timeout=60)
        assert read.stdout.strip() == "kept", read.stderr
    finally:
        purged = _aoe("vm", "down", name, "--purge")
    assert purged.returncode == 0 and "deleted" in purged.stdout
    assert _aoe("vm", "ssh", name, "true").returncode == 2
