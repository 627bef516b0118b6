"""A saved match whose player-controlled text is hostile: Rich markup and terminal escape sequences.

Built in a temporary folder from a fixture (fixtures are read-only), with the
strings of issue 17 in a verifier failure detail, a tool command, a tool
description, a tool output, an agent's summary, an unknown event and a guest
console, so a test can open every screen over it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.fixture_paths import FIXTURES

SOURCE = FIXTURES / "matches" / "durable-job-queue-real-20260813-103028"
AGENT = "glm-queue-builder"
TERRITORY = "queue-one"
ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x9b31m"
DETAIL = "GET /health returned body '[/]' [bold red]boom"
COMMAND = "ls [/usr/bin]"
DESCRIPTION = "[link=https://x]y[/link]"
OUTPUT = f"[/] {ESCAPES}[bold red]boom"
SUMMARY = "done [link=https://x]y[/link] [/]"
HOSTILE = (DETAIL, COMMAND, DESCRIPTION, "[/]", "[bold red]boom")


def hostile_match(directory: Path) -> Path:
    """A copy of the durable job queue match carrying the hostile strings; returns its folder."""
    match = directory / SOURCE.name
    shutil.copytree(SOURCE, match)
    events = [json.loads(line) for line in (match / "events.jsonl").read_text().splitlines()]
    first_failure = next(e for e in events if e["kind"] == "milestone_failed" and e["territory"] == TERRITORY)
    first_failure["detail"] = DETAIL + ESCAPES
    finished = next(e for e in events if e["kind"] == "agent_finished")
    finished["detail"] = SUMMARY + ESCAPES
    events.insert(
        first_failure["sequence"] + 1,
        {
            "schema_version": 1,
            "sequence": first_failure["sequence"] + 1,
            "elapsed_ms": first_failure["elapsed_ms"],
            "kind": "[/]",
            "territory": TERRITORY,
            "note": DESCRIPTION,
        },
    )
    for sequence, event in enumerate(events):
        event["sequence"] = sequence
    (match / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))

    transcript_path = match / f"{AGENT}-transcript.json"
    transcript = json.loads(transcript_path.read_text())
    call = transcript["tool_trace"][0]
    call["input"] = {"command": COMMAND, "description": DESCRIPTION}
    call["output"] = OUTPUT
    transcript_path.write_text(json.dumps(transcript, indent=2))
    result_path = match / f"{AGENT}-result.json"
    result = json.loads(result_path.read_text())
    result["summary"] = SUMMARY
    result_path.write_text(json.dumps(result))
    console = match / "territories" / TERRITORY / "console.log"
    console.parent.mkdir(parents=True)
    console.write_text(f"boot ok\n{OUTPUT}\n{COMMAND}\n")
    return match
