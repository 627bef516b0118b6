"""Warm starts: territories restored from a booted, saved template instead of booted from scratch.

Under TCG a cold boot to SSH takes about 19 s for one guest and 34 s each for three booting together on
two cores, and a series boots three guests every round. Until its first SSH login a guest is the same
machine in every match: the image and its class's vCPUs, memory and disk. So the first match of a class
boots one template guest cold, saves it (libvirt's save: memory and device state) and keeps its disk as a
read-only qcow2; every territory after that is a copy-on-write overlay on that disk plus a restore of the
saved state under its own name, forwards and console (`runtime.save_image`).

What must differ between guests is put in right after the restore, over SSH with the template's own key
(the referee's alone: 0600 in root's cache, and no longer authorized once this step is done): the
territory's authorized key in place of the template's, a fresh SSH host key (pinned on first contact,
as after a cold boot), its hostname, a new machine id, the wall clock, and the kernel's random generator
reseeded from the host's, so clones never share a random stream. A reboot of a clone is an ordinary cold
boot of its own disk with its own kernel command line and SMBIOS key.

A template is keyed by everything its saved state depends on (image recipe and the very build of the
base, accelerator, vCPUs, memory, disk, the hypervisor's version, this format); a guest whose template
will not restore boots cold, and the template is removed once no match holds it (`TemplateLease`).
Eligible: a guest on this machine's default libvirt URI without an arena NIC.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import secrets
import shlex
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.keys import MatchKeys
from aoe_tui.runtime.paths import cache_root
from aoe_tui.runtime.ports import LOOPBACK
from aoe_tui.runtime.ssh import GuestSSH

FORMAT = 2  # bump when what a template holds, or where, changes
TEMPLATE_TERRITORY = "template"
SAVED_STATE = "state.save"
DISK = "disk.qcow2"
KEYS = "keys"  # the template's own key pair, and the known_hosts pinning it while it is made
DESCRIPTION = "template.json"  # written last: a template without it is incomplete
# What a restored guest's console says (it printed no boot of its own), for whoever reads its tail.
CONSOLE_NOTE = "[aoe] warm start: restored from a saved template, now {}: its own key, host key and hostname"
_RNDRESEEDCRNG = 0x5207  # linux/random.h: _IO('R', 0x07)


@dataclass(frozen=True)
class TemplateClass:
    """What a template's saved state depends on; guests of one match with equal classes share a template."""

    recipe_hash: str
    image_stamp: str  # the built file itself: `aoe image build --force` makes another base under the same recipe
    domain_type: str
    vcpus: int
    memory_mib: int
    disk_mib: int
    hypervisor_version: int
    harness_bundle: str = ""  # a harness guest's: its bundle disk and CPU model are part of the saved machine

    @property
    def digest(self) -> str:
        fields = {**self.__dict__, "format": FORMAT}
        if not self.harness_bundle:  # the classes made before harness guests existed keep their digests
            del fields["harness_bundle"]
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]

    def describe(self) -> str:
        harness = ", the harness bundle" if self.harness_bundle else ""
        return f"{self.vcpus} vCPU, {self.memory_mib} MiB, {self.disk_mib} MiB disk{harness}"


@dataclass(frozen=True)
class WarmTemplate:
    """A complete template on disk: the saved state, its disk, the key it authorizes and its host key."""

    directory: Path
    host_key: str  # "ssh-ed25519 AAAA..." of the template's sshd, pinned for the identity step
    cold_boot_seconds: float
    image_stamp: str = ""  # the build of the base image its disk was written over (`image_stamp`)

    @property
    def saved_state(self) -> Path:
        return self.directory / SAVED_STATE

    @property
    def disk(self) -> Path:
        return self.directory / DISK

    @property
    def keys(self) -> MatchKeys:
        return MatchKeys(self.directory / KEYS)

    def discard(self) -> None:
        """Remove a template that could not be restored (the next match makes it again)."""
        (self.directory / DESCRIPTION).unlink(missing_ok=True)
        shutil.rmtree(self.directory, ignore_errors=True)


class WarmRestoreFailed(AoeError):
    """libvirt could not restore a template's saved state: the guest boots cold and the lease is spoiled."""


def open_template_lock(directory: Path) -> int:
    """The lock file beside a template's folder: held shared by each match restoring guests from that
    template, and alone by whoever makes or removes it."""
    return os.open(directory.with_suffix(".lock"), os.O_CREAT | os.O_RDWR, 0o600)


def remove_unless_held(directory: Path) -> bool:
    """Remove the template in `directory` unless a match holds it (making it, or restoring from it)."""
    return _remove_if_alone(open_template_lock(directory), directory)


