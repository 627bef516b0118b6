"""Fleet files: `[[agents]]` applied to an arena, checked by the manifest's own rules, each problem with its file."""

import pytest

from aoe_tui.domain.errors import AoeError
from aoe_tui.engine.provenance import provenance
from aoe_tui.store.manifest_file import checked_manifest, load_manifest
from tests.fixture_paths import PROJECT

ARENA = PROJECT / "arenas" / "first-build" / "arena.toml"
REAL_MODELS = PROJECT / "arenas" / "first-build" / "fleets" / "real-models.toml"


def _agent(agent_id: str, territory: str, **extra: str) -> str:
    fields = {"id": agent_id, "territory": territory, "adapter": "openai", "model": "some/model", **extra}
    return "[[agents]]\n" + "".join(f'{key} = "{value}"\n' for key, value in fields.items()) + "\n"


def test_the_bundled_fleet_replaces_the_agents_and_keeps_the_contest() -> None:
    own, raced = load_manifest(ARENA), load_manifest(ARENA, REAL_MODELS)
    assert [a.adapter for a in own.agents] != [a.adapter for a in raced.agents]
    assert {a.adapter for a in raced.agents} == {"openai"}
    assert [a.territory for a in raced.agents] == [t.id for t in raced.territories]
    assert raced.model_copy(update={"agents": own.agents}) == own
    assert provenance(raced, ARENA)["compatibility_key"] == provenance(own, ARENA)["compatibility_key"]


def test_each_problem_names_the_fleet_and_its_key_path(tmp_path) -> None:
    fleet = tmp_path / "fleet.toml"
    fleet.write_text(_agent("luna", "builder-one") + _agent("Luna", "builder-nine") + _agent("luna", "builder-three"))
    manifest, problems = checked_manifest(ARENA, fleet)
    assert manifest is None
    assert {p.file for p in problems} == {fleet}
    said = [str(p.problem) for p in problems]
    assert "agents[1].id: 'Luna' must be lowercase ASCII letters, digits and hyphens" in said
    assert "agents[2].id: duplicate id 'luna'" in said
    assert "agents[1].territory: references unknown territory builder-nine" in said
    assert "territories[1]: territory builder-two has 0 agents, needs exactly one" in said


def test_shape_problems_of_a_fleet_name_their_keys(tmp_path) -> None:
    fleet = tmp_path / "fleet.toml"
    fleet.write_text(
        "schema_version = 1\n"
        + _agent("luna", "builder-one", colour="red")
        + '[[agents]]\nid = "bare"\nterritory = "builder-three"\n'
    )
    manifest, problems = checked_manifest(ARENA, fleet)
    assert manifest is None
    assert {p.file for p in problems} == {fleet}
    assert [str(p.problem) for p in problems] == [
        "schema_version: unknown key (a fleet holds only [[agents]] tables)",
        "agents[0].colour: unknown key",
        "agents[1].adapter: required key is missing",
        "agents[1].model: required key is missing",
        # judged on what did parse, in the same pass: the fleet seats nobody at builder-two
        "territories[1]: territory builder-two has 0 agents, needs exactly one",
    ]


def test_a_problem_of_the_arena_itself_stays_the_arenas(tmp_path) -> None:
    arena = tmp_path / "arena.toml"
    arena.write_text(ARENA.read_text().replace("allow_public_internet = false", "allow_public_internet = true"))
    fleet = tmp_path / "fleet.toml"
    fleet.write_text(
        _agent("a", "builder-one")
        + _agent("b", "builder-two")
        + _agent("c", "builder-three")
        + _agent("d", "builder-four")
    )
    _, problems = checked_manifest(arena, fleet)
    assert [(p.file, p.problem.path) for p in problems] == [
        (arena, "network.allow_public_internet"),
        (fleet, "agents[3].territory"),
    ]
    with pytest.raises(AoeError) as caught:
        load_manifest(arena, fleet)
    assert str(caught.value) == (
        f"{arena}: network.allow_public_internet: must be false "
        f"(and 1 more; run `aoe validate {arena} --agents {fleet}`)"
    )


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "agents: required key is missing"),
        ("agents = 3\n", "agents: Input should be a valid list"),
        ("[agents\n", "Expected ']'"),
    ],
)
def test_a_fleet_without_agents_or_unreadable_is_one_clear_line(tmp_path, text, message) -> None:
    fleet = tmp_path / "fleet.toml"
    fleet.write_text(text)
    with pytest.raises(AoeError) as caught:
        load_manifest(ARENA, fleet)
    assert str(caught.value).startswith(f"{fleet}: ") and message in str(caught.value)


def test_a_missing_fleet_is_named() -> None:
    with pytest.raises(AoeError, match=r"nowhere\.toml: no such fleet"):
        load_manifest(ARENA, PROJECT / "nowhere.toml")
