"""The only host environment an adapter or a verifier starts with.

The operator's shell holds provider keys, an SSH agent socket and whatever
else a workstation collects; none of it is the business of code the referee
runs. Children get a short allow-list of harmless basics, plus exactly the
variables a manifest's agent names in `env`, plus the protocol's own values.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

BASIC_NAMES = ("PATH", "LANG", "LANGUAGE", "TERM", "TZ")


def basic_env(host: Mapping[str, str] | None = None) -> dict[str, str]:
    """PATH, the locale (LANG, LC_*) and the terminal type, when the host (default: ours) sets them."""
    host = os.environ if host is None else host
    # Names first: os.environ decodes a value only when it is asked for.
    return {name: host[name] for name in host if name in BASIC_NAMES or name.startswith("LC_")}


def listed_env(names: Iterable[str], host: Mapping[str, str] | None = None) -> dict[str, str]:
    """The named host variables that are set (a manifest's `env`); unset names are left out."""
    host = os.environ if host is None else host
    return {name: host[name] for name in names if name in host}
