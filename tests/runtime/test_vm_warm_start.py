"""Warm starts on real guests: three territories restored from one saved template, each its own machine.

The module's match starts three guests of one class with `warm_start=True` (the template is made first
when this machine has none). Each clone must come up as its own guest: its own key alone authorized (the
template's key no longer logs in), its own SSH host key pinned, hostname, machine id and random stream,
the host's clock; and a referee reboot of a clone is a cold boot of its own disk that keeps all that. A template that will
not restore is discarded (when its match closes, no other match holding it) and its guest boots cold.
"""

from __future__ import annotations

import time

import asyncssh
import pytest
import pytest_asyncio

from aoe_tui.runtime import warm_template
from aoe_tui.runtime.keys import MatchKeys
from aoe_tui.runtime.match_runtime import MatchRuntime, TerritorySpec
from aoe_tui.runtime.overlay import create_overlay
from aoe_tui.runtime.ports import LOOPBACK
from aoe_tui.runtime.warm_start import CONSOLE_NOTE, KEYS, WarmTemplate
from aoe_tui.store.match_layout import MatchLayout
from tests.runtime.free_ports import free_base_port

pytestmark = [pytest.mark.vm, pytest.mark.asyncio(loop_scope="module")]
TERRITORIES = ("alpha", "beta", "gamma")
FACTS = (
    "hostname; cat /etc/machine-id; od -An -tx1 -N16 /dev/urandom | tr -d ' \\n'; echo; date +%s; "
    "cut -d' ' -f1,2 /etc/ssh/ssh_host_ed25519_key.pub; cat /root/.ssh/authorized_keys"
)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def started(guest_image, tmp_path_factory):
    progress: list[str] = []
    runtime = MatchRuntime(
        tmp_path_factory.mktemp("warm"),
        "warm",
        [TerritorySpec(territory_id, 1, 768) for territory_id in TERRITORIES],
        free_base_port(len(TERRITORIES)),
        image=guest_image,
        warm_start=True,
        on_progress=progress.append,
    )
    await runtime.start()
    print(f"\n[timing] warm start to SSH, three guests: {runtime.boot_seconds}; {progress}")
    yield runtime, progress
    await runtime.close()


async def _facts(runtime: MatchRuntime, territory_id: str) -> list[str]:
    result = await runtime.vm(territory_id).run(FACTS, 30)
    assert result.exit_status == 0, result.stderr
    return result.stdout.splitlines()


async def test_every_guest_was_restored_from_the_template(started) -> None:
    runtime, progress = started
    assert any("are restored from template" in line for line in progress), progress
    assert all(vm.warm is not None for vm in runtime.vms.values()), "a guest fell back to a cold boot"
    for territory_id, vm in runtime.vms.items():
        assert CONSOLE_NOTE.format(territory_id) in vm.console_tail(), "its console says it was restored"
    leftovers = [t.warm_state for t in MatchLayout(runtime.match_dir).territories() if t.warm_state.exists()]
    assert leftovers == [], "a clone's copy of the saved state was left behind"


async def test_each_clone_is_its_own_machine(started) -> None:
    runtime, _ = started
    facts = {territory_id: await _facts(runtime, territory_id) for territory_id in TERRITORIES}
    for territory_id, (hostname, _machine_id, _random_bytes, clock, host_key, *authorized) in facts.items():
        vm = runtime.vm(territory_id)
        assert hostname == territory_id
        assert abs(int(clock) - time.time()) < 30, "the clone kept the template's clock"
        assert authorized == [vm.keys.public_key_openssh()], "only the territory's own key may log in"
        assert vm.keys.pinned_line(LOOPBACK, vm.ssh_port).split(" ", 1)[1] == host_key
        assert host_key.split()[1] not in vm.warm.template.host_key, "the clone still has the template's host key"
    for index in (1, 2, 4):  # machine id, random stream, host key: no two clones share one
        assert len({facts[t][index] for t in TERRITORIES}) == len(TERRITORIES), index


async def test_the_template_key_no_longer_logs_in(started) -> None:
    runtime, _ = started
    for vm in runtime.vms.values():
        with pytest.raises(asyncssh.PermissionDenied):
            await asyncssh.connect(
                LOOPBACK,
                vm.ssh_port,
                username="root",
                client_keys=[vm.warm.template.keys.client_key()],
                known_hosts=None,
                agent_path=None,
                config=[],
                preferred_auth="publickey",
            )


async def test_a_reboot_of_a_clone_is_proven_and_keeps_its_identity(started) -> None:
    runtime, _ = started
    before = await _facts(runtime, "beta")
    proof = await runtime.vm("beta").reboot(300)
    print(f"\n[timing] reboot of a warm-started guest to SSH: {proof.seconds:.1f} s")
    assert proof.caused_by in ("acpi", "reset-fallback") and "console-banner" in proof.proven_by
    assert proof.boot_id_before != proof.boot_id_after
    after = await _facts(runtime, "beta")
    assert after[0] == "beta" and after[4:] == before[4:]  # hostname, host key, the one authorized key


async def test_a_template_that_will_not_restore_is_discarded_and_the_guest_boots_cold(
    guest_image, tmp_path, monkeypatch
) -> None:
    broken = WarmTemplate(tmp_path / "broken-template", "ssh-ed25519 AAAA", 20.0)
    MatchKeys.ensure(broken.directory / KEYS)
    broken.saved_state.write_bytes(b"not a save image")
    create_overlay(guest_image.path, broken.disk)
    monkeypatch.setattr(warm_template, "read_template", lambda _class: broken)
    progress: list[str] = []
    runtime = MatchRuntime(
        tmp_path / "match",
        "warmbroken",
        [TerritorySpec("delta", 1, 704)],  # its own class: the module's match still holds the 768 MiB template
        free_base_port(1),
        image=guest_image,
        warm_start=True,
        on_progress=progress.append,
    )
    try:
        await runtime.start()
        vm = runtime.vm("delta")
        assert vm.warm is None and any("warm start failed" in line and "booting it cold" in line for line in progress)
        assert broken.directory.exists(), "removed only once this match lets go of it"
        assert (await vm.run("hostname", 30)).stdout.strip() == "delta"
    finally:
        await runtime.close()
    assert not broken.directory.exists(), "a template that will not restore is made again next time"
    assert any("would not restore: removed" in line for line in progress)
