"""`--agents FLEET.toml`: who plays, given apart from the arena (`aoe run`, `aoe demo`, `aoe validate`).

One definition so the commands that run an arena and the one that checks it
take the same option, with the same help.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_fleet_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--agents",
        type=Path,
        default=None,
        metavar="FLEET.toml",
        help="play these agents instead of the arena's: a TOML of [[agents]] tables only, "
        "e.g. arenas/first-build/fleets/real-models.toml (the contest stays the same)",
    )
