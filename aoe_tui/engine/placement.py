"""Which host takes the next round: all of a match on one host, rounds spread by free capacity.

Pure bookkeeping, no IO. A match needs the sum of its territories' vCPUs and
memory; a host takes it only when both fit in what its running matches leave.
Among the hosts that fit, the one with the largest share left wins (the smaller
of its vCPU and memory shares, after placing); ties go round-robin from round
r to host r-1, so equal hosts take alternate rounds and every seat of the
rotation is seen on every host, instead of the first host taking them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aoe_tui.domain.hosts import Capacity
from aoe_tui.domain.manifest import Manifest


def match_need(manifest: Manifest) -> Capacity:
    """What one match of this manifest takes of its host: every territory's class resources, summed."""
    resources = [manifest.territory_class(t.id).resources for t in manifest.territories]
    return Capacity(vcpus=sum(r.vcpus for r in resources), memory_mib=sum(r.memory_mib for r in resources))


@dataclass
class HostLoad:
    name: str
    capacity: Capacity
    used_vcpus: int = 0
    used_mib: int = 0

    def fits(self, need: Capacity, when_idle: bool = False) -> bool:
        """Room for `need` now, or (`when_idle`) once its running matches are over."""
        used_vcpus, used_mib = (0, 0) if when_idle else (self.used_vcpus, self.used_mib)
        return used_vcpus + need.vcpus <= self.capacity.vcpus and used_mib + need.memory_mib <= self.capacity.memory_mib

    def share_left_after(self, need: Capacity) -> float:
        return min(
            1 - (self.used_vcpus + need.vcpus) / self.capacity.vcpus,
            1 - (self.used_mib + need.memory_mib) / self.capacity.memory_mib,
        )

    def take(self, need: Capacity) -> None:
        self.used_vcpus += need.vcpus
        self.used_mib += need.memory_mib

    def give_back(self, need: Capacity) -> None:
        self.used_vcpus -= need.vcpus
        self.used_mib -= need.memory_mib


def choose_host(loads: Sequence[HostLoad], need: Capacity, round_number: int) -> HostLoad | None:
    """The host for round `round_number`, or None while none has room for it."""
    count = len(loads)
    fitting = [index for index, load in enumerate(loads) if load.fits(need)]
    if not fitting:
        return None
    best = max(fitting, key=lambda i: (loads[i].share_left_after(need), -((i - (round_number - 1)) % count)))
    return loads[best]
