"""A saved match with the referee's gateway's record of its agents' model exchanges (`model_calls.jsonl`).

Built in a temporary folder from the oracle fixture (fixtures are read-only,
and its agents left no transcript): one agent speaks OpenAI chat, one
Anthropic messages, one OpenAI responses, each answer carrying private
reasoning (`REASONING`) that no export may hold. The chat agent's file also
has a garbage line and a torn last line, and its second exchange asks for a
tool named with markup, HTML and terminal escapes (`HOSTILE`). The chat agent
is metered by the referee and its adapter reported other figures; the
Anthropic one is metered and reported the same.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from aoe_tui.store.match_layout import MatchLayout
from tests.fixture_paths import ORACLE_DIR

CHAT, ANTHROPIC, RESPONSES = "builder-one-agent", "builder-two-agent", "builder-three-agent"
TERRITORY = "builder-one"
REASONING = "PRIVATE-REASONING-never-exported"
ENCRYPTED = "gAAAA-encrypted-reasoning"
HOSTILE = "[bold]x[/bold]<script>alert(1)</script>\x1b[31mred\x1b]0;pwned\x07"
GARBAGE = b"this is not json {\n"
TORN = b'{"sequence": 4, "protocol": "openai-ch'
CUT = "the agent's budget ran out"


def _record(sequence: int, protocol: str, request: Any, response: Any, calls: list[dict[str, Any]], **fields: Any):
    record = {
        "sequence": sequence,
        "agent": "",
        "protocol": protocol,
        "model": "scripted-model",
        "provider": "scripted",
        "elapsed_ms": 5_000 * sequence,
        "duration_ms": 700,
        "status": 200,
        "streamed": True,
        "cut": None,
        "usage": {"input_tokens": 100 * sequence, "output_tokens": 20, "cached_tokens": 10, "provider_cost_usd": 0.001},
        "tool_calls": calls,
        "request": request,
        "response": response,
    }
    return {**record, **fields}


def _chat_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def _listed(call: dict[str, Any]) -> dict[str, Any]:
    return {"id": call["id"], "name": call["function"]["name"], "arguments": call["function"]["arguments"]}


def chat_records() -> list[dict[str, Any]]:
    system = {"role": "system", "content": "You are a builder."}
    user = {"role": "user", "content": "Build the service."}
    first = [_chat_call("call_1", "shell", {"command": "ls /srv"})]
    second = [_chat_call("call_2", "shell", {"command": "systemctl start app"}), _chat_call("call_3", HOSTILE, {})]
    answer_1 = {"role": "assistant", "content": "Looking around.", "reasoning_content": REASONING, "tool_calls": first}
    answer_2 = {"role": "assistant", "content": "Starting it.", "reasoning": REASONING, "tool_calls": second}
    history_2 = [system, user, answer_1, {"role": "tool", "tool_call_id": "call_1", "content": "app.py\nreqs.txt"}]
    history_3 = [
        *history_2,
        answer_2,
        {"role": "tool", "tool_call_id": "call_2", "content": "started"},
        {"role": "tool", "tool_call_id": "call_3", "content": [{"type": "text", "text": "no such tool"}]},
    ]

    def reply(message: dict[str, Any]) -> dict[str, Any]:
        return {"object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}

    return [
        _record(1, "openai-chat", {"model": "m", "messages": [system, user]}, reply(answer_1), [*map(_listed, first)]),
        _record(
            2,
            "openai-chat",
            {"model": "m", "messages": history_2},
            reply(answer_2),
            [*map(_listed, second)],
            usage={"input_tokens": 150, "output_tokens": None, "cached_tokens": None, "provider_cost_usd": None},
            streamed=False,
        ),
        _record(
            3,
            "openai-chat",
            {"model": "m", "messages": history_3},
            reply({"role": "assistant", "content": "Done.", "reasoning_content": REASONING}),
            [],
            usage=None,
            status=402,
            cut=CUT,
        ),
    ]


def anthropic_records() -> list[dict[str, Any]]:
    user = {"role": "user", "content": "Build it."}
    thinking = {"type": "thinking", "thinking": REASONING, "signature": "sig"}
    use = {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "uname -a"}}
    answer = {"role": "assistant", "content": [thinking, {"type": "text", "text": "Checking."}, use]}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "Linux guest"}]}
    return [
        _record(
            1,
            "anthropic-messages",
            {"system": "You are a builder.", "thinking": {"type": "enabled"}, "messages": [user]},
            {"type": "message", **answer},
            [{"id": "toolu_1", "name": "bash", "arguments": json.dumps(use["input"])}],
        ),
        _record(
            2,
            "anthropic-messages",
            {"system": "You are a builder.", "messages": [user, answer, {"role": "user", "content": [result]}]},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "redacted_thinking", "data": ENCRYPTED}, {"type": "text", "text": "All set."}],
            },
            [],
        ),
    ]


def responses_records() -> list[dict[str, Any]]:
    user = {"role": "user", "content": [{"type": "input_text", "text": "Build it."}]}
    reasoning = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": REASONING}],
        "encrypted_content": ENCRYPTED,
    }
    said = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "On it."}]}
    call = {"type": "function_call", "call_id": "fc_1", "name": "shell", "arguments": '{"cmd": "df -h"}'}
    output = {"type": "function_call_output", "call_id": "fc_1", "output": "/dev/vda 10G"}
    return [
        _record(
            1,
            "openai-responses",
            {"instructions": "You are a builder.", "input": [user], "reasoning": {"effort": "high"}},
            {"output": [reasoning, said, call]},
            [{"id": "fc_1", "name": "shell", "arguments": call["arguments"]}],
        ),
        _record(
            2,
            "openai-responses",
            {"instructions": "You are a builder.", "input": [user, reasoning, said, call, output]},
            {
                "output": [
                    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Fine."}]}
                ]
            },
            [],
        ),
    ]


def gemini_records() -> list[dict[str, Any]]:
    user = {"role": "user", "parts": [{"text": "Build it."}]}
    answer = {
        "role": "model",
        "parts": [
            {"text": REASONING, "thought": True},
            {"text": "Listing."},
            {"functionCall": {"name": "ls", "args": {}}},
        ],
    }
    result = {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"output": "a b"}}}]}
    return [
        _record(
            1,
            "gemini",
            {"systemInstruction": {"parts": [{"text": "You are a builder."}]}, "contents": [user]},
            {"candidates": [{"content": answer}]},
            [{"id": "call-0", "name": "ls", "arguments": "{}"}],
        ),
        _record(
            2,
            "gemini",
            {"contents": [user, answer, result]},
            {"candidates": [{"content": {"role": "model", "parts": [{"text": "Two files."}]}}]},
            [],
        ),
    ]


def encoded(records: list[dict[str, Any]], agent: str) -> bytes:
    return b"".join(json.dumps({**r, "agent": agent}, sort_keys=True).encode() + b"\n" for r in records)


def usage_events(start_sequence: int, elapsed_ms: int) -> list[dict[str, Any]]:
    """The chat agent metered by the referee, its adapter reporting more; the Anthropic one reporting the same."""
    charged = {"kind": "usage_charged", "resource_units": 3, "measured_by": "referee"}
    bodies = [
        {**charged, "agent": CHAT, "input_tokens": 1_200, "output_tokens": 300, "cost_microusd": 4_000},
        {"kind": "usage_reported", "agent": CHAT, "input_tokens": 9_000, "output_tokens": 800, "cost_microusd": 9_500},
        {**charged, "agent": ANTHROPIC, "input_tokens": 500, "output_tokens": 40, "cost_microusd": None},
        {"kind": "usage_reported", "agent": ANTHROPIC, "input_tokens": 500, "output_tokens": 40},
    ]
    return [
        {"schema_version": 1, "sequence": start_sequence + i, "elapsed_ms": elapsed_ms, **body}
        for i, body in enumerate(bodies)
    ]


def model_calls_match(directory: Path, nested: bool = False) -> Path:
    """A copy of the oracle match with the three agents' model calls and the usage events; its folder.
    `nested`: the files in `agents/<id>/` (a live match's layout), else beside the record (published)."""
    match = directory / ORACLE_DIR.name
    shutil.copytree(ORACLE_DIR, match)
    layout = MatchLayout(match, flat=not nested)
    for agent, records in ((CHAT, chat_records()), (ANTHROPIC, anthropic_records()), (RESPONSES, responses_records())):
        path = layout.agent(agent).model_calls
        path.parent.mkdir(parents=True, exist_ok=True)
        data = encoded(records, agent)
        if agent == CHAT:
            first, rest = data.split(b"\n", 1)
            data = first + b"\n" + GARBAGE + rest + TORN
        path.write_bytes(data)
    events_path = layout.events
    events = [json.loads(line) for line in events_path.read_text().splitlines()]
    last = events[-1]
    events += usage_events(last["sequence"] + 1, last["elapsed_ms"])
    events_path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return match
