"""The fog-of-war guest leak audit (ARENAS §6): the real boundary of a hidden-information arena.

A fog arena tells its players only the brief; the names of the referee's
checks and its own notes must not be findable in the guest. Before any agent
starts, every guest's scan paths are searched for every forbidden string
(exact, case-sensitive substring; regular files on one filesystem, under
4 MiB, not binary). The first hit aborts the match as an arena failure naming
the territory, the string and the file. SSH errors get a few quick retries,
then abort the match as a preflight failure.
"""

from __future__ import annotations

import asyncio
import shlex

from aoe_tui.domain.manifest import LeakAudit
from aoe_tui.engine.provisioning import ArenaSetupFailed
from aoe_tui.engine.territory import TerritoryHost, TerritoryUnavailable

MARKER = "# aoe fog audit"
MAX_FILE_BYTES = 4 * 1024 * 1024
SSH_TRIES = 5
RETRY_SECONDS = 0.5
AUDIT_TIMEOUT_SECONDS = 120.0
_PATH_LIMIT = 300


def audit_command(leak: LeakAudit) -> str:
    """One shell command that prints `HIT<TAB>index<TAB>path` for the first hit, or `CLEAN`.

    The scan is one pass with every string at once (a TCG guest reads /var/lib slowly); only the
    file found is searched again, to name which string it holds."""
    paths = " ".join(shlex.quote(p) for p in leak.scan_paths)
    patterns = " ".join(f"-e {shlex.quote(s)}" for s in leak.forbidden_strings)
    strings = " ".join(shlex.quote(s) for s in leak.forbidden_strings)
    return (
        f"{MARKER}\nhit=$(find {paths} -xdev -type f -size -{MAX_FILE_BYTES}c -print0 2>/dev/null "
        f"| xargs -0 -r grep -F -l -I -s {patterns} -- 2>/dev/null | head -n 1); "
        '[ -n "$hit" ] || { echo CLEAN; exit 0; }; '
        f"i=0; for s in {strings}; do "
        'grep -F -q -s -e "$s" -- "$hit" && { printf "HIT\\t%s\\t%s\\n" "$i" "$hit"; exit 0; }; '
        "i=$((i+1)); done; echo CLEAN"
    )


def leak_detail(territory_id: str, string: str, path: str) -> str:
    return f'fog-of-war guest leak in {territory_id}: "{string}" found at {path[:_PATH_LIMIT]}'


async def audit_one(host: TerritoryHost, leak: LeakAudit, retry_seconds: float = RETRY_SECONDS) -> None:
    command = audit_command(leak)
    problem = ""
    for attempt in range(SSH_TRIES):
        if attempt:
            await asyncio.sleep(retry_seconds)
        try:
            result = await host.run(command, AUDIT_TIMEOUT_SECONDS)
        except TerritoryUnavailable as error:
            problem = str(error)
            continue
        output = result.stdout.strip()
        if output.startswith("HIT\t"):
            _, index, path = output.splitlines()[0].split("\t", 2)
            raise ArenaSetupFailed(
                host.territory_id,
                "fog-of-war guest leak audit",
                leak_detail(host.territory_id, leak.forbidden_strings[int(index)], path),
            )
        if output.endswith("CLEAN"):
            return
        problem = f"unexpected answer (exit {result.exit_status}): {(result.stderr or output).strip()[-200:]}"
    raise ArenaSetupFailed(
        host.territory_id,
        "preflight",
        f"fog-of-war audit of {host.territory_id} could not run after {SSH_TRIES} tries: {problem}",
    )


async def audit(hosts: dict[str, TerritoryHost], leak: LeakAudit) -> None:
    """Audit every guest at once; the first failure in territory order is raised once all have answered."""
    results = await asyncio.gather(*(audit_one(h, leak) for h in hosts.values()), return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
