"""What an inline Python snippet (`python3 -c '...'`, `python3 - <<PY`) does.

Agents often probe or patch a territory with a few lines of Python instead of
shell. We look for the calls that write files or databases and for HTTP
clients, in the code itself (never in its output), so a script that only reads
`sqlite_master` stays a probe.
"""

from __future__ import annotations

import re

from aoe_tui.analysis.effects import Effect, of_kind, persistent_path
from aoe_tui.analysis.technologies import technologies_of_content
from aoe_tui.domain.analysis import ActionKind

_WRITES = re.compile(
    r"""open\(.*?,\s*(mode\s*=\s*)?['"][rb]?[wax]\+?b?['"]"""
    r"|\.write_(text|bytes)\("
    r"|\bos\.(replace|rename|remove|unlink|mkdir|makedirs|rmdir|chmod|chown|symlink|link|write|truncate|ftruncate)\("
    r"|\bshutil\.(copy\w*|move|rmtree)\("
    r"|\.(mkdir|touch|unlink|rename|replace|symlink_to)\("
    r"""|\.execute\w*\(\s*(f|r)?['"]{1,3}\s*(INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER)\b""",
    re.IGNORECASE,
)
_ABSOLUTE_PATH_LITERAL = re.compile(r"""['"](/[^'"\s]+)['"]""")
_HTTP_CLIENTS = re.compile(
    r"\burlopen\(|\bhttp\.client\b|\brequests\.(get|post|put|delete|head)\(|\bsocket\.create_connection\("
)


def python_snippet_effect(code: str) -> Effect:
    """A writing snippet is a mutation; its absolute path literals are taken as what it wrote,
    since Python builds paths (`os.path.join(STATE, "upstream")`) we cannot evaluate."""
    technologies = {"Python"} | technologies_of_content(code)
    if _WRITES.search(code):
        paths = {path for path in map(persistent_path, _ABSOLUTE_PATH_LITERAL.findall(code)) if path}
        return of_kind(ActionKind.MUTATION, written_paths=paths, technologies=technologies)
    kind = ActionKind.VALIDATION if _HTTP_CLIENTS.search(code) else ActionKind.DISCOVERY
    return of_kind(kind, technologies=technologies)
