"""The four model protocols' wire formats, read without sockets: usage, stream reassembly, tool calls, errors, routes.

Every expectation here is written by hand from the providers' documented formats, never read back from the
parsers. Each stream is fed to the SSE decoder split at every byte boundary (inside CRLFs and inside UTF-8
sequences too), and must fold to the same document whatever the split.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from aoe_tui.agents.wire import anthropic_messages, gemini_generate, openai_chat, openai_responses
from aoe_tui.agents.wire.protocols import (
    ANTHROPIC_MESSAGES,
    GEMINI,
    OPENAI_CHAT,
    OPENAI_RESPONSES,
    model_listing,
    route,
)
from aoe_tui.agents.wire.sse import EventTooLarge, ServerSentEvent, SSEDecoder
from aoe_tui.agents.wire.usage import SeenToolCall, TokenUsage

# -- streams as providers send them -------------------------------------------------------------------------

_CHUNK = '{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700,"model":"gpt-x","choices":[%s]}'
CHAT_STREAM = (
    "\n\n".join(
        [
            "data: " + _CHUNK % '{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}',
            "data: " + _CHUNK % '{"index":0,"delta":{"content":"héllo "},"finish_reason":null}',
            ": OPENROUTER PROCESSING",
            "data: " + _CHUNK % '{"index":0,"delta":{"content":"世界 🎉"},"finish_reason":null}',
            "data: " + _CHUNK % '{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function",'
            '"function":{"name":"bash","arguments":""}}]},"finish_reason":null}',
            "data: "
            + _CHUNK
            % '{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"command\\": "}}]},'
            '"finish_reason":null}',
            "data: "
            + _CHUNK
            % '{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\\"ls é\\"}"}}]},'
            '"finish_reason":null}',
            "data: " + _CHUNK % '{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function",'
            '"function":{"name":"read","arguments":"{}"}}]},"finish_reason":null}',
            "data: " + _CHUNK % '{"index":0,"delta":{},"finish_reason":"tool_calls"}',
            'data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700,"model":"gpt-x","choices":[],'
            '"usage":{"prompt_tokens":120,"completion_tokens":34,"total_tokens":154,'
            '"prompt_tokens_details":{"cached_tokens":100},"cost":0.0025}}',
            "data: [DONE]",
        ]
    )
    + "\n\n"
)
CHAT_USAGE_DOC = {
    "prompt_tokens": 120,
    "completion_tokens": 34,
    "total_tokens": 154,
    "prompt_tokens_details": {"cached_tokens": 100},
    "cost": 0.0025,
}
CHAT_DOCUMENT = {
    "id": "chatcmpl-9",
    "model": "gpt-x",
    "created": 1700,
    "object": "chat.completion",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "héllo 世界 🎉",
                "tool_calls": [
                    {
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"command": "ls é"}'},
                    },
                    {"id": "call_b", "type": "function", "function": {"name": "read", "arguments": "{}"}},
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": CHAT_USAGE_DOC,
}

_FINAL_RESPONSE = {
    "id": "resp_1",
    "object": "response",
    "status": "completed",
    "model": "gpt-x",
    "output": [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "ça va ✓", "annotations": []}],
        },
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "shell", "arguments": '{"cmd":"pwd"}'},
    ],
    "usage": {
        "input_tokens": 50,
        "input_tokens_details": {"cached_tokens": 10},
        "output_tokens": 7,
        "output_tokens_details": {"reasoning_tokens": 3},
        "total_tokens": 57,
    },
}
_STARTED_RESPONSE = {"id": "resp_1", "object": "response", "status": "in_progress", "model": "gpt-x", "output": []}


def _responses_event(kind: str, **fields: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields}, ensure_ascii=False)}"


RESPONSES_EVENTS = [
    _responses_event("response.created", sequence_number=0, response=_STARTED_RESPONSE),
    _responses_event("response.output_text.delta", sequence_number=1, item_id="msg_1", delta="ça "),
    _responses_event("response.output_text.delta", sequence_number=2, item_id="msg_1", delta="va ✓"),
]
RESPONSES_STREAM = (
    "\n\n".join(
        [*RESPONSES_EVENTS, _responses_event("response.completed", sequence_number=3, response=_FINAL_RESPONSE)]
    )
    + "\n\n"
)


def _anthropic_event(kind: str, **fields: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields}, ensure_ascii=False)}"


ANTHROPIC_STREAM = (
    "\n\n".join(
        [
            _anthropic_event(
                "message_start",
                message={
                    "id": "msg_01",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-x",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": 5,
                        "cache_creation_input_tokens": 20,
                        "cache_read_input_tokens": 100,
                        "output_tokens": 1,
                    },
                },
            ),
            _anthropic_event("ping"),
            _anthropic_event("content_block_start", index=0, content_block={"type": "thinking", "thinking": ""}),
            _anthropic_event("content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": "Hmm, "}),
            _anthropic_event("content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": "façade."}),
            _anthropic_event("content_block_delta", index=0, delta={"type": "signature_delta", "signature": "c2ln"}),
            _anthropic_event("content_block_stop", index=0),
            _anthropic_event("content_block_start", index=1, content_block={"type": "text", "text": ""}),
            _anthropic_event("content_block_delta", index=1, delta={"type": "text_delta", "text": "Grüße, "}),
            _anthropic_event("content_block_delta", index=1, delta={"type": "text_delta", "text": "世界"}),
            _anthropic_event("content_block_stop", index=1),
            _anthropic_event(
                "content_block_start",
                index=2,
                content_block={"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}},
            ),
            _anthropic_event("content_block_delta", index=2, delta={"type": "input_json_delta", "partial_json": ""}),
            _anthropic_event(
                "content_block_delta", index=2, delta={"type": "input_json_delta", "partial_json": '{"path": '}
            ),
            _anthropic_event(
                "content_block_delta", index=2, delta={"type": "input_json_delta", "partial_json": '"a é.txt"}'}
            ),
            _anthropic_event("content_block_stop", index=2),
            _anthropic_event(
                "message_delta", delta={"stop_reason": "tool_use", "stop_sequence": None}, usage={"output_tokens": 42}
            ),
            _anthropic_event("message_stop"),
        ]
    )
    + "\n\n"
)
ANTHROPIC_DOCUMENT = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-x",
    "content": [
        {"type": "thinking", "thinking": "Hmm, façade."},
        {"type": "text", "text": "Grüße, 世界"},
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a é.txt"}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 5,
        "cache_creation_input_tokens": 20,
        "cache_read_input_tokens": 100,
        "output_tokens": 42,
    },
}

_GEMINI_USAGE = {
    "promptTokenCount": 300,
    "candidatesTokenCount": 20,
    "thoughtsTokenCount": 5,
    "cachedContentTokenCount": 200,
    "totalTokenCount": 325,
}
GEMINI_STREAM = (
    "\r\n\r\n".join(
        "data: " + json.dumps(event, ensure_ascii=False)
        for event in [
            {
                "candidates": [{"content": {"role": "model", "parts": [{"text": "Ünïcode "}]}, "index": 0}],
                "usageMetadata": {"promptTokenCount": 300, "totalTokenCount": 300},
                "modelVersion": "gemini-x",
                "responseId": "r1",
            },
            {
                "candidates": [{"content": {"role": "model", "parts": [{"text": "→ ok"}]}, "index": 0}],
                "usageMetadata": {"promptTokenCount": 300, "totalTokenCount": 300},
                "modelVersion": "gemini-x",
                "responseId": "r1",
            },
            {
                "candidates": [
                    {
                        "content": {
                            "role": "model",
                            "parts": [{"functionCall": {"name": "ls", "args": {"dir": "/tmp"}}}],
                        },
                        "finishReason": "STOP",
                        "index": 0,
                    }
                ],
                "usageMetadata": _GEMINI_USAGE,
                "modelVersion": "gemini-x",
                "responseId": "r1",
            },
        ]
    )
    + "\r\n\r\n"
)
GEMINI_DOCUMENT = {
    "usageMetadata": _GEMINI_USAGE,
    "modelVersion": "gemini-x",
    "responseId": "r1",
    "candidates": [
        {
            "content": {
                "role": "model",
                "parts": [{"text": "Ünïcode → ok"}, {"functionCall": {"name": "ls", "args": {"dir": "/tmp"}}}],
            },
            "finishReason": "STOP",
        }
    ],
}

STREAMS = {
    "openai-chat": (openai_chat, CHAT_STREAM, CHAT_DOCUMENT, TokenUsage(120, 34, 100, 0.0025)),
    "openai-chat-crlf": (
        openai_chat,
        CHAT_STREAM.replace("\n", "\r\n"),
        CHAT_DOCUMENT,
        TokenUsage(120, 34, 100, 0.0025),
    ),
    "openai-responses": (openai_responses, RESPONSES_STREAM, _FINAL_RESPONSE, TokenUsage(50, 7, 10, None)),
    "anthropic": (anthropic_messages, ANTHROPIC_STREAM, ANTHROPIC_DOCUMENT, TokenUsage(125, 42, 100, None)),
    "anthropic-crlf": (
        anthropic_messages,
        ANTHROPIC_STREAM.replace("\n", "\r\n"),
        ANTHROPIC_DOCUMENT,
        TokenUsage(125, 42, 100, None),
    ),
    "gemini-crlf": (gemini_generate, GEMINI_STREAM, GEMINI_DOCUMENT, TokenUsage(300, 25, 200, None)),
}


def _fold(module: Any, pieces: list[bytes]) -> Any:
    decoder, fold = SSEDecoder(), module.Fold()
    for piece in pieces:
        for event in decoder.feed(piece):
            fold.add(event)
    for event in decoder.close():
        fold.add(event)
    return fold


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_a_stream_folds_to_its_document_whatever_the_split(name):
    module, text, document, usage = STREAMS[name]
    data = text.encode()
    assert len(data) > len(text)  # multi-byte UTF-8 is in it, so some splits fall inside a character
    for split in range(len(data) + 1):
        fold = _fold(module, [data[:split], data[split:]])
        assert fold.document() == document, f"split at byte {split}"
        assert fold.usage == usage, f"split at byte {split}"
    one_byte_at_a_time = _fold(module, [data[i : i + 1] for i in range(len(data))])
    assert one_byte_at_a_time.document() == document
    assert one_byte_at_a_time.usage == usage


def test_chat_stream_in_three_pieces_at_every_pair_of_boundaries_near_a_crlf_and_an_emoji():
    data = CHAT_STREAM.replace("\n", "\r\n").encode()
    emoji = data.index("🎉".encode())
    crlf = data.index(b"\r\n\r\n")
    for first in range(crlf - 2, crlf + 5):
        for second in range(emoji - 1, emoji + 5):
            fold = _fold(openai_chat, [data[:first], data[first:second], data[second:]])
            assert fold.document() == CHAT_DOCUMENT


def test_tool_calls_of_the_reassembled_streams():
    assert openai_chat.tool_calls(_fold(openai_chat, [CHAT_STREAM.encode()]).document()) == [
        SeenToolCall("call_a", "bash", '{"command": "ls é"}'),
        SeenToolCall("call_b", "read", "{}"),
    ]
    assert anthropic_messages.tool_calls(_fold(anthropic_messages, [ANTHROPIC_STREAM.encode()]).document()) == [
        SeenToolCall("toolu_1", "read", '{"path": "a \\u00e9.txt"}')
    ]
    assert gemini_generate.tool_calls(_fold(gemini_generate, [GEMINI_STREAM.encode()]).document()) == [
        SeenToolCall("call-0", "ls", '{"dir": "/tmp"}')
    ]
    assert openai_responses.tool_calls(_fold(openai_responses, [RESPONSES_STREAM.encode()]).document()) == [
        SeenToolCall("call_1", "shell", '{"cmd":"pwd"}')
    ]


def test_a_chat_stream_without_its_usage_chunk_has_no_usage_and_no_usage_in_its_document():
    text = (
        CHAT_STREAM[
            : CHAT_STREAM.index(
                'data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700,"model":"gpt-x","choices":[],'
            )
        ]
        + "data: [DONE]\n\n"
    )
    fold = _fold(openai_chat, [text.encode()])
    assert fold.usage is None
    assert "usage" not in fold.document()
    assert fold.document()["choices"][0]["message"]["content"] == "héllo 世界 🎉"


def test_a_responses_stream_cut_before_its_final_event_is_the_started_response_marked_incomplete():
    text = "\n\n".join(RESPONSES_EVENTS) + "\n\n"
    fold = _fold(openai_responses, [text.encode()])
    assert fold.usage is None
    assert fold.document() == {**_STARTED_RESPONSE, "status": "incomplete"}


def test_responses_incomplete_and_failed_final_events_count_too():
    for kind in ("response.incomplete", "response.failed"):
        final = {**_FINAL_RESPONSE, "status": kind.split(".")[1]}
        text = "\n\n".join([*RESPONSES_EVENTS, _responses_event(kind, response=final)]) + "\n\n"
        fold = _fold(openai_responses, [text.encode()])
        assert fold.document()["status"] == kind.split(".")[1]
        assert fold.usage == TokenUsage(50, 7, 10, None)


def test_an_anthropic_stream_with_no_usage_at_all_has_none():
    text = "\n\n".join(
        [
            _anthropic_event("message_start", message={"id": "m", "content": [], "usage": {}}),
            _anthropic_event("content_block_start", index=0, content_block={"type": "text", "text": ""}),
            _anthropic_event("content_block_delta", index=0, delta={"type": "text_delta", "text": "hi"}),
            _anthropic_event("message_stop"),
        ]
    )
    fold = _fold(anthropic_messages, [text.encode()])  # no blank line after the last event: close() reads it
    assert fold.usage is None
    assert fold.document()["content"] == [{"type": "text", "text": "hi"}]


def test_a_gemini_stream_without_usage_has_none():
    text = 'data: {"candidates":[{"content":{"parts":[{"text":"a"}]}}]}\r\n\r\n'
    assert _fold(gemini_generate, [text.encode()]).usage is None


def test_gemini_thought_parts_stay_apart_from_the_answer_text():
    events = [
        {"candidates": [{"content": {"parts": [{"text": "plan ", "thought": True}]}}]},
        {"candidates": [{"content": {"parts": [{"text": "more", "thought": True}]}}]},
        {"candidates": [{"content": {"parts": [{"text": "answer"}]}}]},
        {"candidates": [{"content": {"parts": [{"text": "!"}]}}]},
    ]
    text = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
    document = _fold(gemini_generate, [text.encode()]).document()
    assert document["candidates"][0]["content"]["parts"] == [
        {"text": "plan more", "thought": True},
        {"text": "answer!"},
    ]


# -- whole bodies -------------------------------------------------------------------------------------------


def test_chat_body_usage():
    document = {"usage": {"prompt_tokens": 10, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 4}}}
    assert openai_chat.body_usage(document) == TokenUsage(10, 3, 4, None)
    with_cost = {"usage": {"prompt_tokens": 10, "completion_tokens": 3, "cost": 0.5}}
    assert openai_chat.body_usage(with_cost) == TokenUsage(10, 3, None, 0.5)
    assert openai_chat.body_usage({"choices": []}) is None
    assert openai_chat.body_usage({"usage": None}) is None
    assert openai_chat.body_usage(["not", "an", "object"]) is None
    hostile = {"usage": {"prompt_tokens": -5, "completion_tokens": True, "cost": "0.1"}}
    assert openai_chat.body_usage(hostile) == TokenUsage(None, None, None, None)
    assert not openai_chat.body_usage(hostile).known


def test_responses_body_usage():
    assert openai_responses.body_usage(_FINAL_RESPONSE) == TokenUsage(50, 7, 10, None)
    assert openai_responses.body_usage({"usage": {"input_tokens": 1, "output_tokens": 2, "cost": 3}}) == TokenUsage(
        1, 2, None, 3.0
    )
    assert openai_responses.body_usage({"output": []}) is None


def test_anthropic_body_usage_counts_cache_reads_and_writes_as_input():
    usage = {"input_tokens": 7, "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 300, "output_tokens": 9}
    assert anthropic_messages.body_usage({"usage": usage}) == TokenUsage(1307, 9, 1000, None)
    assert anthropic_messages.body_usage({"usage": {"input_tokens": 7, "output_tokens": 9}}) == TokenUsage(
        7, 9, None, None
    )
    # Cache counts without the base input are no input figure at all (a partial sum would under-charge).
    assert anthropic_messages.body_usage({"usage": {"cache_read_input_tokens": 5, "output_tokens": 1}}) == TokenUsage(
        None, 1, 5, None
    )
    assert anthropic_messages.body_usage({"content": []}) is None


def test_gemini_body_usage_counts_thoughts_as_output():
    assert gemini_generate.body_usage({"usageMetadata": _GEMINI_USAGE}) == TokenUsage(300, 25, 200, None)
    assert gemini_generate.body_usage({"usageMetadata": {"promptTokenCount": 8, "thoughtsTokenCount": 4}}) == (
        TokenUsage(8, 4, None, None)
    )
    assert gemini_generate.body_usage({"usageMetadata": {"promptTokenCount": 8}}) == TokenUsage(8, None, None, None)
    assert gemini_generate.body_usage({"candidates": []}) is None


def test_chat_tool_calls_of_a_whole_body():
    document = {
        "choices": [
            {
                "message": {
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"a":1}'}},
                        {"type": "function", "function": {"name": "noid", "arguments": {"b": 2}}},
                        "garbage",
                    ]
                }
            }
        ]
    }
    assert openai_chat.tool_calls(document) == [
        SeenToolCall("c1", "bash", '{"a":1}'),
        SeenToolCall("call-1", "noid", '{"b": 2}'),
    ]
    assert openai_chat.tool_calls({"choices": []}) == []
    assert openai_chat.tool_calls({"choices": [{"message": {"content": "no tools"}}]}) == []


def test_responses_tool_calls_of_every_kind():
    document = {
        "output": [
            {"type": "message", "content": []},
            {"type": "function_call", "id": "fc", "call_id": "call_f", "name": "f", "arguments": "{}"},
            {"type": "custom_tool_call", "id": "ct", "call_id": "call_c", "name": "apply_patch", "input": "*** Begin"},
            {"type": "local_shell_call", "id": "ls_1", "call_id": "call_s", "action": {"command": ["ls"]}},
        ]
    }
    assert openai_responses.tool_calls(document) == [
        SeenToolCall("call_f", "f", "{}"),
        SeenToolCall("call_c", "apply_patch", "*** Begin"),
        SeenToolCall("call_s", "", '{"command": ["ls"]}'),
    ]


def test_anthropic_and_gemini_tool_calls_of_whole_bodies():
    message = {
        "content": [
            {"type": "text", "text": "x"},
            {"type": "tool_use", "id": "toolu_9", "name": "edit", "input": {"file": "a"}},
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
        ]
    }
    assert anthropic_messages.tool_calls(message) == [
        SeenToolCall("toolu_9", "edit", '{"file": "a"}'),
        SeenToolCall("srvtoolu_1", "web_search", '{"query": "q"}'),
    ]
    gemini = {
        "candidates": [
            {
                "content": {
                    "parts": [
                        {"text": "x"},
                        {"functionCall": {"id": "g1", "name": "a", "args": {"k": 1}}},
                        {"functionCall": {"name": "b"}},
                    ]
                }
            }
        ]
    }
    assert gemini_generate.tool_calls(gemini) == [
        SeenToolCall("g1", "a", '{"k": 1}'),
        SeenToolCall("call-1", "b", "{}"),
    ]


# -- errors -------------------------------------------------------------------------------------------------


def test_error_shapes():
    assert openai_chat.error_body(401, "no") == {
        "error": {"message": "no", "type": "invalid_api_key", "code": "invalid_api_key"}
    }
    assert openai_chat.error_body(402, "spent") == {
        "error": {"message": "spent", "type": "insufficient_quota", "code": "insufficient_quota"}
    }
    assert openai_chat.error_body(429, "slow") == {
        "error": {"message": "slow", "type": "rate_limit_exceeded", "code": "rate_limit_exceeded"}
    }
    assert openai_chat.error_body(413, "big") == {
        "error": {"message": "big", "type": "invalid_request", "code": "invalid_request"}
    }
    assert openai_responses.error_body(402, "spent") == openai_chat.error_body(402, "spent")
    assert anthropic_messages.error_body(402, "spent") == {
        "type": "error",
        "error": {"type": "billing_error", "message": "spent"},
    }
    assert anthropic_messages.error_body(429, "m")["error"]["type"] == "rate_limit_error"
    assert anthropic_messages.error_body(413, "m")["error"]["type"] == "request_too_large"
    assert anthropic_messages.error_body(401, "m")["error"]["type"] == "authentication_error"
    assert anthropic_messages.error_body(502, "m")["error"]["type"] == "api_error"
    assert gemini_generate.error_body(429, "slow") == {
        "error": {"code": 429, "message": "slow", "status": "RESOURCE_EXHAUSTED"}
    }
    assert gemini_generate.error_body(401, "m")["error"]["status"] == "UNAUTHENTICATED"
    assert gemini_generate.error_body(400, "m")["error"]["status"] == "INVALID_ARGUMENT"
    assert gemini_generate.error_body(402, "m")["error"] == {
        "code": 402,
        "message": "m",
        "status": "FAILED_PRECONDITION",
    }
    assert GEMINI.error_body(429, "x") == gemini_generate.error_body(429, "x")


# -- the SSE decoder ----------------------------------------------------------------------------------------


def test_sse_fields_comments_and_multi_line_data():
    decoder = SSEDecoder()
    events = decoder.feed(
        b": comment\n\nevent: a\ndata: one\ndata:two\ndata:  three\nid: 7\nretry: 5\n\nevent:\ndata: x\n\n"
    )
    assert events == [ServerSentEvent("a", "one\ntwo\n three"), ServerSentEvent("message", "x")]


def test_sse_block_without_data_is_no_event_and_empty_data_is_one():
    decoder = SSEDecoder()
    assert decoder.feed(b"event: ping\n\n") == []
    assert decoder.feed(b"data:\n\n") == [ServerSentEvent("message", "")]


def test_sse_line_endings_lf_crlf_and_cr():
    for separator in (b"\n", b"\r\n", b"\r"):
        decoder = SSEDecoder()
        data = separator.join([b"event: e", b"data: 1", b"", b"data: 2", b"", b""])
        assert decoder.feed(data) == [ServerSentEvent("e", "1"), ServerSentEvent("message", "2")], separator


def test_sse_a_split_utf8_sequence_decodes_whole():
    data = "data: ✓é🎉\n\n".encode()
    for split in range(len(data) + 1):
        decoder = SSEDecoder()
        events = decoder.feed(data[:split]) + decoder.feed(data[split:])
        assert events == [ServerSentEvent("message", "✓é🎉")]


def test_sse_close_reads_an_unterminated_last_event_once():
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n\ndata: b") == [ServerSentEvent("message", "a")]
    assert decoder.close() == [ServerSentEvent("message", "b")]
    assert decoder.close() == []


def test_sse_event_too_large_without_an_end():
    decoder = SSEDecoder(max_event_bytes=100)
    assert decoder.feed(b"data: " + b"x" * 94) == []  # 100 bytes pending: at the bound, not over it
    with pytest.raises(EventTooLarge):
        decoder.feed(b"x")


def test_sse_events_each_under_the_bound_pass_however_many():
    decoder = SSEDecoder(max_event_bytes=100)
    event = b"data: " + b"y" * 80 + b"\n\n"
    assert len(decoder.feed(event * 50)) == 50
    assert decoder.feed(event[:60]) == []
    assert decoder.feed(event[60:]) == [ServerSentEvent("message", "y" * 80)]


def test_sse_a_long_event_in_small_chunks_is_read_in_linear_time():
    # One 8 MB event in 1 KiB reads (a long final event over a slow link): every byte must be searched for a
    # boundary once, not once per chunk (that took about 50 s of the event loop for 4 MB).
    decoder = SSEDecoder()
    chunk = b"z" * 1024
    started = time.perf_counter()
    assert decoder.feed(b"data: ") == []
    for _ in range(8 * 1024 - 1):
        assert decoder.feed(chunk) == []
    events = decoder.feed(b"\r\n\r\n")
    assert time.perf_counter() - started < 2.0
    assert len(events) == 1 and len(events[0].data) == (8 * 1024 - 1) * 1024


# -- the routing table --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "headers", "protocol", "kind", "model"),
    [
        ("POST", "/v1/chat/completions", {}, OPENAI_CHAT, "round", None),
        ("POST", "/v1/chat/completions/", {}, OPENAI_CHAT, "round", None),
        ("POST", "/v1/responses", {}, OPENAI_RESPONSES, "round", None),
        ("POST", "/v1/messages", {"anthropic-version": "2023-06-01"}, ANTHROPIC_MESSAGES, "round", None),
        ("POST", "/v1/messages/count_tokens", {}, ANTHROPIC_MESSAGES, "count", None),
        ("POST", "/v1beta/models/gemini-2.5-pro:generateContent", {}, GEMINI, "round", "gemini-2.5-pro"),
        ("POST", "/v1beta/models/g-1:streamGenerateContent", {}, GEMINI, "round", "g-1"),
        ("POST", "/v1beta/models/g-1:countTokens", {}, GEMINI, "count", "g-1"),
        ("GET", "/v1/models", {}, OPENAI_CHAT, "models", None),
        ("GET", "/v1/models", {"Anthropic-Version": "2023-06-01"}, ANTHROPIC_MESSAGES, "models", None),
        ("GET", "/v1beta/models", {}, GEMINI, "models", None),
    ],
)
def test_routes(method, path, headers, protocol, kind, model):
    found = route(method, path, headers)
    assert found is not None
    assert (found.protocol, found.kind, found.path_model) == (protocol, kind, model)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/chat/completions"),
        ("PUT", "/v1/messages"),
        ("DELETE", "/v1/responses"),
        ("POST", "/v1/models"),
        ("POST", "/v1/completions"),
        ("POST", "/v1/embeddings"),
        ("POST", "/v1beta/models/g:embedContent"),
        ("POST", "/v1beta/models/a/b:generateContent"),
        ("GET", "/v1/models/gpt-4o"),
        ("GET", "/"),
    ],
)
def test_what_the_gateway_does_not_carry(method, path):
    assert route(method, path, {}) is None


def test_upstream_urls_follow_each_sdks_base_url_convention():
    chat = route("POST", "/v1/chat/completions", {})
    assert chat.upstream_url("https://openrouter.ai/api/v1/", "/v1/chat/completions", "") == (
        "https://openrouter.ai/api/v1/chat/completions"
    )
    responses = route("POST", "/v1/responses", {})
    assert responses.upstream_url("http://h:1/v1", "/v1/responses", "") == "http://h:1/v1/responses"
    messages = route("POST", "/v1/messages", {})
    assert messages.upstream_url("https://openrouter.ai/api", "/v1/messages", "") == (
        "https://openrouter.ai/api/v1/messages"
    )
    gemini = route("POST", "/v1beta/models/g:streamGenerateContent", {})
    assert gemini.upstream_url("https://g.example/", "/v1beta/models/g:streamGenerateContent", "alt=sse") == (
        "https://g.example/v1beta/models/g:streamGenerateContent?alt=sse"
    )


def test_model_listings_name_only_the_agents_model():
    assert model_listing(OPENAI_CHAT, "m1", "prov") == {
        "object": "list",
        "data": [{"id": "m1", "object": "model", "created": 0, "owned_by": "prov"}],
    }
    assert model_listing(ANTHROPIC_MESSAGES, "m1", "prov")["data"] == [
        {"id": "m1", "type": "model", "display_name": "m1"}
    ]
    assert [m["name"] for m in model_listing(GEMINI, "m1", "prov")["models"]] == ["models/m1"]
