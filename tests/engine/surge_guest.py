"""A Traffic Surge "guest" on this host, for fast tests (tests.engine.namespaced_guest).

The seed puts the serial app in /opt/traffic-surge and the history in
/var/lib/traffic-surge; traffic-surge.service runs whatever app.py is there on
port 8080; a reboot empties /run/traffic-surge as tmpfs would.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.engine.namespaced_guest import GuestSpec, NamespacedGuest
from tests.fixture_paths import PROJECT

ARENA = PROJECT / "arenas" / "traffic-surge"
UNIT = "traffic-surge.service"
VOLATILE = "/run/traffic-surge"
PROOF = {"reboot_caused_by": "acpi", "reboot_proven_by": ["libvirt-event"]}

SPEC = GuestSpec(
    arena=ARENA,
    territory="surge-one",
    guest_dirs=("/opt/traffic-surge", "/var/lib/traffic-surge", VOLATILE, "/usr/local/lib/aoe", "/etc/systemd/system"),
    serving={UNIT: 8080},
    # The arena's own app reads its folder from the environment; a builder's app had its paths mapped when written.
    start={UNIT: "env TRAFFIC_SURGE_DIR={root}/var/lib/traffic-surge python3 {root}/opt/traffic-surge/app.py"},
    seed="TRAFFIC_SURGE_ROOT={root} sh {root}/usr/local/lib/aoe/traffic-surge-seed",
)


class SurgeGuest(NamespacedGuest):
    def __init__(self, work: Path) -> None:
        super().__init__(SPEC, work)

    def reboot(self) -> None:
        """The server stopped, /run emptied (tmpfs), then a boot."""
        assert self.run(f"systemctl stop {UNIT}").returncode == 0
        shutil.rmtree(self.path(VOLATILE), ignore_errors=True)
        self.path(VOLATILE).mkdir(parents=True)
        self.boot()

    async def checked_until(self, milestones: list[str], reboot: bool = True) -> dict:
        """Every milestone in order, each passing (the host reboot in its two phases): their evidence."""
        evidence: dict = {}
        for milestone in milestones:
            if milestone != "host-reboot":
                outcome = await self.verify(milestone, evidence)
                assert outcome.passed, (milestone, outcome.detail)
                evidence[milestone] = outcome.evidence
                continue
            before = await self.verify(milestone, evidence, AOE_VERIFY_PHASE="before_reboot")
            assert before.passed, before.detail
            after = await self.after_reboot(evidence)
            assert after.passed, after.detail
            evidence[milestone] = after.evidence
        return evidence

    async def after_reboot(self, evidence: dict, **env: str):
        self.reboot()
        proof = self.work / "proof.json"
        proof.write_text(json.dumps(PROOF))
        return await self.verify(
            "host-reboot", evidence, AOE_VERIFY_PHASE="after_reboot", AOE_REBOOT_PROOF=str(proof), **env
        )
