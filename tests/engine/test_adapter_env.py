"""An adapter's environment is an allow-list: basics, the manifest's `env` names, the protocol."""

from aoe_tui.agents.registry import resolve_adapter
from aoe_tui.domain.manifest import AgentSpec
from aoe_tui.engine.provider import adapter_env

OPERATOR = {
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TERM": "xterm",
    "HOME": "/root",
    "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",
    "OPENROUTER_API_KEY": "sk-or-listed",
    "ANTHROPIC_API_KEY": "sk-ant-unlisted",
    "AOE_OPENAI_API_KEY": "sk-aoe",
    "AOE_OPENAI_BASE_URL": "http://127.0.0.1:11434/v1",
    "AOE_OPENAI_MAX_ATTEMPTS": "3",
    "AOE_TEST_SECRET": "planted",
    "AOE_AGENT_ID": "spoofed",
    "AWS_SECRET_ACCESS_KEY": "aws",
}


def _agent(adapter: str, env: list[str]) -> AgentSpec:
    return AgentSpec(id="a", territory="t", adapter=adapter, model="m", env=env)


def test_a_scripted_adapter_gets_basics_listed_names_and_protocol_only(monkeypatch) -> None:
    monkeypatch.setattr("os.environ", dict(OPERATOR))
    env = adapter_env(
        _agent("oracle", ["OPENROUTER_API_KEY", "NOT_SET_ANYWHERE"]), resolve_adapter("oracle"), {"AOE_AGENT_ID": "a"}
    )
    assert env == {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "xterm",
        "HOME": "/tmp",
        "OPENROUTER_API_KEY": "sk-or-listed",
        "AOE_AGENT_ID": "a",
    }


def test_the_model_harness_gets_its_settings_but_never_the_endpoint_or_its_key(monkeypatch) -> None:
    """The provider's URL and key are the gateway's: the harness reaches its model with a gateway token only."""
    monkeypatch.setattr("os.environ", dict(OPERATOR))
    env = adapter_env(_agent("openai", []), resolve_adapter("openai"), {"AOE_AGENT_ID": "a"})
    assert env["AOE_OPENAI_MAX_ATTEMPTS"] == "3" and env["AOE_AGENT_ID"] == "a"
    for never in (
        "AOE_OPENAI_API_KEY",
        "AOE_OPENAI_BASE_URL",
        "SSH_AUTH_SOCK",
        "AOE_TEST_SECRET",
        "ANTHROPIC_API_KEY",
        "OPENROUTER_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
    ):
        assert never not in env
