"""Everything the controller tells the harness, read from the adapter environment (docs/adapters.md).

Output files not named by the protocol (tool trace, transcripts) default to
the result file's directory, which is the agent's directory of the match
(`agents/<id>/`), so a controller that only knows the protocol's variables still
gets every artifact where the app looks for it. For the same reason the
budget, when `AOE_BUDGET_*` are not set, is read from the match's copy of the
manifest (`arena.json`, two levels above the agent directory).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Mapping

from aoe_tui.agents import protocol as p
from aoe_tui.agents.openai_harness.chat import RetryPolicy
from aoe_tui.agents.openai_harness.guest_tools import ToolLimits
from aoe_tui.agents.openai_harness.usage import Budget
from aoe_tui.domain.errors import AoeError
from aoe_tui.store.match_layout import AgentPaths, MatchLayout, live_variant

REQUIRED = (
    "AOE_AGENT_ID",
    "AOE_TERRITORY_ID",
    "AOE_TERRITORY_HOST",
    "AOE_SSH_PORT",
    "AOE_MODEL",
    "AOE_INSTRUCTION_FILE",
    "AOE_RESULT_FILE",
    "AOE_USAGE_FILE",
    "AOE_SSH_KEY",
    "AOE_KNOWN_HOSTS",
)


@dataclass(frozen=True)
class HarnessSettings:
    agent_id: str
    territory_id: str
    host: str
    ssh_port: int
    model: str
    reasoning_effort: str
    instruction_file: Path
    result_file: Path
    usage_file: Path
    tool_trace_file: Path
    transcript_file: Path
    ssh_key_file: Path
    known_hosts_file: Path
    budget: Budget
    retry: RetryPolicy
    limits: ToolLimits
    gateway_url: str | None = None  # the match's model gateway; None only when run by hand against a provider
    gateway_token: str | None = None
    stream: bool = True  # ask for a streamed reply (AOE_OPENAI_STREAM=0: whole replies)

    @property
    def live_transcript_file(self) -> Path:
        return live_variant(self.transcript_file)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> HarnessSettings:
        missing = [name for name in REQUIRED if not env.get(name)]
        if missing:
            raise AoeError(f"openai harness: missing environment variable(s) {', '.join(missing)}")
        result_file = Path(env["AOE_RESULT_FILE"])
        files = AgentPaths(result_file.parent)
        return cls(
            agent_id=env["AOE_AGENT_ID"],
            territory_id=env["AOE_TERRITORY_ID"],
            host=env["AOE_TERRITORY_HOST"],
            ssh_port=_integer(env, "AOE_SSH_PORT"),
            model=env["AOE_MODEL"],
            reasoning_effort=env.get("AOE_REASONING_EFFORT", "none"),
            instruction_file=Path(env["AOE_INSTRUCTION_FILE"]),
            result_file=result_file,
            usage_file=Path(env["AOE_USAGE_FILE"]),
            tool_trace_file=Path(env.get("AOE_TOOL_TRACE_FILE") or files.tool_trace),
            transcript_file=Path(env.get("AOE_TRANSCRIPT_FILE") or files.transcript),
            ssh_key_file=Path(env["AOE_SSH_KEY"]),
            known_hosts_file=Path(env["AOE_KNOWN_HOSTS"]),
            budget=_budget(env, MatchLayout.of_agent_directory(files.directory).arena),
            retry=RetryPolicy(
                max_attempts=_optional_integer(env, "AOE_OPENAI_MAX_ATTEMPTS") or RetryPolicy.max_attempts,
                first_delay_s=_seconds(env, "AOE_OPENAI_RETRY_FIRST_DELAY_SECONDS", RetryPolicy.first_delay_s),
                max_delay_s=_seconds(env, "AOE_OPENAI_RETRY_MAX_DELAY_SECONDS", RetryPolicy.max_delay_s),
                request_timeout_s=_seconds(env, "AOE_OPENAI_REQUEST_TIMEOUT_SECONDS", RetryPolicy.request_timeout_s),
            ),
            limits=ToolLimits(reconnect_s=_seconds(env, "AOE_SSH_RECONNECT_SECONDS", ToolLimits.reconnect_s)),
            gateway_url=env.get(p.ENV_GATEWAY_URL) or None,
            gateway_token=env.get(p.ENV_GATEWAY_TOKEN) or None,
            stream=env.get("AOE_OPENAI_STREAM", "1").strip().lower() not in ("0", "false", "no", "off"),
        )


def _budget(env: Mapping[str, str], manifest_copy: Path) -> Budget:
    if env.get(p.ENV_BUDGET_RESOURCE_UNITS) or env.get(p.ENV_BUDGET_MAX_COST_MICROUSD):
        return Budget(
            _optional_integer(env, p.ENV_BUDGET_RESOURCE_UNITS), _optional_integer(env, p.ENV_BUDGET_MAX_COST_MICROUSD)
        )
    try:
        agents = json.loads(manifest_copy.read_text(encoding="utf-8")).get("agents") or []
    except (OSError, ValueError, AttributeError):
        return Budget()
    budget = next((a.get("budget") or {} for a in agents if a.get("id") == env["AOE_AGENT_ID"]), {})
    return Budget(budget.get("resource_units"), budget.get("max_cost_microusd"))


def _integer(env: Mapping[str, str], name: str) -> int:
    try:
        return int(env[name])
    except ValueError:
        raise AoeError(f"openai harness: {name}={env[name]!r} is not an integer") from None


def _optional_integer(env: Mapping[str, str], name: str) -> int | None:
    return _integer(env, name) if env.get(name) else None


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    if not env.get(name):
        return default
    try:
        return float(env[name])
    except ValueError:
        raise AoeError(f"openai harness: {name}={env[name]!r} is not a number of seconds") from None
