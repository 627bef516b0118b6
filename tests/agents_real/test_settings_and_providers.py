"""Where the harness gets its endpoint, key, budget and retry timing from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aoe_tui.agents.openai_harness.chat import RetryPolicy, parse_retry_after
from aoe_tui.agents.providers import resolve_provider
from aoe_tui.agents.openai_harness.settings import HarnessSettings
from aoe_tui.agents.registry import resolve_adapter
from aoe_tui.domain.errors import AoeError

PROVIDERS = """
default = "router"
[providers.router]
base_url = "https://router.example/api/v1"
api_key_env = "ROUTER_KEY"
models = ["openai/*", "z-ai/*"]
[providers.ollama]
base_url = "http://127.0.0.1:11434/v1"
models = ["qwen*"]
"""


def config(tmp_path: Path, text: str = PROVIDERS, **env: str) -> dict[str, str]:
    path = tmp_path / "providers.toml"
    path.write_text(text)
    return {"AOE_PROVIDERS_FILE": str(path), **env}


def test_a_provider_is_chosen_by_model_pattern_then_default(tmp_path: Path) -> None:
    env = config(tmp_path, ROUTER_KEY="rk-1")
    assert resolve_provider("qwen3:8b", env).base_url == "http://127.0.0.1:11434/v1"
    assert resolve_provider("qwen3:8b", env).api_key is None
    routed = resolve_provider("z-ai/glm-5.2", env)
    assert (routed.name, routed.api_key) == ("router", "rk-1")
    assert resolve_provider("deepseek/deepseek-v4-flash", env).name == "router"  # the default
    assert routed.base_urls == {"openai": "https://router.example/api/v1"}  # base_url: the openai_base_url alias


def test_a_provider_has_a_base_url_per_protocol_family_and_prices(tmp_path: Path) -> None:
    env = config(
        tmp_path,
        '[providers.all]\nopenai_base_url = "http://127.0.0.1:1/v1"\nanthropic_base_url = "http://127.0.0.1:1"\n'
        'gemini_base_url = "http://127.0.0.1:2"\nmodels = ["m*"]\n'
        '[providers.all.prices."m1"]\ninput = 2.0\noutput = 8.0\ncached_input = 0.5\n',
    )
    provider = resolve_provider("m1", env)
    assert provider.base_urls == {
        "openai": "http://127.0.0.1:1/v1",
        "anthropic": "http://127.0.0.1:1",
        "gemini": "http://127.0.0.1:2",
    }
    price = provider.price("m1")
    assert price is not None and provider.price("m2") is None
    # 800 uncached input at 2, 200 cached at 0.5, 100 output at 8 USD per million tokens: 1600 + 100 + 800 µUSD
    assert price.cost_microusd(1000, 100, 200) == 2500


def test_explicit_environment_wins_over_the_file_and_generic_openai_variables_lose_to_it(tmp_path: Path) -> None:
    env = config(
        tmp_path,
        ROUTER_KEY="rk-1",
        AOE_OPENAI_BASE_URL="http://127.0.0.1:8000/v1",
        AOE_OPENAI_API_KEY="vllm-key",
        OPENAI_BASE_URL="http://elsewhere/v1",
    )
    assert (resolve_provider("openai/x", env).base_url, resolve_provider("openai/x", env).api_key) == (
        "http://127.0.0.1:8000/v1",
        "vllm-key",
    )
    del env["AOE_OPENAI_BASE_URL"]
    assert resolve_provider("openai/x", env).name == "router"
    generic = resolve_provider("openai/x", {"OPENAI_API_KEY": "sk-x", "HOME": str(tmp_path)})
    assert (generic.base_url, generic.api_key) == ("https://api.openai.com/v1", "sk-x")


@pytest.mark.parametrize(
    "text, message",
    [
        (PROVIDERS, "ROUTER_KEY is not set"),
        ('[providers.a]\nbase_url = "http://x/v1"\nmodel = ["*"]\n', "providers.a.model: unknown key"),
        ('[providers.a]\nmodels = ["*"]\n', "providers.a: needs a base URL"),
        ('[providers.a]\nanthropic_base_url = "x"\n', "providers.a.anthropic_base_url: must be an http"),
        ('[providers.a]\nbase_url = "http://x"\n[providers.a.prices.m]\nin = 1\n', "providers.a.prices.m.in"),
        ('default = "nope"\n', "default: names unknown provider nope"),
        ("default = ", "invalid TOML"),
    ],
)
def test_a_bad_provider_file_names_the_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(AoeError, match=message):
        resolve_provider("openai/x", config(tmp_path, text))


def _adapter_env(agent_dir: Path, **extra: str) -> dict[str, str]:
    return {
        "AOE_AGENT_ID": "glm",
        "AOE_TERRITORY_ID": "builder-two",
        "AOE_TERRITORY_HOST": "127.0.0.1",
        "AOE_SSH_PORT": "26002",
        "AOE_MODEL": "z-ai/glm-5.2",
        "AOE_INSTRUCTION_FILE": "i.md",
        "AOE_RESULT_FILE": str(agent_dir / "result.json"),
        "AOE_USAGE_FILE": str(agent_dir / "usage.json"),
        "AOE_SSH_KEY": "k",
        "AOE_KNOWN_HOSTS": "h",
        **extra,
    }


def test_budget_comes_from_the_environment_or_else_the_match_manifest_copy(tmp_path: Path) -> None:
    agent_dir = tmp_path / "agents" / "glm"
    (tmp_path / "arena.json").write_text(
        json.dumps(
            {
                "agents": [
                    {"id": "luna", "budget": {"resource_units": 1}},
                    {"id": "glm", "budget": {"resource_units": 120, "max_cost_microusd": 2000000}},
                ]
            }
        )
    )
    settings = HarnessSettings.from_env(_adapter_env(agent_dir))
    assert (settings.budget.resource_units, settings.budget.max_cost_microusd) == (120, 2000000)
    assert settings.tool_trace_file == agent_dir / "tool_trace.jsonl"
    assert settings.live_transcript_file == agent_dir / "transcript.live.json"
    overridden = HarnessSettings.from_env(_adapter_env(agent_dir, AOE_BUDGET_RESOURCE_UNITS="7"))
    assert (overridden.budget.resource_units, overridden.budget.max_cost_microusd) == (7, None)


def test_missing_or_malformed_variables_are_named() -> None:
    with pytest.raises(AoeError, match=r"AOE_AGENT_ID.*AOE_KNOWN_HOSTS"):
        HarnessSettings.from_env({})
    with pytest.raises(AoeError, match="AOE_SSH_PORT='x' is not an integer"):
        HarnessSettings.from_env(_adapter_env(Path("/tmp/a"), AOE_SSH_PORT="x"))


def test_backoff_doubles_honours_retry_after_and_stays_bounded() -> None:
    policy = RetryPolicy(first_delay_s=1, max_delay_s=20)
    assert [policy.delay(n, None) for n in (1, 2, 3, 6)] == [1, 2, 4, 20]
    assert policy.delay(1, 7.0) == 7.0
    assert policy.delay(1, 500.0) == 20
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past: retry now
    assert parse_retry_after("soon") is None


def test_openai_is_a_builtin_adapter_run_as_a_module() -> None:
    adapter = resolve_adapter("openai")
    assert adapter.builtin and adapter.command[1:] == ("-m", "aoe_tui.agents.openai_harness")
    assert any(source.name == "loop.py" for source in adapter.sources)
