"""Manifest validation that reports every problem at once, each with its path.

A person fixing `arena.toml` wants the whole list in one go
(`build.milestones[2].depends_on: references unknown milestone x`), not one
error per run, so shape errors from pydantic and the manifest's cross-reference
rules are collected into one list of `Problem`s. When the shape is wrong the
rules still run, on every key that parsed by itself (missing sections and a bad
id beside them come out in one pass); a rule that needs a key which is missing
or malformed is skipped (that key already has its own problem).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, TypeAdapter, ValidationError

from aoe_tui.domain.manifest import Manifest, Milestone

ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]*$")


@dataclass(frozen=True)
class Problem:
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


def format_location(location: tuple[Any, ...]) -> str:
    text = ""
    for part in location:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def shape_problems(error: ValidationError) -> list[Problem]:
    """A pydantic error as one Problem per item, each at its key path (also used for an arena's plan files)."""
    problems = []
    for item in error.errors():
        location = tuple(p for p in item["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        message = "unknown key" if item["type"] == "extra_forbidden" else item["msg"].removeprefix("Value error, ")
        if item["type"] == "missing":
            message = "required key is missing"
        problems.append(Problem(format_location(location), message))
    return problems


def validate_manifest(data: dict[str, Any]) -> tuple[Manifest | None, list[Problem]]:
    """Parse and check a manifest; the model is None when its shape is wrong."""
    try:
        manifest = Manifest.model_validate(data)
    except ValidationError as error:
        return None, shape_problems(error) + _run_checks(_Partial(Manifest, data))
    return manifest, _run_checks(manifest)


class _Unavailable(Exception):
    """A rule asked for a table or key that is missing or malformed (its own problem is already listed)."""


_MALFORMED = object()


class _Partial:
    """A table that did not validate as a whole, read like its model so the rules still judge what is there.

    A key that parses on its own keeps its value; a nested table (or list of
    tables) that does not is itself partial, so a bad `arena.id` next to a
    missing `arena.display_name` is still reported; a key left out gets the
    model's default. Reading a required key that is missing or malformed raises
    `_Unavailable`, which skips the rule that needed it.
    """

    def __init__(self, model: type[BaseModel], data: dict[str, Any]) -> None:
        self._parsed: dict[str, Any] = {}
        for name, field in model.model_fields.items():
            key = field.alias if field.alias is not None and field.alias in data else name
            if key not in data:
                if not field.is_required():
                    self._parsed[name] = field.get_default(call_default_factory=True)
                continue
            value = _lenient(field.annotation, data[key])
            if value is not _MALFORMED:
                self._parsed[name] = value

    def __getattr__(self, name: str) -> Any:
        try:
            return self._parsed[name]
        except KeyError:
            raise _Unavailable(name) from None


def _lenient(annotation: Any, value: Any) -> Any:
    """`value` validated as `annotation`; else partial when it is a table or a list of tables; else `_MALFORMED`."""
    try:
        return TypeAdapter(annotation or Any).validate_python(value)
    except ValidationError:
        pass
    shape = _without_none(annotation)
    if isinstance(shape, type) and issubclass(shape, BaseModel) and isinstance(value, dict):
        return _Partial(shape, value)
    if get_origin(shape) is list and isinstance(value, list):
        items = [_lenient(get_args(shape)[0], item) for item in value]
        return _MALFORMED if _MALFORMED in items else items
    return _MALFORMED


def _without_none(annotation: Any) -> Any:
    """`X` for an optional `X | None`; any other annotation as it is."""
    if get_origin(annotation) in (Union, UnionType):
        others = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(others) == 1:
            return others[0]
    return annotation


Add = Callable[[str, str], None]


def _collector(found: list[Problem]) -> Add:
    """An `add` that keeps a check's problems in `found`."""
    return lambda path, message: found.append(Problem(path, message))


def _run_checks(manifest: Manifest | _Partial) -> list[Problem]:
    problems: list[Problem] = []
    for check in CHECKS:
        found: list[Problem] = []
        try:
            check(manifest, _collector(found))
        except _Unavailable:
            continue
        problems += found
    return problems


def _id_checks(group: str, items: Callable[[Manifest], list]) -> Callable[[Manifest, Add], None]:
    def check(manifest: Manifest, add: Add) -> None:
        seen: set[str] = set()
        for index, item in enumerate(items(manifest)):
            path = group if group == "arena" else f"{group}[{index}]"
            try:
                item_id = item.id
            except _Unavailable:
                continue  # this item's id is missing or malformed: the others are still judged
            if not ID_PATTERN.match(item_id):
                add(f"{path}.id", f"'{item_id}' must be lowercase ASCII letters, digits and hyphens")
            if item_id in seen:
                add(f"{path}.id", f"duplicate id '{item_id}'")
            seen.add(item_id)

    return check


def _check_network(manifest: Manifest, add: Add) -> None:
    try:
        network = ipaddress.ip_network(manifest.network.cidr, strict=True)
    except ValueError:
        add("network.cidr", f"'{manifest.network.cidr}' is not a network address")
    else:
        if not network.is_private or network.prefixlen != 24 or network.version != 4:
            add("network.cidr", f"'{manifest.network.cidr}' must be a private IPv4 /24")
    if manifest.network.allow_public_internet:
        add("network.allow_public_internet", "must be false")


def _check_rules_table(manifest: Manifest, add: Add) -> None:
    rules = manifest.rules
    if rules.duration_seconds <= 0:
        add("rules.duration_seconds", "must be positive")
    if rules.tick_ms <= 0:
        add("rules.tick_ms", "must be positive")
    if rules.minimum_territories < 2:
        add("rules.minimum_territories", "must be at least 2")
    if rules.post_match_drain_seconds < 0:
        add("rules.post_match_drain_seconds", "must not be negative")


def _check_territory_count(manifest: Manifest, add: Add) -> None:
    minimum = manifest.rules.minimum_territories
    if minimum >= 2 and len(manifest.territories) < minimum:
        add("territories", f"{len(manifest.territories)} territories, fewer than minimum_territories {minimum}")


def _check_build_present(manifest: Manifest, add: Add) -> None:
    if manifest.build is None and manifest.arena.mode == "build_race":
        add("build", "a build_race arena needs a [build] table")


def _check_milestones(manifest: Manifest, add: Add) -> None:
    build = manifest.build
    if build is None:
        return
    ids = {m.id for m in build.milestones}
    for index, milestone in enumerate(build.milestones):
        path = f"build.milestones[{index}]"
        for dep in milestone.depends_on:
            if dep not in ids:
                add(f"{path}.depends_on", f"references unknown milestone {dep}")
        if milestone.points <= 0:
            add(f"{path}.points", "must be positive")
        if not milestone.verifier.strip():
            add(f"{path}.verifier", "must name a verifier script")
    for cycle_member in _cycle_members(build.milestones):
        index = next(i for i, m in enumerate(build.milestones) if m.id == cycle_member)
        add(f"build.milestones[{index}].depends_on", f"dependency cycle through {cycle_member}")
    completion = build.completion_milestone
    if completion not in ids:
        add("build.completion_milestone", f"references unknown milestone {completion}")
    elif not next(m for m in build.milestones if m.id == completion).required:
        add("build.completion_milestone", f"milestone {completion} is not required")


def _check_milestone_timeouts(manifest: Manifest, add: Add) -> None:
    duration = manifest.rules.duration_seconds
    for index, milestone in enumerate(manifest.build.milestones if manifest.build else []):
        if not 1 <= milestone.timeout_seconds <= duration:
            add(
                f"build.milestones[{index}].timeout_seconds",
                f"must be between 1 and rules.duration_seconds ({duration})",
            )


def _cycle_members(milestones: list[Milestone]) -> list[str]:
    """Milestones that sit on a dependency cycle (reported once each)."""
    graph = {m.id: [d for d in m.depends_on] for m in milestones}
    on_cycle: list[str] = []
    for start in graph:
        stack, seen = list(graph[start]), set()
        while stack:
            node = stack.pop()
            if node == start:
                on_cycle.append(start)
                break
            if node in seen or node not in graph:
                continue
            seen.add(node)
            stack.extend(graph[node])
    return on_cycle


def _check_territory_classes(manifest: Manifest, add: Add) -> None:
    classes = {c.id for c in manifest.classes}
    for index, territory in enumerate(manifest.territories):
        if territory.class_ not in classes:
            add(f"territories[{index}].class", f"references unknown class {territory.class_}")


def _check_agents(manifest: Manifest, add: Add) -> None:
    territories = {t.id for t in manifest.territories}
    for index, territory in enumerate(manifest.territories):
        owners = [a for a in manifest.agents if a.territory == territory.id]
        if len(owners) != 1:
            add(f"territories[{index}]", f"territory {territory.id} has {len(owners)} agents, needs exactly one")
    for index, agent in enumerate(manifest.agents):
        if agent.territory not in territories:
            add(f"agents[{index}].territory", f"references unknown territory {agent.territory}")


def _check_visual_layout(manifest: Manifest, add: Add) -> None:
    visual = manifest.visualization
    if visual is None:
        return
    node_ids = {n.id for n in visual.nodes}
    for index, node in enumerate(visual.nodes):
        for axis in ("x", "y"):
            if not 0 <= getattr(node, axis) <= 100:
                add(f"visualization.nodes[{index}].{axis}", "must be between 0 and 100")
    for index, link in enumerate(visual.links):
        for end, value in (("from", link.from_), ("to", link.to)):
            if value not in node_ids:
                add(f"visualization.links[{index}].{end}", f"references unknown node {value}")


def _check_visual_milestones(manifest: Manifest, add: Add) -> None:
    visual = manifest.visualization
    milestone_ids = {m.id for m in manifest.build.milestones} if manifest.build else set()
    for index, node in enumerate(visual.nodes if visual else []):
        if node.milestone is not None and node.milestone not in milestone_ids:
            add(f"visualization.nodes[{index}].milestone", f"references unknown milestone {node.milestone}")


def _check_monitors(manifest: Manifest, add: Add) -> None:
    """A monitor starts at a milestone its judge depends on (transitively), and its wait fits the judge's timeout."""
    milestones = {m.id: m for m in manifest.build.milestones} if manifest.build else {}
    for index, monitor in enumerate(manifest.monitors or []):
        path = f"monitors[{index}]"
        for key in ("start_after", "judged_by"):
            if getattr(monitor, key) not in milestones:
                add(f"{path}.{key}", f"references unknown milestone {getattr(monitor, key)}")
        judge = milestones.get(monitor.judged_by)
        if judge is None or monitor.start_after not in milestones:
            continue
        if monitor.start_after not in _ancestors(milestones, judge.id):
            add(f"{path}.judged_by", f"{judge.id} must depend on {monitor.start_after}, which starts the monitor")
        if monitor.wait_for_flag_seconds + monitor.settle_ms / 1000 >= judge.timeout_seconds:
            add(
                f"{path}.wait_for_flag_seconds",
                f"the wait and settle must end within {judge.id}'s timeout ({judge.timeout_seconds} s)",
            )


def _ancestors(milestones: dict, milestone_id: str) -> set[str]:
    found: set[str] = set()
    stack = list(milestones[milestone_id].depends_on)
    while stack:
        node = stack.pop()
        if node in found or node not in milestones:
            continue
        found.add(node)
        stack.extend(milestones[node].depends_on)
    return found


# A check reads a whole Manifest or, when it did not validate, what of it did (`_Partial`).
CHECKS: tuple[Callable[[Any, Add], None], ...] = (
    _id_checks("arena", lambda m: [m.arena]),
    _id_checks("classes", lambda m: m.classes),
    _id_checks("territories", lambda m: m.territories),
    _id_checks("agents", lambda m: m.agents),
    _id_checks("build.milestones", lambda m: m.build.milestones if m.build else []),
    _id_checks("visualization.nodes", lambda m: m.visualization.nodes if m.visualization else []),
    _id_checks("monitors", lambda m: m.monitors or []),
    _check_network,
    _check_rules_table,
    _check_territory_count,
    _check_build_present,
    _check_milestones,
    _check_milestone_timeouts,
    _check_territory_classes,
    _check_agents,
    _check_visual_layout,
    _check_visual_milestones,
    _check_monitors,
)
"""Every manifest rule, each naming the tables it reads; one that meets an unavailable table is skipped."""
