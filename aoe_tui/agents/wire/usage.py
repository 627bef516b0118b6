"""What one model exchange cost, as the provider reported it; None where it said nothing."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TokenUsage:
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None  # of the input, read from the provider's cache
    cost_usd: float | None = None  # the provider's own figure (routers report it), never estimated here

    @property
    def known(self) -> bool:
        return self.input_tokens is not None or self.output_tokens is not None


@dataclass(frozen=True)
class SeenToolCall:
    """A tool call the model asked for, as the record of model calls keeps it."""

    id: str
    name: str
    arguments: str


def integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def plus(*values: int | None) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def as_object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def arguments_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments if arguments is not None else {})


def json_event(data: str) -> dict[str, Any] | None:
    """An event's data as a JSON object, or None (`[DONE]`, a keep-alive, garbage)."""
    try:
        document = json.loads(data)
    except ValueError:
        return None
    return document if isinstance(document, dict) else None
