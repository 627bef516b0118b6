"""Adversarial scripted builders: root in their own guest, trying to fake durability for real.

They exist to prove the referee cannot be fooled by the guest's userland (issue 10):
each really runs its cheat over SSH, like any player could, and a match against
the oracle must show that it gains nothing it did not earn.

- `cheat-fake-reboot` keeps records in RAM (tmpfs: they survive a service restart,
  never a reboot) and makes a "reboot" instant from inside: `systemctl` and `cat`
  wrappers early in PATH, a fake boot id bind-mounted over
  /proc/sys/kernel/random/boot_id, and the ACPI power button swallowed. The referee
  reboots through libvirt and resets a guest that ignores the button, so the
  records are gone and host-reboot fails.
- `cheat-swallow-restart` keeps records in process memory and dodges the restart:
  a `systemctl` wrapper that answers 0 to restarts of the running service, and a
  drop-in with `KillMode=none` so the old process (holding the records and port
  8080) outlives any restart that does happen. Both are in place before the service
  first answers, so the referee's first restart check always meets them. The referee restarts by absolute path and checks
  the unit's processes and KillMode, so service-restart fails.
"""

from __future__ import annotations

from aoe_tui.agents.scripted.base import UNIT, Plan, Step
from aoe_tui.agents.scripted.durability_plans import durability_plan

_FAKE_BOOT_ID = "/run/aoe-fake-boot-id"

_SYSTEMCTL_REBOOT_WRAPPER = f"""#!/bin/sh
# "reboot" instantly: a new fake boot id, nothing else
case " $* " in
  *" reboot "*) cat /proc/sys/kernel/random/uuid > {_FAKE_BOOT_ID}; exit 0 ;;
esac
exec /usr/bin/systemctl "$@"
"""

_CAT_WRAPPER = f"""#!/bin/sh
# the boot id is whatever the fake says
if [ "$*" = /proc/sys/kernel/random/boot_id ]; then exec /usr/bin/cat {_FAKE_BOOT_ID}; fi
exec /usr/bin/cat "$@"
"""

_SYSTEMCTL_SWALLOW_WRAPPER = f"""#!/bin/sh
# a restart of the running service "succeeds" without touching it (the first start goes through)
case " $* " in
  *" restart "*"{UNIT}"*) /usr/bin/systemctl is-active -q {UNIT} && exit 0 ;;
esac
exec /usr/bin/systemctl "$@"
"""


def _install(path: str, text: str) -> str:
    return f"cat > {path} <<'AOE_CHEAT_EOF'\n{text}AOE_CHEAT_EOF\nchmod 755 {path}"


def _try(command: str) -> str:
    """A cheat carries on even when one trick is refused (the next may work)."""
    return f"{{ {command}; }} || echo 'trick refused, carrying on'"


_FAKE_REBOOT_TAMPERING = (
    Step(
        f"{_install('/usr/local/bin/systemctl', _SYSTEMCTL_REBOOT_WRAPPER)} && "
        f"{_install('/usr/local/bin/cat', _CAT_WRAPPER)} && hash -r && which systemctl cat",
        "Put systemctl and cat wrappers early in PATH",
        0.5,
    ),
    Step(
        f"cat /proc/sys/kernel/random/uuid > {_FAKE_BOOT_ID} && "
        f"mount --bind {_FAKE_BOOT_ID} /proc/sys/kernel/random/boot_id && /usr/bin/cat /proc/sys/kernel/random/boot_id",
        "Bind-mount a fake boot id over the kernel's",
        0.5,
    ),
    Step(
        "printf 'event=button/power.*\\naction=/bin/true\\n' > /etc/acpi/events/aoe-power-button && "
        "/usr/bin/systemctl restart acpid.service && echo swallowed",
        "Swallow the ACPI power button",
        0.5,
    ),
)

_SWALLOW_RESTART_TAMPERING = (
    Step(
        f"{_install('/usr/local/bin/systemctl', _SYSTEMCTL_SWALLOW_WRAPPER)} && hash -r && which systemctl",
        "Put a systemctl wrapper that swallows restarts early in PATH",
        0.5,
    ),
    Step(
        f"mkdir -p /etc/systemd/system/{UNIT}.d && "
        f"printf '[Service]\\nKillMode=none\\n' > /etc/systemd/system/{UNIT}.d/keep-records.conf && "
        f"/usr/bin/systemctl daemon-reload && /usr/bin/systemctl show -p KillMode {UNIT}",
        "Drop in KillMode=none so the old process outlives a restart",
        0.5,
    ),
)


def _cheat(name: str, store: str, summary: str, before: tuple[Step, ...] = (), after: tuple[Step, ...] = ()) -> Plan:
    """The honest deployment of `store` with tampering steps before it (early in PATH) or after it."""
    look, *deploy = durability_plan(name, store, summary, 0.5, ()).steps
    tampering = tuple(Step(_try(step.command), step.description, step.think_seconds) for step in before + after)
    return Plan(name, store, summary, (look, *tampering[: len(before)], *deploy, *tampering[len(before) :]))


CHEATS = {
    "cheat-fake-reboot": _cheat(
        "cheat-fake-reboot",
        "tmpfs",
        "deployed a RAM-backed key-value service and faked reboots from inside the guest",
        before=_FAKE_REBOOT_TAMPERING,
        after=(
            Step(
                "systemctl reboot && cat /proc/sys/kernel/random/boot_id",
                '"Reboot" in a second and show the new boot id',
                0.5,
            ),
        ),
    ),
    "cheat-swallow-restart": _cheat(
        "cheat-swallow-restart",
        "memory",
        "deployed an in-memory key-value service and made service restarts a no-op",
        before=_SWALLOW_RESTART_TAMPERING,
    ),
}
