"""One test per manifest rule; every problem names its path."""

import copy
import tomllib

import pytest

from aoe_tui.domain.manifest_rules import validate_manifest
from tests.fixture_paths import PROJECT

BASE = tomllib.loads((PROJECT / "arenas/first-build/arena.toml").read_text())


def problems_of(mutate):
    data = copy.deepcopy(BASE)
    mutate(data)
    manifest, problems = validate_manifest(data)
    return [str(p) for p in problems]


def test_bundled_arena_has_no_problems():
    manifest, problems = validate_manifest(BASE)
    assert problems == [] and manifest.arena.id == "first-build"


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda d: d["arena"].update(colour="red"), "arena.colour: unknown key"),
        (lambda d: d["build"]["milestones"][1].update(timeout=3), "build.milestones[1].timeout: unknown key"),
        (lambda d: d["rules"].pop("duration_seconds"), "rules.duration_seconds: required key is missing"),
        (
            lambda d: d["build"]["milestones"][2].update(depends_on=["x"]),
            "build.milestones[2].depends_on: references unknown milestone x",
        ),
        (
            lambda d: d["build"]["milestones"][0].update(depends_on=["host-reboot"]),
            "build.milestones[0].depends_on: dependency cycle through service-up",
        ),
        (
            lambda d: d["build"].update(completion_milestone="nope"),
            "build.completion_milestone: references unknown milestone nope",
        ),
        (
            lambda d: d["build"]["milestones"][3].update(required=False),
            "build.completion_milestone: milestone host-reboot is not required",
        ),
        (
            lambda d: d["territories"][0].update({"class": "wizard"}),
            "territories[0].class: references unknown class wizard",
        ),
        (
            lambda d: d["agents"][1].update(territory="builder-one"),
            "territories[1]: territory builder-two has 0 agents, needs exactly one",
        ),
        (
            lambda d: d["agents"][2].update(territory="nowhere"),
            "agents[2].territory: references unknown territory nowhere",
        ),
        (
            lambda d: d["territories"][0].update(id="Builder_One"),
            "territories[0].id: 'Builder_One' must be lowercase ASCII letters, digits and hyphens",
        ),
        (lambda d: d["agents"][1].update(id="oracle"), "agents[1].id: duplicate id 'oracle'"),
        (lambda d: d["network"].update(allow_public_internet=True), "network.allow_public_internet: must be false"),
        (lambda d: d["network"].update(cidr="8.8.8.0/24"), "network.cidr: '8.8.8.0/24' must be a private IPv4 /24"),
        (lambda d: d["rules"].update(minimum_territories=1), "rules.minimum_territories: must be at least 2"),
        (
            lambda d: d["rules"].update(minimum_territories=4),
            "territories: 3 territories, fewer than minimum_territories 4",
        ),
        (
            lambda d: d["build"]["milestones"][0].update(timeout_seconds=0),
            "build.milestones[0].timeout_seconds: must be between 1 and rules.duration_seconds (600)",
        ),
        (lambda d: d["build"]["milestones"][0].update(points=0), "build.milestones[0].points: must be positive"),
        (
            lambda d: d["visualization"]["nodes"][1].update(milestone="ghost"),
            "visualization.nodes[1].milestone: references unknown milestone ghost",
        ),
        (lambda d: d["visualization"]["nodes"][1].update(x=140), "visualization.nodes[1].x: must be between 0 and 100"),
        (
            lambda d: d["visualization"]["links"][0].update(to="moon"),
            "visualization.links[0].to: references unknown node moon",
        ),
        (
            lambda d: d["build"]["milestones"][0].update(operation="dance"),
            "build.milestones[0].operation: Input should be",
        ),
    ],
)
def test_rule(mutate, expected):
    problems = problems_of(mutate)
    assert any(p.startswith(expected) for p in problems), problems


