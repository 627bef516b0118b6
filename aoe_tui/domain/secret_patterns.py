"""What a secret looks like: the one owner of the names and shapes that are never written out or shared.

Two users: the built-in harness scrubs the values of its own credential
variables from everything it writes, and `aoe export` redacts every secret
from a match before it leaves the machine. A secret is recognised by the name
of the variable that holds it (`*API_KEY*`, `*TOKEN*`, `*SECRET*`,
`*PASSWORD*`), by a literal value the caller knows (the operator's provider
keys), or by its shape: a PEM/OpenSSH private key block, a provider key
prefix (`sk-`, `AKIA`, `ghp_`, ...), a bearer token, or a `NAME=value`
assignment to a credential-named variable.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

SECRET_NAME_MARKERS = ("API_KEY", "TOKEN", "SECRET", "PASSWORD")
REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 4  # a shorter "secret" would redact ordinary words

_NAME = r"[A-Z0-9_]*(?:" + "|".join(SECRET_NAME_MARKERS) + r")[A-Z0-9_]*"  # environment-style names only
SECRET_SHAPES: dict[str, re.Pattern[str]] = {
    "private key": re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|\Z)", re.DOTALL
    ),
    "provider key": re.compile(
        r"\b(?:sk-[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|xox[abprs]-[A-Za-z0-9-]{10,}"
        r"|AIza[0-9A-Za-z_-]{35})"
    ),
    "bearer token": re.compile(r"(?<=Bearer )[A-Za-z0-9._~+/=-]{8,}"),
    "credential assignment": re.compile(
        r"(?<![A-Za-z0-9_])(?:"
        + _NAME
        + r")[\"']?\s*[=:]\s*[\"']?(?!\[redacted\])([^\s\"',;}]{"
        + str(MIN_SECRET_LENGTH)
        + r",})",
    ),
}


def is_secret_name(name: str) -> bool:
    """Whether a variable called `name` holds a credential (by the markers above)."""
    return any(marker in name.upper() for marker in SECRET_NAME_MARKERS)


def environment_secrets(env: Mapping[str, str]) -> list[str]:
    """Values of variables that look like credentials; scrubbed even if the provider came from a file."""
    return [value for name, value in env.items() if is_secret_name(name)]


class Redactor:
    """Replaces every known secret value and every secret shape in text by `[redacted]`, counting what it did.

    `counts` says how many of each kind were replaced (a value the caller named
    is counted as "known secret"), so a caller can tell the user what was left
    out without ever repeating it. `shapes=False` replaces only the known values
    (the harness, whose own output is full of legitimate key-shaped strings it
    must not garble, knows exactly which values are secret)."""

    def __init__(self, known: Iterable[str | None] = (), shapes: bool = True) -> None:
        kept = {value for value in known if value and len(value) >= MIN_SECRET_LENGTH}
        self._known = sorted(kept, key=len, reverse=True)
        self._shapes = SECRET_SHAPES if shapes else {}
        self.counts: Counter[str] = Counter()

    def text(self, text: str) -> str:
        for value in self._known:
            if value in text:
                self.counts["known secret"] += text.count(value)
                text = text.replace(value, REDACTED)
        for kind, pattern in self._shapes.items():
            text, replaced = pattern.subn(_redact_match, text)
            if replaced:
                self.counts[kind] += replaced
        return text

    def value(self, value: Any) -> Any:
        """`value` (any JSON-like value) with every string in it, keys included, redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(key) if isinstance(key, str) else key: self.value(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.value(item) for item in value]
        return value


def _redact_match(match: re.Match[str]) -> str:
    """The match with its secret part (group 1 when the pattern has one, else all of it) redacted."""
    if match.re.groups:
        start, end = match.span(1)
        whole_start = match.start()
        text = match.group(0)
        return text[: start - whole_start] + REDACTED + text[end - whole_start :]
    return REDACTED
