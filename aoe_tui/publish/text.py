"""Player text made safe to publish: secrets redacted, control characters shown, size bounded.

The export's redactor (`domain.secret_patterns.Redactor`) replaces every secret shape and every known
secret value (the provider keys of the publishing environment) with `[redacted]`. Control characters are
shown as Unicode control pictures (ESC as ␛), so an escape sequence in a tool output reads literally on
the page instead of vanishing. Markup is left as it is: the templates escape it, and the page's data is
embedded as JSON with every `<` written `\\u003c`, so no player string can close a script element.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from aoe_tui.domain.secret_patterns import Redactor

LIMIT = 20_000
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return f"\\x{code:02x}"


def shown(text: str, limit: int = LIMIT) -> str:
    """`text` with its controls (but newline and tab) as visible pictures, cut in the middle past `limit`."""
    if len(text) > limit:
        cut = len(text) - limit
        text = f"{text[: limit // 2]}\n… {cut:,} characters left out …\n{text[-limit // 2 :]}"
    text = text.replace("\r\n", "\n")
    return _CONTROLS.sub(_picture, text)


class Scrubber:
    """Cleans every string of a JSON-like value: redacted first (the whole text), then shown."""

    def __init__(self, known_secrets: Iterable[str | None] = ()) -> None:
        self.redactor = Redactor(list(known_secrets))

    def text(self, value: Any, limit: int = LIMIT) -> str:
        if value is None:
            return ""
        if not isinstance(value, str):
            value = (
                json.dumps(value, ensure_ascii=False, default=str)
                if not isinstance(value, (int, float))
                else str(value)
            )
        return shown(self.redactor.text(value), limit)

    def value(self, value: Any, limit: int = LIMIT) -> Any:
        if isinstance(value, str):
            return self.text(value, limit)
        if isinstance(value, dict):
            return {self.text(k, limit): self.value(v, limit) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(item, limit) for item in value]
        return value


def script_json(value: Any) -> str:
    """JSON to put inside `<script type="application/json">`: no `<`, `>` or `&` a parser could act on."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
