"""Options several commands take, defined once so each has the same name, default, help and check.

`--agents FLEET.toml` (who plays, given apart from the arena: `aoe run`, `aoe demo`, `aoe validate`), the
libvirt `--uri` (the runners and the runtime commands) and the post-match `--drain-seconds` (a match and a
series).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from aoe_tui.domain.errors import AoeError


def add_fleet_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--agents",
        type=Path,
        default=None,
        metavar="FLEET.toml",
        help="play these agents instead of the arena's: a TOML of [[agents]] tables only, "
        "e.g. arenas/first-build/fleets/real-models.toml (the contest stays the same)",
    )


def add_uri_option(p: argparse.ArgumentParser) -> None:
    from aoe_tui.runtime.hypervisor import DEFAULT_URI  # here: the runtime is a tenth of a second to import

    p.add_argument("--uri", default=DEFAULT_URI, help=f"libvirt URI (default {DEFAULT_URI})")


def add_drain_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--drain-seconds",
        type=float,
        default=None,
        help="post-match drain for unfinished agents (default: the manifest's rules)",
    )


def check_drain_seconds(args: argparse.Namespace) -> None:
    if args.drain_seconds is not None and args.drain_seconds < 0:
        raise AoeError(f"--drain-seconds {args.drain_seconds}: must be 0 or more")
