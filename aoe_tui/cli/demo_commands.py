"""`aoe demo`: the README's main job — a live race on real VMs in the app (First Build by default).

The guest image is built first when it is not cached (its progress shows in
the preparation view), then the arena's built-in builders race. `--arena ID`
races another arena: `./arenas/ID/` (one made by `aoe arena init`) or a
bundled one. `--sample` opens the bundled sample replay instead, for a
machine without libvirt.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from aoe_tui.cli.arena_init import ARENAS_DIR
from aoe_tui.cli.run_commands import add_runner_options, real_runner
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.manifest_rules import ID_PATTERN
from aoe_tui.engine.arena_check import MANIFEST_NAME
from aoe_tui.runtime.image_layer import ensure_image
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.store.saved_match import load_match

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
DEFAULT_SAMPLE = SAMPLES / "infra-core-first-build-real-r1.match.json"
BUNDLED_ARENAS = Path(__file__).resolve().parents[2] / "arenas"
DEFAULT_ARENA = "first-build"


def demo_arena(arena_id: str) -> Path:
    """The manifest of arena `arena_id`: the working folder's `arenas/ID/` first, then the bundled one."""
    if not ID_PATTERN.match(arena_id):
        raise AoeError(f"--arena {arena_id!r}: an arena id is lowercase ASCII letters, digits and hyphens")
    for arenas in (ARENAS_DIR, BUNDLED_ARENAS):
        if (arenas / arena_id / MANIFEST_NAME).is_file():
            return arenas / arena_id / MANIFEST_NAME
    bundled = sorted(p.parent.name for p in BUNDLED_ARENAS.glob(f"*/{MANIFEST_NAME}"))
    raise AoeError(
        f"--arena {arena_id}: no {ARENAS_DIR / arena_id / MANIFEST_NAME} here and none bundled ({', '.join(bundled)})"
    )


def demo(args: argparse.Namespace) -> int:
    from aoe_tui.cli.app_launch import open_replay, run_live

    if args.sample:
        return open_replay(load_match(DEFAULT_SAMPLE))
    manifest = demo_arena(args.arena)

    def build(say) -> None:
        """The base image, and the arena's image layer when its territories name one (First Contact)."""
        ensure_image({t.image for t in load_manifest(manifest).territories}, say)

    return run_live(real_runner(args, manifest), before_match=build)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "demo", help="live race on real VMs, First Build by default (--sample: the bundled replay)"
    )
    p.add_argument("--sample", action="store_true", help="open the bundled sample replay instead (no VMs)")
    p.add_argument(
        "--arena",
        default=DEFAULT_ARENA,
        metavar="ID",
        help=f"the arena to race: ./arenas/ID/ or a bundled one (default {DEFAULT_ARENA})",
    )
    add_runner_options(p)
    p.set_defaults(handler=demo)