def test_all_problems_are_reported_together():
    def many(d):
        d["surprise"] = {"gift": True}
        d["build"]["milestones"][2]["depends_on"] = ["ghost"]
        d["territories"][0]["id"] = "Builder One"

    problems = problems_of(many)
    assert "surprise: unknown key" in problems
    assert "build.milestones[2].depends_on: references unknown milestone ghost" in problems
    assert "territories[0].id: 'Builder One' must be lowercase ASCII letters, digits and hyphens" in problems
    # the renamed territory leaves its agent pointing nowhere and itself without an agent: both said
    assert "agents[0].territory: references unknown territory builder-one" in problems


def test_missing_tables_and_a_bad_id_are_reported_together():
    manifest, problems = validate_manifest({"arena": {"id": "Bad Id", "display_name": "Bad"}})
    assert manifest is None
    assert [str(p) for p in problems] == [
        "network: required key is missing",
        "rules: required key is missing",
        "classes: required key is missing",
        "territories: required key is missing",
        "agents: required key is missing",
        "arena.id: 'Bad Id' must be lowercase ASCII letters, digits and hyphens",
        "build: a build_race arena needs a [build] table",
    ]


def test_bad_values_inside_incomplete_tables_are_reported_with_the_missing_keys():
    manifest, problems = validate_manifest(
        {
            "arena": {"id": "Bad Id"},
            "rules": {"duration_seconds": -3},
            "territories": [{"id": "T one"}, {"class": "small"}, {"id": "t-two", "class": "small"}],
        }
    )
    said = [str(p) for p in problems]
    assert manifest is None
    for expected in (
        "arena.display_name: required key is missing",
        "network: required key is missing",
        "territories[0].class: required key is missing",
        "territories[1].id: required key is missing",
        "arena.id: 'Bad Id' must be lowercase ASCII letters, digits and hyphens",
        "territories[0].id: 'T one' must be lowercase ASCII letters, digits and hyphens",
        "rules.duration_seconds: must be positive",
    ):
        assert expected in said, said
    assert len(said) == len(set(said))  # each problem once


def test_a_malformed_table_skips_only_the_rules_that_need_it():
    def broken(d):
        d["rules"]["duration_seconds"] = "long"
        d["network"]["allow_public_internet"] = True
        d["agents"][2]["territory"] = "nowhere"
        d["build"]["milestones"][0]["timeout_seconds"] = 0

    problems = problems_of(broken)
    assert problems[0].startswith("rules.duration_seconds: Input should be a valid integer")
    assert "network.allow_public_internet: must be false" in problems
    assert "agents[2].territory: references unknown territory nowhere" in problems
    assert not any("timeout_seconds" in p for p in problems)  # needs rules.duration_seconds: skipped quietly


def test_saved_arena_json_shape_is_accepted():
    import json

    from tests.fixture_paths import SINGLE_FILES

    arena = json.loads(SINGLE_FILES[0].read_text())["arena"]
    manifest, problems = validate_manifest(arena)
    assert manifest is not None and manifest.visualization.nodes


@pytest.mark.parametrize(
    "name, expected",
    [
        ("1ABC", "agents[0].env: env name '1ABC' is not a valid environment variable name"),
        ("MY-KEY", "agents[0].env: env name 'MY-KEY' is not a valid environment variable name"),
        ("AOE_SECRET", "agents[0].env: env name 'AOE_SECRET' is reserved for the referee"),
        ("SSH_AUTH_SOCK", "agents[0].env: env name 'SSH_AUTH_SOCK' is reserved for the referee"),
    ],
)
def test_agent_env_names_are_checked(name, expected):
    assert expected in problems_of(lambda d: d["agents"][0].update(env=["OK_NAME", name]))


def test_agent_env_round_trips_through_arena_json():
    data = copy.deepcopy(BASE)
    data["agents"][0]["env"] = ["OPENROUTER_API_KEY", "_private"]
    manifest, problems = validate_manifest(data)
    assert problems == [] and manifest.agents[0].env == ["OPENROUTER_API_KEY", "_private"]
    again, problems = validate_manifest(manifest.to_json())
    assert problems == [] and again.agents[0].env == ["OPENROUTER_API_KEY", "_private"] and again.agents[1].env == []
