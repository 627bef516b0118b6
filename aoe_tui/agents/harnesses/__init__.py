"""Real third-party harnesses (Claude Code, Codex CLI, opencode, Gemini CLI, mini-swe-agent), one module each.

Each module says how its harness is installed, configured to reach the model
gateway only (with telemetry, update checks and plugin fetches off), started
headless on the arena's brief, and how its native event stream is read into our
live tool trace. `HARNESS_MODULES` maps an adapter id to its `Harness`;
`recipe.toml` pins the packages (its sha256 goes into provenance).
"""

from __future__ import annotations

from aoe_tui.agents.harnesses import claude_code, codex, gemini_cli, mini_swe_agent, opencode
from aoe_tui.agents.harnesses.base import RECIPE, Harness

HARNESS_MODULES: dict[str, Harness] = {
    module.HARNESS.adapter_id: module.HARNESS for module in (claude_code, codex, opencode, gemini_cli, mini_swe_agent)
}


def harness_spec(adapter: str | None) -> str | None:
    """package@version of a real harness (None for any other adapter)."""
    harness = HARNESS_MODULES.get(adapter or "")
    return harness.spec if harness is not None else None


__all__ = ["HARNESS_MODULES", "RECIPE", "Harness", "harness_spec"]
