"""The table of what the gateway carries: a request's method and path -> protocol, kind and model.

A `round` is a model call: metered, budgeted, recorded. `count` (token
counting) and `models` (the listing, answered by the gateway itself with the
agent's own model) cost nothing and are not rounds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal
from collections.abc import Mapping

from aoe_tui.agents.wire import anthropic_messages, gemini_generate, openai_chat, openai_responses

Kind = Literal["round", "count", "models"]


@dataclass(frozen=True)
class WireProtocol:
    name: str
    family: str  # which base URL of a provider serves it (providers.FAMILIES)
    wire: ModuleType  # body_usage, tool_calls, error_body, Fold
    upstream_prefix: str  # what the family's base URL already holds of the path ("/v1" for OpenAI's)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        result: dict[str, Any] = self.wire.error_body(status, message)
        return result


OPENAI_CHAT = WireProtocol("openai-chat", "openai", openai_chat, "/v1")
OPENAI_RESPONSES = WireProtocol("openai-responses", "openai", openai_responses, "/v1")
ANTHROPIC_MESSAGES = WireProtocol("anthropic-messages", "anthropic", anthropic_messages, "")
GEMINI = WireProtocol("gemini", "gemini", gemini_generate, "")
PROTOCOLS = {p.name: p for p in (OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC_MESSAGES, GEMINI)}

_GEMINI_CALL = re.compile(
    r"^/v1beta/models/(?P<model>[^/:]+):(?P<action>generateContent|streamGenerateContent|countTokens)$"
)


@dataclass(frozen=True)
class Route:
    protocol: WireProtocol
    kind: Kind
    path_model: str | None = None  # Gemini names the model in the path

    def upstream_url(self, base_url: str, path: str, query: str) -> str:
        """The provider's URL for `path`: its base URL (SDK convention) plus the rest of the path."""
        rest = path[len(self.protocol.upstream_prefix) :] if path.startswith(self.protocol.upstream_prefix) else path
        return base_url.rstrip("/") + rest + (f"?{query}" if query else "")


def route(method: str, path: str, headers: Mapping[str, str]) -> Route | None:
    """The route of a request, or None when the gateway does not carry it."""
    path = "/" + path.strip("/")
    if method == "GET":
        if path == "/v1/models":
            anthropic = any(name.lower() == "anthropic-version" for name in headers)
            return Route(ANTHROPIC_MESSAGES if anthropic else OPENAI_CHAT, "models")
        if path == "/v1beta/models":
            return Route(GEMINI, "models")
        return None
    if method != "POST":
        return None
    if path == openai_chat.PATH:
        return Route(OPENAI_CHAT, "round")
    if path == openai_responses.PATH:
        return Route(OPENAI_RESPONSES, "round")
    if path == anthropic_messages.PATH:
        return Route(ANTHROPIC_MESSAGES, "round")
    if path == anthropic_messages.COUNT_TOKENS_PATH:
        return Route(ANTHROPIC_MESSAGES, "count")
    if (match := _GEMINI_CALL.match(path)) is not None:
        kind: Kind = "count" if match["action"] == "countTokens" else "round"
        return Route(GEMINI, kind, match["model"])
    return None


def model_listing(protocol: WireProtocol, model: str, owner: str) -> dict[str, Any]:
    """The listing an agent sees: its own model only, in the protocol's shape."""
    if protocol is GEMINI:
        return {
            "models": [
                {
                    "name": f"models/{model}",
                    "displayName": model,
                    "supportedGenerationMethods": ["generateContent", "countTokens"],
                }
            ]
        }
    if protocol is ANTHROPIC_MESSAGES:
        return {
            "data": [{"id": model, "type": "model", "display_name": model}],
            "has_more": False,
            "first_id": model,
            "last_id": model,
        }
    return {"object": "list", "data": [{"id": model, "object": "model", "created": 0, "owned_by": owner}]}
