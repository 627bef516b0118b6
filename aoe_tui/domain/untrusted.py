"""Text from a player: the one place it is made safe to store and to print.

Anything a guest, an agent or an adapter says (a verifier's failure detail, a
service's body, a tool output, a summary) may carry terminal escape sequences
that retitle or clear the operator's terminal, control characters that hide
or rewrite a line, or megabytes of output. `clean_text` strips the sequences
and controls (keeping newlines and tabs) and bounds the size, keeping the head
and tail where the useful parts of a long output usually are. It never raises:
it is called on whatever arrives. `clean_value` does the same for every string
inside a JSON-like value, and `first_line` gives its cleaned first line, cut
to fit a one-line display. Rich markup is not touched here: it is harmless in a
terminal and is kept out of the app by rendering such text literally.
"""

from __future__ import annotations

import re
from typing import Any

DEFAULT_LIMIT = 16_000

# ESC-introduced strings (OSC, DCS, SOS, PM, APC) and their 8-bit forms run to
# BEL or ST; an unterminated one ends at the line (its ESC gone, the rest is
# harmless text, and a console tail keeps its later lines). CSI has parameters
# and one final byte; any other ESC sequence is intermediates plus one final byte.
_STRING_SEQUENCE = r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
_CSI = r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
_OTHER_ESCAPE = r"\x1b[ -/]*[0-~]?"
_SEQUENCES = re.compile(f"{_STRING_SEQUENCE}|{_CSI}|{_OTHER_ESCAPE}")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CARRIAGE_RETURN = re.compile(r"\r\n?")


def clean_text(text: Any, limit: int = DEFAULT_LIMIT) -> str:
    """`text` as a printable, bounded str: no escape sequences, no controls but \\n and \\t."""
    if isinstance(text, str) and len(text) <= limit and _CONTROLS.search(text) is None:
        return text  # most text (every field of nearly every event): short and printable already
    if not isinstance(text, str):
        text = _as_str(text)
    limit = max(limit, 0)
    # Only the ends can be kept: a megabyte output is not scanned whole (the count stays exact).
    dropped = max(len(text) - 4 * limit - 2, 0)
    if dropped:
        text = text[: 2 * limit + 1] + text[len(text) - 2 * limit - 1 :]
    # Every sequence starts with a control (ESC, CR or a C1 byte): most text has none and needs one scan, not three.
    if _CONTROLS.search(text) is not None:
        text = _SEQUENCES.sub("", text)
        text = _CARRIAGE_RETURN.sub("\n", text)
        text = _CONTROLS.sub("", text)
    return _bounded(text, limit, dropped)


def clean_value(value: Any, limit: int = DEFAULT_LIMIT) -> Any:
    """`value` with every str in it (dict keys and values, list items) cleaned; other values kept."""
    if isinstance(value, str):
        return clean_text(value, limit)
    if isinstance(value, dict):
        return {clean_text(k, limit) if isinstance(k, str) else k: clean_value(v, limit) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_value(item, limit) for item in value]
    return value


def first_line(text: str | None, limit: int = 200) -> str:
    """The first line of what may be player text, cleaned (`clean_text`) and cut to `limit`."""
    text = clean_text(text or "").strip()
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _as_str(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    try:
        return str(value)
    except Exception:  # noqa: BLE001 - a hostile __str__ must not break the caller
        return f"<unprintable {type(value).__name__}>"


def _bounded(text: str, limit: int, dropped: int = 0) -> str:
    """`text` if it fits, else its head and tail around a marker saying how much was cut (with `dropped`)."""
    if len(text) <= limit and not dropped:
        return text
    keep = max(limit - len(f"…[{len(text) + dropped} chars cut]…"), 0)  # the widest marker it can need
    head = keep - keep // 3
    tail = keep - head
    return text[:head] + f"…[{len(text) - keep + dropped} chars cut]…" + (text[-tail:] if tail else "")
