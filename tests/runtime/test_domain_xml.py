"""The domain XML libvirt gets: loopback-only forwards, the key credential, direct kernel boot."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from aoe_tui.runtime.domain_xml import OWNER_NS, QEMU_NS, DomainSpec, domain_name, render_domain_xml

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB0tZ2VuZXJhdGVk aoe-test"


def _spec(**changes) -> DomainSpec:
    values = dict(
        name=domain_name("m1", "builder-one"),
        territory_id="builder-one",
        domain_type="qemu",
        vcpus=2,
        memory_mib=1536,
        kernel=Path("/img/vmlinuz"),
        initrd=Path("/img/initrd.img"),
        disk=Path("/m/overlay.qcow2"),
        console_log=Path("/m/console.log"),
        ssh_port=26000,
        service_port=26001,
        guest_service_port=8080,
        authorized_key=KEY,
        owner_pid=1234,
        owner_host="arena-host",
    )
    values.update(changes)
    return DomainSpec(**values)


def test_identity_resources_and_accelerator() -> None:
    root = ET.fromstring(render_domain_xml(_spec()))
    assert root.get("type") == "qemu"
    assert root.findtext("name") == "aoe-m1-builder-one"
    assert root.find("memory").text == "1536" and root.find("memory").get("unit") == "MiB"
    assert root.findtext("vcpu") == "2"
    assert ET.fromstring(render_domain_xml(_spec(domain_type="kvm"))).get("type") == "kvm"


def test_direct_kernel_boot_names_the_territory() -> None:
    os_element = ET.fromstring(render_domain_xml(_spec())).find("os")
    assert os_element.findtext("kernel") == "/img/vmlinuz"
    assert os_element.findtext("initrd") == "/img/initrd.img"
    cmdline = os_element.findtext("cmdline")
    assert "root=/dev/vda" in cmdline and "console=ttyS0" in cmdline
    assert "systemd.hostname=builder-one" in cmdline
    assert os_element.find("smbios").get("mode") == "sysinfo"


def test_public_key_travels_as_systemd_credential() -> None:
    root = ET.fromstring(render_domain_xml(_spec()))
    entries = [e.text for e in root.findall("sysinfo/oemStrings/entry")]
    assert entries == [f"io.systemd.credential:ssh.authorized_keys.root={KEY}"]


def test_forwards_bind_loopback_only_and_nic_has_its_own_slot() -> None:
    root = ET.fromstring(render_domain_xml(_spec()))
    args = [a.get("value") for a in root.findall(f"{{{QEMU_NS}}}commandline/{{{QEMU_NS}}}arg")]
    netdev = args[args.index("-netdev") + 1]
    assert "restrict=on" in netdev
    assert "hostfwd=tcp:127.0.0.1:26000-:22" in netdev
    assert "hostfwd=tcp:127.0.0.1:26001-:8080" in netdev
    assert netdev.count("hostfwd=") == 2 and "0.0.0.0" not in netdev
    assert "addr=0x9" in args[args.index("-device") + 1]


def test_disk_console_and_owner_stamp() -> None:
    root = ET.fromstring(render_domain_xml(_spec()))
    disk = root.find("devices/disk")
    assert disk.find("source").get("file") == "/m/overlay.qcow2"
    assert disk.find("driver").get("type") == "qcow2"
    serial = root.find("devices/serial")
    assert serial.get("type") == "pty" and serial.find("log").get("file") == "/m/console.log"
    assert serial.find("log").get("append") == "on"  # virtlogd writes and rotates it, not qemu
    owner = root.find(f"metadata/{{{OWNER_NS}}}owner")
    assert (owner.get("pid"), owner.get("host"), owner.get("kind")) == ("1234", "arena-host", "match")


def test_root_qemu_without_relabelling_unless_unprivileged() -> None:
    root = ET.fromstring(render_domain_xml(_spec()))
    label = root.find("seclabel")
    assert (label.get("type"), label.get("relabel"), label.findtext("label")) == ("static", "no", "+0:+0")
    label = ET.fromstring(render_domain_xml(_spec(unprivileged_qemu=True))).find("seclabel")
    assert (label.get("type"), label.get("model"), label.get("relabel")) == ("dynamic", "dac", "yes")
    assert label.find("label") is None  # libvirt takes user and group from qemu.conf


def test_the_shared_base_is_an_explicit_backing_store_never_relabelled() -> None:
    assert ET.fromstring(render_domain_xml(_spec())).find("devices/disk/backingStore") is None
    disk = ET.fromstring(render_domain_xml(_spec(base_image=Path("/m/image/base.raw"), unprivileged_qemu=True))).find(
        "devices/disk"
    )
    backing = disk.find("backingStore")
    assert backing.find("format").get("type") == "raw" and backing.find("source").get("file") == "/m/image/base.raw"
    label = backing.find("source/seclabel")
    assert (label.get("model"), label.get("relabel")) == ("dac", "no")
    assert backing.find("backingStore") is not None and len(backing.find("backingStore")) == 0  # chain ends here


def test_root_qemu_with_a_backing_store_carries_no_per_disk_override() -> None:
    """libvirt refuses the domain ("label overrides require relabeling to be enabled at the domain level")."""
    root = ET.fromstring(render_domain_xml(_spec(base_image=Path("/m/image/base.raw"), unprivileged_qemu=False)))
    assert root.find("devices/disk/backingStore/source/seclabel") is None
    assert root.find("seclabel").get("relabel") == "no"


def test_a_warm_start_has_its_template_disk_between_its_overlay_and_the_base() -> None:
    spec = _spec(base_image=Path("/m/image/base.raw"), warm_disk=Path("/m/image/warm-1.qcow2"), unprivileged_qemu=True)
    disk = ET.fromstring(render_domain_xml(spec)).find("devices/disk")
    template = disk.find("backingStore")
    assert (template.find("format").get("type"), template.find("source").get("file")) == (
        "qcow2",
        "/m/image/warm-1.qcow2",
    )
    assert template.find("source/seclabel").get("relabel") == "no"  # read by every clone, handed to none
    base = template.find("backingStore")
    assert (base.find("format").get("type"), base.find("source").get("file")) == ("raw", "/m/image/base.raw")
    assert base.find("source/seclabel").get("relabel") == "no"
    assert len(base.find("backingStore")) == 0


def test_a_harness_guest_gets_the_bundle_read_only_and_every_cpu_feature_under_tcg() -> None:
    plain = ET.fromstring(render_domain_xml(_spec()))
    assert plain.find("cpu") is None and len(plain.findall("devices/disk")) == 1
    root = ET.fromstring(render_domain_xml(_spec(harness_bundle=Path("/cache/harnesses/abc/bundle.ext4"))))
    assert root.find("cpu").get("mode") == "maximum"  # AVX2 for the native binaries: TCG's default model lacks it
    bundle = root.findall("devices/disk")[1]
    assert bundle.find("source").get("file") == "/cache/harnesses/abc/bundle.ext4"
    assert bundle.find("readonly") is not None and bundle.find("target").get("dev") == "vdb"
    assert bundle.findtext("serial") == "aoe-harnesses" and bundle.find("driver").get("type") == "raw"
    kvm = ET.fromstring(render_domain_xml(_spec(domain_type="kvm", harness_bundle=Path("/b.ext4"))))
    assert kvm.find("cpu").get("mode") == "host-passthrough"
