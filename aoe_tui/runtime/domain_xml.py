"""The libvirt domain XML of one territory.

Choices that are not obvious (all verified on this kind of machine):
- direct kernel boot with the image's kernel/initrd, `systemd.hostname=` on the
  command line (the hostname credential is ignored by systemd 252);
- the match's public key arrives as the systemd credential
  `ssh.authorized_keys.root` in an SMBIOS OEM string, so one base image serves
  every match;
- user-mode networking via `<qemu:commandline>` so the forwards can bind to
  127.0.0.1 only and `restrict=on` cuts the guest off from everything else; the
  NIC needs an explicit PCI slot or it collides with libvirt's disk;
- qemu runs as libvirt's unprivileged user with dynamic DAC ownership when the
  match allows it (`runtime.qemu_user` decides and stages the image); the shared
  raw base is an explicit backing store with `relabel=no`, so its root-owned,
  read-only inode is never handed to any guest's user. Otherwise qemu runs as
  root without relabelling;
- an arena segment (First Contact's L2 network of the guests alone) is a second
  NIC on a QEMU `dgram` netdev: unicast UDP between 127.0.0.1 ports, each
  guest's port to the match's hub (`runtime.arena_segment`), which repeats
  every frame to the other guests. Frames travel only between processes on
  the host's loopback, as UDP payloads: no bridge, no tap, no host address,
  no multicast at all, never a packet on any of the host's networks or a route
  out, and nothing to strand when a match dies. A libvirt isolated network
  would put every frame on a host bridge, where the host's own stack sees it
  (ARP for its addresses, IPv6 link-local);
- the serial console is a pty whose output libvirt's virtlogd writes to
  `console.log`, rotating it at virtlogd's `max_size` (2 MiB by default) and
  keeping `max_backups` old files (3): a guest flooding its console cannot fill
  the disk. A plain `type=file` serial would let qemu append forever.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import PurePath

from aoe_tui.runtime.ports import LOOPBACK

QEMU_NS = "http://libvirt.org/schemas/domain/qemu/1.0"
OWNER_NS = "https://aoe-tui.invalid/owner/1"
OWNER_KIND_MATCH = "match"
OWNER_KIND_MANUAL = "manual"
HARNESS_DISK_SERIAL = "aoe-harnesses"  # the harness bundle's disk: /dev/disk/by-id/virtio-aoe-harnesses
ET.register_namespace("qemu", QEMU_NS)


def domain_name(match_id: str, territory_id: str) -> str:
    return f"aoe-{match_id}-{territory_id}"


@dataclass(frozen=True)
class ArenaNic:
    """This guest's NIC on the arena segment: its MAC, its own UDP port and the hub's, both on loopback."""

    mac: str
    port: int
    hub_port: int

    def netdev_arg(self) -> str:
        return (
            f"dgram,id=a0,local.type=inet,local.host={LOOPBACK},local.port={self.port},"
            f"remote.type=inet,remote.host={LOOPBACK},remote.port={self.hub_port}"
        )

    def device_arg(self) -> str:
        return f"virtio-net-pci,netdev=a0,mac={self.mac},bus=pci.0,addr=0xa"


def arena_mac(octet: int) -> str:
    """52:54:00:77:00:<octet>, the original's MACs (0a/0b/0c for .10/.11/.12)."""
    return f"52:54:00:77:00:{octet:02x}"


@dataclass(frozen=True)
class DomainSpec:
    name: str
    territory_id: str
    domain_type: str  # "kvm" or "qemu" (TCG)
    vcpus: int
    memory_mib: int
    kernel: PurePath
    initrd: PurePath
    disk: PurePath
    console_log: PurePath
    ssh_port: int
    service_port: int
    guest_service_port: int
    authorized_key: str
    owner_pid: int
    owner_host: str
    owner_kind: str = OWNER_KIND_MATCH
    owner_match: str = ""  # the match id (a manual VM's: its name)
    owner_started: int | None = None  # the owner process's start time (runtime.cleanup: a reused pid is not it)
    base_image: PurePath | None = None  # the raw backing file of `disk`; None: whatever its header names
    warm_disk: PurePath | None = None  # a warm start's template disk (qcow2) between `disk` and `base_image`
    forward_address: str = LOOPBACK  # the hypervisor's loopback address its SSH and service forwards bind to
    unprivileged_qemu: bool = False
    arena_nic: ArenaNic | None = None
    # The harness bundle (agents.harnesses.bundle): attached read-only, and the guest given every CPU feature the
    # emulator has (the harnesses' native binaries need AVX2, which TCG's default CPU model lacks).
    harness_bundle: PurePath | None = None

    def kernel_cmdline(self) -> str:
        return f"console=ttyS0 root=/dev/vda rw net.ifnames=0 systemd.hostname={self.territory_id}"

    def netdev_arg(self) -> str:
        return (
            f"user,id=n0,restrict=on,"
            f"hostfwd=tcp:{self.forward_address}:{self.ssh_port}-:22,"
            f"hostfwd=tcp:{self.forward_address}:{self.service_port}-:{self.guest_service_port}"
        )


