"""What goes into the guest image, as data.

The recipe is plain data so its hash decides when the cached image is stale:
change a package or a file here and the next `aoe image build` rebuilds. The
files are written into the unpacked root filesystem by Python (not by shell
hooks inside mmdebstrap) so a unit test can check them without a build.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

SLOT_UNIT = "builder-app.service"
SLOT_APP = "/opt/builder/app.py"

# A dormant slot: enabled so it comes back after every reboot, but it only
# starts once an agent has written the app; no start limit, so a crashing app
# is retried forever instead of locking the unit in "failed".
_SLOT_UNIT_TEXT = f"""\
[Unit]
Description=Agents of Empires builder slot (the agent's service)
After=network-online.target
Wants=network-online.target
ConditionPathExists={SLOT_APP}
StartLimitIntervalSec=0

[Service]
ExecStart=/usr/bin/python3 {SLOT_APP}
WorkingDirectory=/opt/builder
Restart=always
RestartSec=1

[Install]
WantedBy=multi-user.target
"""

# Host keys are made at first boot, so every territory has its own and the
# referee's pinning means something. Only ed25519: `ssh-keygen -A` spends 12 s
# of a TCG boot on an RSA key nobody uses.
_HOSTKEYS_UNIT_TEXT = """\
[Unit]
Description=Generate this guest's own SSH host keys
Before=ssh.service
ConditionPathExists=!/etc/ssh/ssh_host_ed25519_key

[Service]
Type=oneshot
ExecStart=/usr/bin/ssh-keygen -q -t ed25519 -N "" -f /etc/ssh/ssh_host_ed25519_key
ExecStart=/bin/sync
RemainAfterExit=yes

[Install]
WantedBy=multi-user.target
"""

# Written before any package is installed, so the kernel package's own
# initramfs build sees them: an initrd holding only the drivers this guest
# has. The default (MODULES=most) made udev in the initrd load every storage
# driver there is, about 15 s of a TCG boot.
_PREINSTALL_FILES = {
    "etc/initramfs-tools/conf.d/aoe.conf": "MODULES=list\n",
    "etc/initramfs-tools/hooks/aoe-virtio": """\
#!/bin/sh
case "$1" in prereqs) exit 0 ;; esac
. /usr/share/initramfs-tools/hook-functions
manual_add_modules virtio_pci virtio_blk ext4 crc32c_generic
""",
}

# The referee reboots a guest through libvirt (an ACPI power-button press, falling
# back to a reset), never through the guest's own systemctl. minbase has no
# logind/dbus to hear the button, so acpid does, and turns it into a reboot; the
# button and evdev drivers are loaded early so the press is never missed.
_ACPI_POWER_BUTTON_EVENT = """\
# Written by aoe_tui: the referee's ACPI reboot request (virDomainReboot, power-button mode).
event=button/power.*
action=/usr/bin/systemctl --no-block reboot
"""

_FILES = {
    "etc/network/interfaces": ("auto lo\niface lo inet loopback\n\nallow-hotplug eth0\niface eth0 inet dhcp\n"),
    "etc/ssh/sshd_config.d/aoe.conf": (
        "HostKey /etc/ssh/ssh_host_ed25519_key\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nUseDNS no\nMaxStartups 64:30:128\n"
    ),
    "etc/fstab": "/dev/vda / ext4 defaults,errors=remount-ro 0 1\n",
    "etc/hostname": "aoe-guest\n",
    "etc/hosts": "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n",
    f"etc/systemd/system/{SLOT_UNIT}": _SLOT_UNIT_TEXT,
    "etc/systemd/system/aoe-ssh-hostkeys.service": _HOSTKEYS_UNIT_TEXT,
    "etc/acpi/events/aoe-power-button": _ACPI_POWER_BUTTON_EVENT,
    "etc/modules-load.d/aoe-acpi.conf": "button\nevdev\n",
}

_ENABLED_UNITS = ("multi-user.target.wants/" + SLOT_UNIT, "multi-user.target.wants/aoe-ssh-hostkeys.service")
# Periodic jobs and screen gettys (there is no screen, only the serial console)
# that would burn the guest's scarce TCG CPU during a race.
_MASKED_UNITS = (
    "apt-daily.timer",
    "apt-daily-upgrade.timer",
    "e2scrub_all.timer",
    "e2scrub_reap.service",
    "getty-static.service",
    "getty@tty1.service",
)


@dataclass(frozen=True)
class GuestRecipe:
    suite: str = "bookworm"
    variant: str = "minbase"
    packages: tuple[str, ...] = (
        "systemd-sysv",
        "openssh-server",
        "python3",
        "sqlite3",
        "curl",
        "jq",
        "procps",
        "iproute2",
        "linux-image-cloud-amd64",
        "udev",
        "ifupdown",
        "isc-dhcp-client",
        "acpid",
    )
    disk_mib: int = 4096
    preinstall_files: dict[str, str] = field(default_factory=lambda: dict(_PREINSTALL_FILES))
    files: dict[str, str] = field(default_factory=lambda: dict(_FILES))
    enabled_units: tuple[str, ...] = _ENABLED_UNITS
    masked_units: tuple[str, ...] = _MASKED_UNITS
    directories: tuple[str, ...] = ("opt/builder", "root/.ssh")

    def digest(self) -> str:
        """Short content hash naming the cache directory of this recipe's image."""
        payload = json.dumps(self.__dict__, sort_keys=True, default=list).encode()
        return hashlib.sha256(payload).hexdigest()[:16]

    def mmdebstrap_command(self, target: Path) -> list[str]:
        hooks = [f"--setup-hook={_write_file_hook(path, text)}" for path, text in self.preinstall_files.items()]
        return [
            "mmdebstrap",
            f"--variant={self.variant}",
            f"--include={','.join(self.packages)}",
            *hooks,
            self.suite,
            str(target),
        ]

    def apply(self, rootfs: Path) -> None:
        """Write the recipe's files into an unpacked root filesystem."""
        for relative, text in self.files.items():
            path = rootfs / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        for directory in self.directories:
            (rootfs / directory).mkdir(parents=True, exist_ok=True)
        (rootfs / "root/.ssh").chmod(0o700)
        units = rootfs / "etc/systemd/system"
        for wanted in self.enabled_units:
            _replace_symlink(units / wanted, f"/etc/systemd/system/{Path(wanted).name}")
        for masked in self.masked_units:
            _replace_symlink(units / masked, "/dev/null")
        for host_key in (rootfs / "etc/ssh").glob("ssh_host_*"):
            host_key.unlink()


def _write_file_hook(path: str, text: str) -> str:
    """A shell hook writing `text` to `$1/path` (base64, so no quoting can break it); scripts stay executable."""
    encoded = base64.b64encode(text.encode()).decode()
    mode = "755" if text.startswith("#!") else "644"
    return f'mkdir -p "$1/{Path(path).parent}" && echo {encoded} | base64 -d > "$1/{path}" && chmod {mode} "$1/{path}"'


def _replace_symlink(link: Path, target: str) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    os.symlink(target, link)
