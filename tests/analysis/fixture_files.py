"""Where the real saved matches keep transcripts and analyses (read-only fixtures)."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path("/work/shared/fixtures")
MATCHES = FIXTURES / "matches"
SEEDS = FIXTURES / "seeds"

TRANSCRIPT_FILES = sorted(MATCHES.glob("*/*-transcript.json")) + sorted(MATCHES.glob("*/*-transcript.live.json"))
ANALYSIS_FILES = sorted(MATCHES.glob("*/*-analysis.json"))


def seed_analyses() -> list[tuple[str, dict]]:
    """(label, analysis dict) for every analysis embedded in a single-file match."""
    found = []
    for path in sorted(SEEDS.glob("*.match.json")):
        for agent, analysis in (json.loads(path.read_text())["analyses"] or {}).items():
            found.append((f"{path.name}:{agent}", analysis))
    return found


def transcript_for(analysis_file: Path) -> Path:
    """The transcript a stored analysis was computed from (final one preferred over live)."""
    stem = str(analysis_file).removesuffix("-analysis.json")
    final = Path(stem + "-transcript.json")
    return final if final.exists() else Path(stem + "-transcript.live.json")