def render_domain_xml(spec: DomainSpec) -> str:
    domain = ET.Element("domain", type=spec.domain_type)
    _text(domain, "name", spec.name)
    metadata = ET.SubElement(domain, "metadata")
    owner = ET.SubElement(
        metadata,
        f"{{{OWNER_NS}}}owner",
        pid=str(spec.owner_pid),
        host=spec.owner_host,
        kind=spec.owner_kind,
        territory=spec.territory_id,
        match=spec.owner_match,
    )
    if spec.owner_started is not None:
        owner.set("started", str(spec.owner_started))
    _text(domain, "memory", str(spec.memory_mib), unit="MiB")
    _text(domain, "vcpu", str(spec.vcpus))
    if spec.harness_bundle is not None:
        ET.SubElement(domain, "cpu", mode="maximum" if spec.domain_type == "qemu" else "host-passthrough")
    oem = ET.SubElement(ET.SubElement(domain, "sysinfo", type="smbios"), "oemStrings")
    _text(oem, "entry", f"io.systemd.credential:ssh.authorized_keys.root={spec.authorized_key}")
    os_element = ET.SubElement(domain, "os")
    _text(os_element, "type", "hvm", arch="x86_64", machine="pc")
    _text(os_element, "kernel", str(spec.kernel))
    _text(os_element, "initrd", str(spec.initrd))
    _text(os_element, "cmdline", spec.kernel_cmdline())
    ET.SubElement(os_element, "smbios", mode="sysinfo")
    ET.SubElement(ET.SubElement(domain, "features"), "acpi")
    ET.SubElement(domain, "clock", offset="utc")
    for event, action in (("on_poweroff", "destroy"), ("on_reboot", "restart"), ("on_crash", "destroy")):
        _text(domain, event, action)
    if spec.unprivileged_qemu:
        ET.SubElement(domain, "seclabel", type="dynamic", model="dac", relabel="yes")
    else:
        seclabel = ET.SubElement(domain, "seclabel", type="static", model="dac", relabel="no")
        _text(seclabel, "label", "+0:+0")
    _devices(ET.SubElement(domain, "devices"), spec)
    commandline = ET.SubElement(domain, f"{{{QEMU_NS}}}commandline")
    values = ["-netdev", spec.netdev_arg(), "-device", "virtio-net-pci,netdev=n0,bus=pci.0,addr=0x9"]
    if spec.arena_nic is not None:
        values += ["-netdev", spec.arena_nic.netdev_arg(), "-device", spec.arena_nic.device_arg()]
    for value in values:
        ET.SubElement(commandline, f"{{{QEMU_NS}}}arg", value=value)
    return ET.tostring(domain, encoding="unicode")


def _devices(devices: ET.Element, spec: DomainSpec) -> None:
    disk = ET.SubElement(devices, "disk", type="file", device="disk")
    ET.SubElement(disk, "driver", name="qemu", type="qcow2")
    ET.SubElement(disk, "source", file=str(spec.disk))
    if spec.base_image is not None:
        chain = ((spec.warm_disk, "qcow2"),) if spec.warm_disk is not None else ()
        parent = disk
        for backing_file, backing_format in (*chain, (spec.base_image, "raw")):
            parent = ET.SubElement(parent, "backingStore", type="file")
            ET.SubElement(parent, "format", type=backing_format)
            source = ET.SubElement(parent, "source", file=str(backing_file))
            if spec.unprivileged_qemu:  # libvirt refuses a per-disk override when the domain itself never relabels
                ET.SubElement(source, "seclabel", model="dac", relabel="no")
        ET.SubElement(parent, "backingStore")
    ET.SubElement(disk, "target", dev="vda", bus="virtio")
    if spec.harness_bundle is not None:
        bundle = ET.SubElement(devices, "disk", type="file", device="disk")
        ET.SubElement(bundle, "driver", name="qemu", type="raw")
        ET.SubElement(bundle, "source", file=str(spec.harness_bundle))
        ET.SubElement(bundle, "target", dev="vdb", bus="virtio")
        ET.SubElement(bundle, "readonly")
        _text(bundle, "serial", HARNESS_DISK_SERIAL)
    serial = ET.SubElement(devices, "serial", type="pty")
    ET.SubElement(serial, "log", file=str(spec.console_log), append="on")
    ET.SubElement(serial, "target", port="0")
    ET.SubElement(devices, "controller", type="usb", model="none")
    ET.SubElement(devices, "memballoon", model="none")
    rng = ET.SubElement(devices, "rng", model="virtio")
    _text(rng, "backend", "/dev/urandom", model="random")


def _text(parent: ET.Element, tag: str, text: str, **attributes: str) -> ET.Element:
    element = ET.SubElement(parent, tag, attrib=attributes)
    element.text = text
    return element
