"""What one command or tool call did, and how several effects combine into one kind.

Precedence (strongest first): mutation > lifecycle > validation > discovery.
A call is labelled by the strongest thing it did to the territory: writing
durable state outlasts any restart, restarting changes what runs, a check
exercises the service without changing it, and a probe only reads. So
`curl /health; systemctl restart x` is lifecycle, and `mkdir /opt/b && systemctl
start x` is mutation. A call that does nothing classifiable (only `echo`,
`sleep`) is discovery: it observed the territory and changed nothing.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from aoe_tui.analysis.technologies import technologies_of_file
from aoe_tui.domain.analysis import ActionKind

PRECEDENCE = (ActionKind.MUTATION, ActionKind.LIFECYCLE, ActionKind.VALIDATION, ActionKind.DISCOVERY)

# The agent's own scratch space: writing a test payload to /tmp is not a change to the deployment.
SCRATCH_PREFIXES = ("/tmp/", "/var/tmp/", "/dev/shm/")
# Writable but gone after a reboot (or not files at all), so never a persistent path.
VOLATILE_PREFIXES = SCRATCH_PREFIXES + ("/dev/", "/proc/", "/sys/", "/run/")


@dataclass
class Effect:
    kinds: set[ActionKind] = field(default_factory=set)
    written_paths: set[str] = field(default_factory=set)
    service_units: set[str] = field(default_factory=set)
    technologies: set[str] = field(default_factory=set)

    def merge(self, other: Effect) -> Effect:
        self.kinds |= other.kinds
        self.written_paths |= other.written_paths
        self.service_units |= other.service_units
        self.technologies |= other.technologies
        return self

    @property
    def kind(self) -> ActionKind:
        return next((kind for kind in PRECEDENCE if kind in self.kinds), ActionKind.DISCOVERY)


def of_kind(kind: ActionKind | None, **details: set[str]) -> Effect:
    return Effect(kinds={kind} if kind else set(), **details)


def is_scratch(path: str) -> bool:
    """Writes here are the agent's own temporary files (or /dev/null), not a change to the territory."""
    normalized = _normalize(path) + "/"
    return normalized.startswith(SCRATCH_PREFIXES + ("/dev/",))


def write_effect(paths: list[str] | tuple[str, ...], content: str | None = None) -> Effect:
    """A write to `paths`: mutation unless every target is scratch; durable absolute paths are recorded."""
    real = [path for path in paths if not is_scratch(path)]
    if not real:
        return Effect()
    effect = of_kind(ActionKind.MUTATION, written_paths={p for p in map(persistent_path, real) if p})
    for path in real:
        effect.technologies |= technologies_of_file(path, content)
        effect.service_units |= units_in_path(path)
    return effect


def persistent_path(path: str) -> str | None:
    """The normalized absolute path if it survives a reboot and names one concrete file or directory."""
    if not path.startswith("/") or any(char in path for char in "$*?[{`\n"):
        return None
    normalized = _normalize(path)
    if normalized == "/" or (normalized + "/").startswith(VOLATILE_PREFIXES):
        return None
    return normalized


UNIT_SUFFIXES = (".service", ".socket", ".timer", ".path")


def unit_name(argument: str) -> str | None:
    """`builder-app` -> `builder-app.service` (systemctl's default); None for globs, variables, targets."""
    if not argument or argument.startswith("-") or any(char in argument for char in "$*?[{`/="):
        return None
    if argument.endswith(UNIT_SUFFIXES):
        return argument
    if "." in argument:
        return None
    return argument + ".service"


def units_in_path(path: str) -> set[str]:
    """Unit files and drop-in directories under a systemd directory name their unit."""
    if "/systemd/" not in path:
        return set()
    for part in reversed(_normalize(path).split("/")):
        name = part.removesuffix(".d")
        if name.endswith(UNIT_SUFFIXES) and not any(char in name for char in "$*?[{"):
            return {name}
    return set()


def _normalize(path: str) -> str:
    return posixpath.normpath(path) if path.startswith("/") else path
