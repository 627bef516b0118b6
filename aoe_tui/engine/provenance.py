"""`match.json`: what exactly was run, so two matches can be compared honestly.

The compatibility key says "same contest": it covers the rules, milestones,
territories, the player brief, the verifier scripts' bytes and the guests'
provisioning (its digest, when the arena has one), and
deliberately not the category label, the display names, the agents and their
adapters, or the controller version — changing who plays, or upgrading the
tool, does not make a different contest.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

from aoe_tui import __version__
from aoe_tui.agents.harnesses import harness_spec
from aoe_tui.agents.registry import resolve_adapter
from aoe_tui.domain.manifest import Manifest
from aoe_tui.engine.instructions import brief_files, player_brief
from aoe_tui.engine.provisioning import load_bundle
from aoe_tui.store.manifest_file import VERIFIER_HELPERS, resolve_verifier

SCHEMA_VERSION = 1


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sha256_files(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def verifier_files(manifest: Manifest, manifest_path: Path) -> list[Path]:
    """Every verifier script plus the shell helpers beside them and the shared `verify/lib.sh` (part of the check)."""
    milestones = manifest.build.milestones if manifest.build is not None else []  # a conquest has none
    scripts = {resolve_verifier(manifest_path, m.verifier).resolve() for m in milestones}
    helpers = {h.resolve() for s in scripts for h in s.parent.glob("*.sh")}
    shared = {VERIFIER_HELPERS.resolve()}  # an arena's own scripts source the shared helpers too
    return sorted(scripts | helpers | shared | host_programs(scripts | helpers))


HOST_PROGRAMS = {
    "aoe_tui.runtime.load_generator": Path(__file__).resolve().parents[1] / "runtime" / "load_generator.py"
}
"""The project's programs a verifier may run on the host (by module name): part of the check when it does."""


def host_programs(scripts: set[Path]) -> set[Path]:
    """The host programs named in the scripts' text (an arena that names none keeps its old key)."""
    texts = [s.read_text(encoding="utf-8", errors="replace") for s in scripts]
    return {path for module, path in HOST_PROGRAMS.items() if any(module in text for text in texts)}


def source_revision(project_dir: Path) -> str | None:
    try:
        result = subprocess.run(
            ["git", "-C", str(project_dir), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() or None if result.returncode == 0 else None


def compatibility_key(
    manifest: Manifest, player_brief_sha256: str, verifier_sha256: str, provisioning_sha256: str | None = None
) -> str:
    contest = manifest.to_json()
    contest["arena"] = {"id": manifest.arena.id, "mode": manifest.arena.mode}
    for cosmetic in ("agents", "visualization"):
        contest.pop(cosmetic, None)
    # The provisioning is keyed by its digest (table and bytes); an arena without one keeps its old key.
    contest.pop("provisioning", None)
    if contest.get("monitors") is None:  # an arena without monitors keeps its old key
        contest.pop("monitors", None)
    for milestone in (contest.get("build") or {}).get("milestones", []):
        milestone.pop("display_name", None)
    for territory_class in contest.get("classes", []):
        territory_class.pop("display_name", None)
    payload = {"contest": contest, "player_brief_sha256": player_brief_sha256, "verifier_sha256": verifier_sha256}
    if provisioning_sha256 is not None:
        payload["provisioning_sha256"] = provisioning_sha256
    return sha256_bytes(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode())


def harness_versions(manifest: Manifest) -> dict[str, dict[str, str]]:
    """`harness_versions`: each real harness raced, as package@version (left out when none was, as before)."""
    versions = {a.adapter: spec for a in manifest.agents if (spec := harness_spec(a.adapter)) is not None}
    return {"harness_versions": versions} if versions else {}


def provenance(manifest: Manifest, manifest_path: Path) -> dict[str, Any]:
    manifest_path = Path(manifest_path)
    briefs = brief_files(manifest, manifest_path)
    # A fog brief is one file, so its hash is that file's SHA-256 (ARENAS §6).
    brief = sha256_bytes(briefs[0].read_bytes()) if player_brief(manifest) else _sha256_files(briefs)
    verifiers = _sha256_files(verifier_files(manifest, manifest_path))
    bundle = load_bundle(manifest, manifest_path)
    setup = {"provisioning_sha256": bundle.digest()} if bundle is not None else {}
    return {
        "schema_version": SCHEMA_VERSION,
        "controller_version": __version__,
        "source_revision": source_revision(Path(__file__).resolve().parent),
        "arena_id": manifest.arena.id,
        "arena_mode": manifest.arena.mode,
        "manifest_sha256": sha256_bytes(manifest_path.read_bytes()),
        "player_brief_sha256": brief,
        "verifier_sha256": verifiers,
        "adapter_sha256": {
            a.adapter: resolve_adapter(a.adapter, manifest_path.resolve().parent).sha256() for a in manifest.agents
        },
        **setup,
        **harness_versions(manifest),
        "compatibility_key": compatibility_key(manifest, brief, verifiers, setup.get("provisioning_sha256")),
    }
