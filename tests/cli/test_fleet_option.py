"""`--agents FLEET.toml` on `aoe run` and `aoe validate`: the fleet's agents play, its problems name it."""

import json

from aoe_tui.cli.main import build_parser, main
from aoe_tui.cli.run_commands import real_runner
from tests.cli.test_match_commands import run_aoe
from tests.fixture_paths import PROJECT

ARENA = PROJECT / "arenas" / "first-build" / "arena.toml"
REAL_MODELS = PROJECT / "arenas" / "first-build" / "fleets" / "real-models.toml"


def no_provider(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("AOE_PROVIDERS_FILE", str(tmp_path / "none.toml"))
    for name in ("AOE_OPENAI_BASE_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "AOE_OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_run_plays_the_fleets_agents_on_the_arena(tmp_path, monkeypatch) -> None:
    no_provider(monkeypatch, tmp_path)
    monkeypatch.setenv("AOE_OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    args = build_parser().parse_args(["run", str(ARENA), "--agents", str(REAL_MODELS), "--output", str(tmp_path / "m")])
    runner = real_runner(args, args.manifest)
    assert [a.id for a in runner.manifest.agents] == ["luna", "glm", "deepseek"]
    assert runner.manifest_path == ARENA  # verifiers and the brief still come from the arena
    args = build_parser().parse_args(["run", str(ARENA), "--output", str(tmp_path / "n")])
    assert [a.adapter for a in real_runner(args, args.manifest).manifest.agents] == [
        "oracle",
        "amnesiac",
        "tmpfs-writer",
    ]


def test_validate_with_a_fleet(tmp_path, capsys, monkeypatch) -> None:
    no_provider(monkeypatch, tmp_path)
    monkeypatch.setenv("AOE_OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")  # a local server serves every model
    assert main(["validate", str(ARENA), "--agents", str(REAL_MODELS)]) == 0
    assert capsys.readouterr().out.strip().endswith(f"milestones, agents from {REAL_MODELS})")
    fleet = tmp_path / "fleet.toml"
    fleet.write_text(REAL_MODELS.read_text().replace('"builder-two"', '"builder-2"'))
    assert main(["validate", str(ARENA), "--agents", str(fleet), "--json"]) == 1
    problems = json.loads(capsys.readouterr().out)["problems"]
    assert [(p["file"], p["path"]) for p in problems] == [
        (str(fleet), "territories[1]"),
        (str(fleet), "agents[1].territory"),
    ]


def test_a_bad_fleet_stops_aoe_run_with_one_line_before_any_guest_boots(tmp_path) -> None:
    fleet = tmp_path / "fleet.toml"
    fleet.write_text('[[agents]]\nid = "solo"\nterritory = "builder-one"\nadapter = "openai"\n')
    result = run_aoe("run", ARENA, "--agents", fleet, "--headless", "--output", tmp_path / "match")
    assert result.returncode == 2
    # the first problem, then how many more (the fleet also leaves two territories without an agent)
    assert result.stderr.strip().startswith(f"aoe: {fleet}: agents[0].model: required key is missing (and 2 more;")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "match").exists()


def test_validate_names_an_agent_whose_model_has_no_provider(tmp_path, capsys, monkeypatch) -> None:
    """No provider for a harness's model is a problem of the fleet, reported before anything runs."""
    no_provider(monkeypatch, tmp_path)
    providers = tmp_path / "providers.toml"
    providers.write_text('[providers.claude]\nanthropic_base_url = "http://127.0.0.1:9/"\nmodels = ["z-ai/*"]\n')
    monkeypatch.setenv("AOE_PROVIDERS_FILE", str(providers))
    assert main(["validate", str(ARENA), "--agents", str(REAL_MODELS)]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[1] == (
        f"{REAL_MODELS}: agents: agent glm: model z-ai/glm-5.2: provider claude has no openai_base_url "
        "for protocol openai-chat (adapter openai)"
    )
    assert lines[0].startswith(f"{REAL_MODELS}: agents: agent luna: model openai/gpt-5.6-luna: no provider")


def test_run_refuses_a_model_without_a_provider_in_one_line_before_any_guest_boots(tmp_path, monkeypatch) -> None:
    no_provider(monkeypatch, tmp_path)
    result = run_aoe("run", ARENA, "--agents", REAL_MODELS, "--headless", "--output", tmp_path / "match")
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        "aoe: agent luna: model openai/gpt-5.6-luna: no provider configured for model openai/gpt-5.6-luna: set "
        f"AOE_OPENAI_BASE_URL (and AOE_OPENAI_API_KEY) or add a provider to {tmp_path / 'none.toml'}"
    ]
    assert not (tmp_path / "match").exists()


EXHIBITION = PROJECT / "arenas" / "first-build" / "fleets" / "harness-exhibition.toml"


def exhibition_provider(tmp_path, monkeypatch, families: tuple[str, ...]) -> None:
    no_provider(monkeypatch, tmp_path)
    urls = "".join(f'{family}_base_url = "http://127.0.0.1:11434/{family}"\n' for family in families)
    (tmp_path / "providers.toml").write_text(f'[providers.local]\n{urls}models = ["z-ai/glm-5.2"]\n')
    monkeypatch.setenv("AOE_PROVIDERS_FILE", str(tmp_path / "providers.toml"))


def test_the_harness_exhibition_validates_when_its_provider_speaks_each_harness_protocol(
    tmp_path, capsys, monkeypatch
) -> None:
    exhibition_provider(tmp_path, monkeypatch, ("openai", "anthropic"))
    assert main(["validate", str(ARENA), "--agents", str(EXHIBITION)]) == 0
    adapters = {a.adapter for a in real_runner(*_run_args(tmp_path)).manifest.agents}
    assert adapters == {"claude-code", "codex", "opencode"}


def _run_args(tmp_path):
    args = build_parser().parse_args(["run", str(ARENA), "--agents", str(EXHIBITION), "--output", str(tmp_path / "m")])
    return args, args.manifest


def test_validate_names_a_harness_whose_provider_lacks_its_protocol_and_an_unknown_harness(
    tmp_path, capsys, monkeypatch
) -> None:
    exhibition_provider(tmp_path, monkeypatch, ("openai",))
    fleet = tmp_path / "fleet.toml"
    fleet.write_text(EXHIBITION.read_text().replace('adapter = "opencode"', 'adapter = "open-code"'))
    assert main(["validate", str(ARENA), "--agents", str(fleet)]) == 1
    out = capsys.readouterr()
    text = out.out + out.err
    assert "agent claude-code" in text and "anthropic_base_url" in text and "anthropic-messages" in text
    assert "open-code" in text
    assert "Traceback" not in text
