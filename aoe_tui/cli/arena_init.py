"""`aoe arena init NAME`: a new arena folder, `arenas/NAME/`, that validates and runs as it is.

The folder is copied from the package's `arena-template/` (a hyphenated name: data, never imported),
with the arena's id and display name put in. It is written beside its final place and renamed
into it, so a failure leaves no half folder, and it never replaces an existing one.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.manifest_rules import ID_PATTERN

TEMPLATE = Path(__file__).resolve().parent / "arena-template"
ARENAS_DIR = Path("arenas")
_ID_TOKEN, _NAME_TOKEN = "__ARENA_ID__", "__ARENA_NAME__"
_SKIPPED = {"__pycache__"}


def display_name(arena_id: str) -> str:
    return arena_id.replace("-", " ").title()


def template_files() -> list[Path]:
    """The template's files, relative to it, in a stable order."""
    return sorted(
        path.relative_to(TEMPLATE)
        for path in TEMPLATE.rglob("*")
        if path.is_file() and not _SKIPPED & set(path.relative_to(TEMPLATE).parts)
    )


def init_arena(arena_id: str, arenas_dir: Path = ARENAS_DIR) -> tuple[Path, list[Path]]:
    """Create `arenas_dir/arena_id/`; returns it and the files written (relative to it)."""
    if not ID_PATTERN.match(arena_id):
        raise AoeError(
            f"arena id {arena_id!r}: must be lowercase ASCII letters, digits and hyphens (it names the folder)"
        )
    target = arenas_dir / arena_id
    if target.exists() or target.is_symlink():
        raise AoeError(f"{target}: already exists (choose another name, or move it away first)")
    arenas_dir.mkdir(parents=True, exist_ok=True)
    files = template_files()
    staging = Path(tempfile.mkdtemp(prefix=f".{arena_id}.", dir=arenas_dir))
    try:
        for relative in files:
            text = (TEMPLATE / relative).read_text(encoding="utf-8")
            written = staging / relative
            written.parent.mkdir(parents=True, exist_ok=True)
            written.write_text(text.replace(_ID_TOKEN, arena_id).replace(_NAME_TOKEN, display_name(arena_id)))
            written.chmod(0o755 if relative.suffix == ".sh" else 0o644)
        staging.chmod(0o755)
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target, files
