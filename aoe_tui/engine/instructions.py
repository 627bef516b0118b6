"""What an agent is told: the files that make the player brief, and the instruction rendered from them.

Without fog of war an agent reads its seat file (`instructions/<territory>.md`
when the arena has one per territory, as an asymmetric conquest does, else
`instructions/builder.md`; a template) with the arena's `CONTRACT.md` in it; in a fog arena it reads the
`[fog_of_war] player_brief` alone, which replaces both (ARENAS §6). Either
way the instruction ends with the standard deadline paragraph, so every agent
knows the referee alone decides and when the clock runs out. The brief's
bytes are hashed into `player_brief_sha256` (engine.provenance).
"""

from __future__ import annotations

from pathlib import Path

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.manifest import AgentSpec, Manifest

CONTRACT_FILE = "CONTRACT.md"
INSTRUCTION_TEMPLATE = Path("instructions") / "builder.md"

DEADLINE_PARAGRAPH = """\
## How this match is decided

The referee alone decides whether your work counts, by its own checks from
outside your guest on a fixed clock. Implement the service, verify it
yourself, and leave it running. The referee's evidence, {hidden}the other
players and future events are not available to you. The hard deadline is
{duration_seconds} seconds after the match starts.
"""


def player_brief(manifest: Manifest) -> str | None:
    """The fog arena's brief path (relative to the arena folder), or None when the arena has no fog."""
    return manifest.fog_of_war.player_brief if manifest.fog_of_war is not None else None


def brief_files(manifest: Manifest, manifest_path: Path) -> list[Path]:
    """The player brief: the fog brief alone, or the contract and the seat template when present."""
    arena_dir = Path(manifest_path).resolve().parent
    brief = player_brief(manifest)
    if brief is not None:
        path = arena_dir / brief
        if not path.is_file():
            raise AoeError(f"{manifest_path}: fog_of_war.player_brief: {brief} not found in {arena_dir}")
        return [path]
    seats = [arena_dir / INSTRUCTION_TEMPLATE.parent / f"{t.id}.md" for t in manifest.territories]
    candidates = (arena_dir / CONTRACT_FILE, arena_dir / INSTRUCTION_TEMPLATE, *seats)
    return [path for path in candidates if path.is_file()]


def deadline_paragraph(manifest: Manifest) -> str:
    hidden = "the hidden topology, " if manifest.fog_of_war is not None else ""
    return DEADLINE_PARAGRAPH.format(hidden=hidden, duration_seconds=manifest.rules.duration_seconds)


def render_instruction(manifest: Manifest, manifest_path: Path, agent: AgentSpec, host: str, ssh_port: int) -> str:
    arena_dir = Path(manifest_path).resolve().parent
    brief = player_brief(manifest)
    if brief is not None:
        body = (arena_dir / brief).read_text(encoding="utf-8")
        access = (
            f"\nYou are agent `{agent.id}` in territory `{agent.territory}`. Reach your guest as root: "
            f"`ssh -i $AOE_SSH_KEY -o UserKnownHostsFile=$AOE_KNOWN_HOSTS -p {ssh_port} root@{host}`.\n"
        )
        return body.rstrip("\n") + "\n" + access + "\n" + deadline_paragraph(manifest)
    contract = _read(arena_dir / CONTRACT_FILE)
    seat = arena_dir / INSTRUCTION_TEMPLATE.parent / f"{agent.territory}.md"
    template = _read(seat if seat.is_file() else arena_dir / INSTRUCTION_TEMPLATE) or "{contract}"
    text = template.format(
        agent=agent.id,
        territory=agent.territory,
        arena=manifest.arena.display_name,
        ssh_port=ssh_port,
        host=host,
        duration_seconds=manifest.rules.duration_seconds,
        contract=contract,
    )
    return text.rstrip("\n") + "\n\n" + deadline_paragraph(manifest)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""
