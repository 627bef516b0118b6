"""The digest that makes a changed event in an exported match visible.

`aoe export` stores `integrity.events_sha256`: the SHA-256 of the events as
canonical JSON (keys sorted, no spaces, UTF-8). Reading an export recomputes
it from the events found in the file, so an event edited, added or dropped
after export is reported instead of replayed as if the referee had said it. A
single-file match without the field (the earlier controller's) is read as it
is: there is nothing to check it against.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from aoe_tui.domain.errors import AoeError

INTEGRITY = "integrity"
EVENTS_DIGEST = "events_sha256"


def events_digest(events: list[Any]) -> str:
    canonical = json.dumps(events, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def check_events_digest(document: dict[str, Any], where: str) -> None:
    """Raise a one-line error naming `where` when the document's events are not the ones it was exported with."""
    integrity = document.get(INTEGRITY)
    if integrity is None:
        return
    expected = integrity.get(EVENTS_DIGEST) if isinstance(integrity, dict) else None
    if not isinstance(expected, str):
        raise AoeError(f"{where}: field {INTEGRITY}.{EVENTS_DIGEST}: missing or not a string")
    found = events_digest(document.get("events") or [])
    if found != expected:
        raise AoeError(
            f"{where}: the events were changed after export ({EVENTS_DIGEST} is {found[:12]}…, "
            f"the export recorded {expected[:12]}…); not replaying a record that is not the referee's"
        )
