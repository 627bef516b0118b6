"""A Primary Failover "guest" on this host, for fast tests (tests.engine.namespaced_guest).

The seed fills the state directory, and the replica and the proxy run on their
guest ports (8082 and 8080, nothing on 8081) inside the namespace.
"""

from __future__ import annotations

from pathlib import Path

from tests.engine.namespaced_guest import GuestSpec, NamespacedGuest
from tests.fixture_paths import PROJECT

ARENA = PROJECT / "arenas" / "primary-failover"
GUEST_DIRS = ("/var/lib/failover", "/usr/local/lib/aoe", "/etc/systemd/system")
SERVING = {"failover-replica.service": 8082, "failover-proxy.service": 8080}
STATE = "{root}/var/lib/failover"

SPEC = GuestSpec(
    arena=ARENA,
    territory="failover-one",
    guest_dirs=GUEST_DIRS,
    serving=SERVING,
    start={unit: f"env FAILOVER_DIR={STATE} python3 {{root}}/usr/local/lib/aoe/{unit[:-8]}.py" for unit in SERVING},
    seed=f"FAILOVER_DIR={STATE} sh {{root}}/usr/local/lib/aoe/failover-seed",
)


class FailoverGuest(NamespacedGuest):
    def __init__(self, work: Path) -> None:
        super().__init__(SPEC, work)