def _remove_if_alone(lock: int, directory: Path) -> bool:
    """Remove the template in `directory` if `lock` (its lock file, then closed) can be held alone."""
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    else:
        WarmTemplate(directory, "", 0.0).discard()
        return True
    finally:
        os.close(lock)


class TemplateLease:
    """A match's shared hold on the template it restores its guests from, until the match closes.

    A template is removed only by someone holding its lock alone, so one that another match is restoring
    from, or whose disk backs that match's clones, is never removed under it. A restore that failed spoils
    the template; it is removed when this match lets go, if no other match holds it then: a failure need not
    be the template's fault (a busy host), and a template in use elsewhere is evidently restorable.
    """

    def __init__(self, template: WarmTemplate, lock: int) -> None:
        self.template = template
        self._lock: int | None = lock
        self.spoiled = False

    def release(self) -> bool:
        """Let go (again: nothing); returns whether a spoiled template was removed."""
        lock, self._lock = self._lock, None
        if lock is None:
            return False
        if self.spoiled:
            return _remove_if_alone(lock, self.template.directory)
        os.close(lock)
        return False


@dataclass(frozen=True)
class WarmSource:
    """A template as one match's QEMU reaches it: its saved state, and its disk (staged for an unprivileged QEMU)."""

    lease: TemplateLease
    disk: Path

    @property
    def template(self) -> WarmTemplate:
        return self.lease.template


def image_stamp(base: Path) -> str:
    """Which build of the base image this is (inode, size, modification time): a template's disk holds blocks
    written over one exact base, and over any other it would be a corrupt filesystem."""
    status = base.stat()
    return f"{status.st_ino}:{status.st_size}:{status.st_mtime_ns}"


def templates_dir() -> Path:
    return cache_root() / "warm"


def read_template(template_class: TemplateClass) -> WarmTemplate | None:
    """The complete template of this class, or None."""
    return read_template_at(templates_dir() / template_class.digest)


def read_template_at(directory: Path) -> WarmTemplate | None:
    """The complete template in `directory` (described, its saved state, disk and key all there), or None."""
    try:
        described = json.loads((directory / DESCRIPTION).read_text())
        template = WarmTemplate(
            directory,
            str(described["host_key"]),
            float(described["cold_boot_seconds"]),
            str(described["class"]["image_stamp"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    complete = template.saved_state.is_file() and template.disk.is_file() and template.keys.private_key_path.is_file()
    return template if complete else None


def identity_script(territory_id: str, authorized_key: str) -> str:
    """The shell run as root in a fresh clone, with the template's key: after it, only the territory's key logs
    in, to a host key of its own, and nothing random or clocked is shared with the template or another clone."""
    seed = secrets.token_hex(64)
    # perl-base is in every Debian (essential) and starts in a tenth of python3's time under TCG.
    reseed = (
        'open(my $f, ">", "/dev/urandom") or die $!; syswrite($f, pack("H*", $ARGV[0])) or die $!; '
        f"ioctl($f, {_RNDRESEEDCRNG}, 0) or die $!"
    )
    return "\n".join(
        [
            "set -eu",
            f"perl -e {shlex.quote(reseed)} {seed}",
            f"date -u -s @{time.time():.3f} >/dev/null",
            f"hostname {shlex.quote(territory_id)}",
            f"echo {uuid.uuid4().hex} > /etc/machine-id",
            # sshd reads its host key anew for every connection (each one re-executes it): no reload needed
            "rm -f /etc/ssh/ssh_host_*",
            'ssh-keygen -q -t ed25519 -N "" -f /etc/ssh/ssh_host_ed25519_key',
            "umask 077",
            f"printf '%s\\n' {shlex.quote(authorized_key)} > /root/.ssh/authorized_keys.new",
            "mv -f /root/.ssh/authorized_keys.new /root/.ssh/authorized_keys",
            f"echo {shlex.quote(CONSOLE_NOTE.format(territory_id))} > /dev/console",
        ]
    )


async def give_identity(
    template: WarmTemplate, port: int, territory_id: str, authorized_key: str, timeout: float
) -> None:
    """Log in to a fresh clone on 127.0.0.1:`port` with the template's key and make it the territory's own."""
    ssh = GuestSSH(
        f"territory {territory_id} (warm-start identity)", LOOPBACK, port, template.keys, host_key=template.host_key
    )
    try:
        await ssh.connect(timeout)
        result = await ssh.run(identity_script(territory_id, authorized_key), timeout)
    finally:
        await ssh.close()
    if result.exit_status != 0:
        raise AoeError(
            f"territory {territory_id}: the warm-start identity step failed "
            f"(exit {result.exit_status}): {result.stderr.strip()[-300:]}"
        )
