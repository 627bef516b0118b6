"""A scripted "model" that builds First Build's durable record service correctly.

It drives the harness exactly like a real model would: discovery, a file
write, starting the unit, a self-check, then a summary without tool calls.
"""

from __future__ import annotations

from aoe_tui.agents.scripted.apps import app_source
from tests.agents_real.fake_provider import Step, bash, final, tool_calls

APP = app_source("sqlite")  # the oracle's service: the model here is scripted, the service is real

START = (
    "systemctl enable builder-app.service && systemctl restart builder-app.service && "
    "for i in $(seq 60); do curl -fsS http://127.0.0.1:8080/health && exit 0; sleep 0.5; done; exit 1"
)
SELF_CHECK = (
    "curl -sS -X PUT --data-binary opaque-self-check http://127.0.0.1:8080/records/self-check "
    "-o /dev/null -w '%{http_code} '; curl -sS http://127.0.0.1:8080/records/self-check"
)
SUMMARY = "Deployed /opt/builder/app.py (stdlib HTTP, records in SQLite on disk) under builder-app.service."


def builder_script(final_delay_s: float = 0.0) -> list[Step]:
    last = final(SUMMARY)
    last.delay_s = final_delay_s
    return [
        tool_calls(bash("systemctl cat builder-app.service; ls -la /opt/builder", "Inspect the service slot")),
        tool_calls(("write_file", {"path": "/opt/builder/app.py", "content": APP})),
        tool_calls(bash(START, "Start the unit and wait for health")),
        tool_calls(("read_file", {"path": "/opt/builder/app.py"}), bash(SELF_CHECK, "Round-trip one record")),
        last,
    ]
