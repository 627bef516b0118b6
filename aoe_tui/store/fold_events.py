"""What the reader of a long log decodes a new body into for the fold: a msgspec mirror of its event class.

A log whose bodies never repeat validates every line, and there pydantic (2 us a line, and the Python around
the call) was most of the load. msgspec decodes a body into a typed struct in under 0.5 us (a chunk's new
bodies in one call). The mirrors are built from the event classes themselves (each field's type, alias and
default), so they cannot drift from them.

A mirror only ever stands in for an event pydantic would accept with the same values: msgspec is the stricter
of the two (no "5" or 5.0 for an int, no 1 for a bool, no NaN, no duplicate `kind`, no integer past 64 bits
where the field is an int) and, like pydantic, takes the last of a duplicate key and an alias before the
field's own name. A line it refuses is the event classes' to judge (`BodyDecoder`): pydantic's lax coercions,
an unknown kind, or the strict reader's one-line error. The fold's handlers read only attributes, so a mirror
folds as its event does; anything that shows an event (or stamps a copy of it) decodes the line with pydantic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Union

import msgspec

from aoe_tui.domain.events import EVENT_CLASSES, EventBase
from aoe_tui.domain.reducer import HANDLERS
from aoe_tui.domain.world import World


_STAMPS = ("schema_version", "sequence", "elapsed_ms")
# What the fold of a long log folds for a body (an event, or its mirror) and how it folds it.
FoldStep = tuple[Any, Callable[[World, Any], None]]


def _mirror(kind: str, event_class: type[EventBase]) -> type[msgspec.Struct]:
    """A struct of a recorder's line's body (`kind` and after): `event_class`'s fields but the stamps, which the
    fold takes from the line's envelope. A body that names a stamp itself (a duplicate key, however spelled)
    would win over the envelope in pydantic: its stamps are typed so that no JSON value decodes into them, and
    msgspec refuses it."""
    fields: list[tuple[str, Any, Any]] = [(name, msgspec.UnsetType, msgspec.UNSET) for name in _STAMPS]
    for name, info in event_class.model_fields.items():
        if name == "kind" or name in _STAMPS:
            continue  # the tag; the envelope's
        default = msgspec.NODEFAULT if info.is_required() else info.default
        fields.append((name, info.annotation, msgspec.field(default=default, name=info.alias)))
    # kw_only: required fields may follow defaulted ones, as in the event classes; gc=False: a mirror holds no
    # cycle (its values come from JSON) and a long load makes millions of them.
    return msgspec.defstruct(
        event_class.__name__, fields, tag_field="kind", tag=kind, kw_only=True, frozen=True, gc=False
    )


_MIRRORS = {kind: _mirror(kind, event_class) for kind, event_class in EVENT_CLASSES.items()}
_MIRROR: Any = Union[tuple(_MIRRORS.values())]  # noqa: UP007  (built at run time)
_DECODER: msgspec.json.Decoder[Any] = msgspec.json.Decoder(_MIRROR)
_LIST_DECODER: msgspec.json.Decoder[list[Any]] = msgspec.json.Decoder(list[_MIRROR])


def _ignored(world: World, event: object) -> None:
    """The fold of an event the world does not change with."""


# The fold of each event class and of its mirror: the class's handler.
_FOLDS: dict[type, Callable[[World, Any], None]] = {
    **HANDLERS,
    **{mirror: HANDLERS.get(EVENT_CLASSES[kind], _ignored) for kind, mirror in _MIRRORS.items()},
}


def fold_of(event: object) -> Callable[[World, Any], None]:
    """How the fold folds `event` (an event or a mirror): once per body, so the fold calls it directly."""
    return _FOLDS.get(type(event), _ignored)


def decode_all_for_fold(bodies: bytes) -> list[FoldStep | None] | None:
    """(mirror, its fold) of each of recorder's lines' bodies given as one JSON array of objects (one call for a
    chunk's new bodies: a third cheaper than a call a body), or None when msgspec refuses any of them."""
    try:
        mirrors = _LIST_DECODER.decode(bodies)
    except msgspec.MsgspecError:
        return None
    steps: list[FoldStep | None] = list(zip(mirrors, map(_FOLDS.__getitem__, map(type, mirrors))))
    return steps


def decode_for_fold(body: bytes) -> Any:
    """The mirror of a recorder's line's body given as a JSON object, or None when msgspec refuses it (the event
    classes then judge the line)."""
    try:
        return _DECODER.decode(body)
    except msgspec.MsgspecError:
        return None
