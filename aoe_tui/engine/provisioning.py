"""Writing an arena's starting state into its guests, and proving it took.

The referee runs this after SSH preflight and before any agent starts or any
agent appears in the event log (`engine.runner`): every territory gets the
same files, databases and units, in one SSH call of one generated bash
script, which then checks what the arena promised (running units active,
listening ports listening, free ports free). A guest that cannot be set up
is the arena's failure (`ArenaSetupFailed`), never a player's.

The script carries every byte base64-encoded, so no file content is ever
parsed by a shell, and it is piped to bash rather than run as an argument.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.manifest import Manifest
from aoe_tui.domain.provisioning import Provisioning
from aoe_tui.engine.territory import TerritoryHost, TerritoryUnavailable

MARKER = "# aoe provisioning"  # the first line of the command, so a scripted guest can recognise it
APPLY_TIMEOUT_SECONDS = 180.0  # three TCG guests starting units at once are slow
SETTLE_SECONDS = 30  # how long running units and listening ports get to come up
_DETAIL_LIMIT = 400


class ArenaSetupFailed(Exception):
    """A guest could not be prepared (provisioning, fog-of-war audit): the arena's fault, never the player's."""

    def __init__(self, territory_id: str, component: str, detail: str) -> None:
        super().__init__(detail)
        self.territory_id = territory_id
        self.component = component
        self.detail = detail


@dataclass(frozen=True)
class ProvisioningBundle:
    """The provisioning table with every source file's bytes, read once from the arena folder."""

    spec: Provisioning
    contents: dict[str, bytes]

    def digest(self) -> str:
        """Changes when the table or any byte it writes changes (part of the compatibility key)."""
        digest = hashlib.sha256(json.dumps(self.spec.model_dump(mode="json"), sort_keys=True).encode() + b"\0")
        for source in self.spec.sources():
            digest.update(source.encode() + b"\0" + self.contents[source] + b"\0")
        return digest.hexdigest()


def load_bundle(manifest: Manifest, manifest_path: Path) -> ProvisioningBundle | None:
    """The arena's provisioning with its files, or None; AoeError naming the missing or unreadable file."""
    if manifest.provisioning is None:
        return None
    arena_dir = Path(manifest_path).resolve().parent
    contents: dict[str, bytes] = {}
    for source in manifest.provisioning.sources():
        path = arena_dir / source
        try:
            contents[source] = path.read_bytes()
        except OSError as error:
            raise AoeError(
                f"{manifest_path}: provisioning source {source} cannot be read "
                f"({error.strerror or error.__class__.__name__}: {path})"
            ) from None
    return ProvisioningBundle(manifest.provisioning, contents)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def render_script(bundle: ProvisioningBundle, root: str = "") -> str:
    """The bash script that provisions one guest; `root` prefixes every written path (tests only)."""
    spec = bundle.spec
    q = shlex.quote
    lines = [
        "set -u",
        f"ROOT={q(root)}",
        'fail() { printf "%s\\n" "$*" >&2; exit 1; }',
        (
            'put() { mkdir -p "$(dirname "$ROOT$1")" && printf %s "$3" | base64 -d >"$ROOT$1.aoe-new" '
            '&& chmod "$2" "$ROOT$1.aoe-new" && mv -f "$ROOT$1.aoe-new" "$ROOT$1" || fail "cannot write $1"; }'
        ),
    ]
    for item in spec.files:
        lines.append(f"put {q(item.path)} {q(item.mode)} {_b64(bundle.contents[item.source])}")
    for db in spec.databases:
        lines.append(
            f'if [ ! -e "$ROOT"{q(db.path)} ]; then mkdir -p "$(dirname "$ROOT"{q(db.path)})" && '
            f'printf %s {_b64(bundle.contents[db.sql])} | base64 -d | sqlite3 "$ROOT"{q(db.path)} '
            f'|| fail "cannot seed the SQLite database {db.path}"; fi'
        )
    for unit in spec.units:
        lines.append(f"put /etc/systemd/system/{unit.name} 0644 {_b64(bundle.contents[unit.source])}")
    if spec.units:
        names = " ".join(q(u.name) for u in spec.units)
        started = " ".join(q(u.name) for u in spec.units if u.state != "dormant")
        lines += [
            'systemctl daemon-reload || fail "systemctl daemon-reload failed"',
            f'systemctl enable --quiet {names} 2>&1 || fail "cannot enable {names}"',
        ]
        if started:
            # A seed is a oneshot: start waits for it, so what it writes exists before the checks.
            lines.append(
                f'systemctl start {started} 2>&1 || fail "cannot start {started}: '
                f'$(systemctl --no-pager status {started} 2>&1 | tail -n 3)"'
            )
    lines += _checks(spec)
    lines.append("echo provisioned")
    return "\n".join(lines) + "\n"


def _checks(spec: Provisioning) -> list[str]:
    """Wait up to SETTLE_SECONDS for what must run and listen; a free port must be free right away."""
    waits = [f"systemctl is-active --quiet {shlex.quote(u.name)}" for u in spec.units if u.state == "running"]
    waits += [f'[ -n "$(ss -Hltn "sport = :{port}")" ]' for port in spec.listening_ports]
    lines = []
    if waits:
        condition = " && ".join(waits)
        lines.append(f"for _ in $(seq {SETTLE_SECONDS * 2}); do {condition} && break; sleep 0.5; done")
    for unit in spec.units:
        if unit.state == "running":
            lines.append(
                f'systemctl is-active --quiet {shlex.quote(unit.name)} || fail "unit {unit.name} is not '
                f'active after provisioning ($(systemctl is-active {shlex.quote(unit.name)}))"'
            )
        elif unit.state == "seed":
            lines.append(f'systemctl is-failed --quiet {shlex.quote(unit.name)} && fail "seed unit {unit.name} failed"')
    for port in spec.listening_ports:
        lines.append(
            f'[ -n "$(ss -Hltn "sport = :{port}")" ] || fail "nothing listens on guest port {port} after provisioning"'
        )
    for port in spec.free_ports:
        lines.append(
            f'[ -z "$(ss -Hltn "sport = :{port}")" ] || fail "guest port {port} must be free before '
            'the match, but something listens on it"'
        )
    return lines


def command_for(script: str) -> str:
    """The one SSH command: the marker line, then the script piped (base64) into bash."""
    return f"{MARKER}\nprintf %s {_b64(script.encode())} | base64 -d | bash"


async def provision_one(host: TerritoryHost, bundle: ProvisioningBundle) -> None:
    try:
        result = await host.run(command_for(render_script(bundle)), APPLY_TIMEOUT_SECONDS)
    except TerritoryUnavailable as error:
        raise ArenaSetupFailed(
            host.territory_id, "provisioning", f"provisioning {host.territory_id}: {error}"
        ) from None
    if result.exit_status != 0 or "provisioned" not in result.stdout:
        reason = (result.stderr.strip() or result.stdout.strip() or f"exit {result.exit_status}").splitlines()[-1]
        raise ArenaSetupFailed(
            host.territory_id, "provisioning", f"provisioning {host.territory_id} failed: {reason[:_DETAIL_LIMIT]}"
        )


async def provision(hosts: dict[str, TerritoryHost], bundle: ProvisioningBundle) -> None:
    """Provision every guest at once; the first failure (in territory order) is raised after all finished."""
    results = await asyncio.gather(*(provision_one(h, bundle) for h in hosts.values()), return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
