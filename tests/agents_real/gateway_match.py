"""The scripted "models" of the gateway's real-VM match: one per agent, each behind its own scripted provider.

`careful` deploys the oracle's SQLite service and then looks for the provider
key everywhere in its guest (environment, config files, `grep -r`): it finds
only its gateway token. `forgetful` keeps records in memory (loses at
service-restart). `thrifty` has a budget of two model rounds and a script of
more: the gateway refuses its third.
"""

from __future__ import annotations

from aoe_tui.agents.scripted.apps import app_source
from aoe_tui.testing.model_server import Turn
from tests.agents_real.builder_script import SELF_CHECK, START

PROVIDER_KEY = "sk-aoe-gw-test-5be1c0d2a9f74e31-DO-NOT-LEAK"
KEY_FRAGMENT = PROVIDER_KEY[:18]  # what the hostile scan greps for (the whole key would be in its own command)
COST_USD = 0.0015  # reported per round by the scripted provider, as routers report `usage.cost`

KEY_SCAN = (
    f"(env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n') | grep -c '{KEY_FRAGMENT}'; "
    f"grep -rIl '{KEY_FRAGMENT}' /etc /root /opt /var /tmp /home /run /srv 2>/dev/null | head -5; echo scan-done"
)


def bash(command: str, description: str) -> tuple[str, dict[str, str]]:
    return "bash", {"command": command, "description": description}


def _turn(*calls: tuple[str, dict[str, str]], text: str | None = None) -> Turn:
    return Turn(text=text, tool_calls=calls, input_tokens=1200, output_tokens=150, cached_tokens=300, cost_usd=COST_USD)


def builder_turns(store: str, scan: bool = False) -> list[Turn]:
    """Inspect, write the app, start the unit, self-check (then the key scan), then a summary without tools."""
    turns = [
        _turn(bash("systemctl cat builder-app.service; ls -la /opt/builder", "Inspect the service slot")),
        _turn(("write_file", {"path": "/opt/builder/app.py", "content": app_source(store)})),
        _turn(bash(START, "Start the unit and wait for health")),
        _turn(bash(SELF_CHECK, "Round-trip one record")),
    ]
    if scan:
        turns.append(_turn(bash(KEY_SCAN, "Look for the provider key in the guest")))
    return [*turns, _turn(text=f"Deployed /opt/builder/app.py with records in {store}.")]
