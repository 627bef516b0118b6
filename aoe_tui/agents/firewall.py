"""Network confinement of one adapter uid: on loopback it reaches only its own guest.

Every guest's SSH and service ports are forwarded on 127.0.0.1, so without a
rule any host process can dial a neighbour's guest. Each confined adapter runs
as its own uid, and an `iptables` owner match sends that uid's loopback traffic
(`-o lo`: also the host's own other addresses) through a chain that accepts
its own guest's ports (and any loopback service the operator allows, such as a
local model server) and rejects the rest. Traffic leaving the host (a model
provider) is untouched. IPv6 loopback is rejected outright (guests are
forwarded on IPv4 only).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Iterable

from aoe_tui.domain.errors import AoeError

LOOPBACK = "127.0.0.1"
CHAIN_PREFIX = "AOE-ADAPTER-"


class AdapterFirewall:
    def __init__(self, uid: int, loopback_ports: Iterable[int]) -> None:
        self.uid = uid
        self.loopback_ports = tuple(sorted(set(loopback_ports)))
        self.chain = f"{CHAIN_PREFIX}{uid}"
        self._installed = False

    @classmethod
    def remove_stale(cls, owner_alive: Callable[[int], bool]) -> None:
        """Drop the chains of adapter uids whose referee is gone (killed before it could clean up)."""
        listing = subprocess.run(["iptables", "-w", "-S"], capture_output=True, text=True).stdout
        for uid in sorted({int(u) for u in re.findall(rf"^-N {CHAIN_PREFIX}(\d+)$", listing, re.M)}):
            if not owner_alive(uid):
                stale = cls(uid, ())
                stale._installed = True
                stale.remove()

    def _jump(self) -> list[str]:
        return ["OUTPUT", "-o", "lo", "-m", "owner", "--uid-owner", str(self.uid)]

    def install(self) -> None:
        for tool in ("iptables", "ip6tables"):
            if shutil.which(tool) is None:
                raise AoeError(f"adapter confinement needs {tool} (apt-get install iptables; scripts/bootstrap)")
        _iptables("iptables", "-N", self.chain)
        self._installed = True
        for port in self.loopback_ports:
            _iptables("iptables", "-A", self.chain, "-d", LOOPBACK, "-p", "tcp", "--dport", str(port), "-j", "RETURN")
        _iptables("iptables", "-A", self.chain, "-j", "REJECT")
        _iptables("iptables", "-I", *self._jump(), "-j", self.chain)
        _iptables("ip6tables", "-I", *self._jump(), "-j", "REJECT")

    def remove(self) -> None:
        """Drop the rules; safe to call twice or after a partial install."""
        if not self._installed:
            return
        self._installed = False
        for command in (
            ("iptables", "-D", *self._jump(), "-j", self.chain),
            ("iptables", "-F", self.chain),
            ("iptables", "-X", self.chain),
            ("ip6tables", "-D", *self._jump(), "-j", "REJECT"),
        ):
            subprocess.run([command[0], "-w", *command[1:]], capture_output=True)


def _iptables(tool: str, *args: str) -> None:
    done = subprocess.run([tool, "-w", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise AoeError(
            f"adapter confinement: `{tool} {' '.join(args)}` failed: "
            f"{(done.stderr.strip().splitlines() or ['no message'])[-1]}"
        )
