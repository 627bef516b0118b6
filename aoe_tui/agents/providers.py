"""Which provider serves a model: its base URL per protocol family, its key, and its prices.

Only the referee's model gateway reads this (and `aoe validate`): adapters
never see a provider key. Order, most explicit first: `AOE_OPENAI_BASE_URL` /
`AOE_OPENAI_API_KEY` (an OpenAI-compatible endpoint for every model: Chat
Completions and Responses), then the first provider in `providers.toml`
(`AOE_PROVIDERS_FILE`, else `~/.config/aoe_tui/providers.toml`) whose `models`
patterns match the model (or its `default`), then the generic
`OPENAI_BASE_URL` / `OPENAI_API_KEY`, last because a workstation often sets
them for unrelated tools. A key is optional: local servers (Ollama, vLLM,
llama.cpp) usually take none. Base URLs follow each SDK's own convention
(docs/providers.md):

    default = "openrouter"
    [providers.openrouter]
    api_key_env = "OPENROUTER_API_KEY"                 # or api_key = "..." (keep the file private)
    models = ["openai/*", "anthropic/*"]
    openai_base_url = "https://openrouter.ai/api/v1"   # Chat Completions and Responses (base_url: alias)
    anthropic_base_url = "https://openrouter.ai/api"   # the client appends /v1/messages
    gemini_base_url = "https://..."                    # the client appends /v1beta/models/...
    [providers.openrouter.prices."openai/*"]           # USD per million tokens, when the provider reports no cost
    input = 0.15
    output = 0.6
    cached_input = 0.075
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Mapping

from aoe_tui.domain.errors import AoeError

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
FAMILIES = ("openai", "anthropic", "gemini")  # one base URL each; which protocols use which: wire.protocols
_URL_KEYS = {f"{family}_base_url": family for family in FAMILIES}
_PROVIDER_KEYS = {"base_url", "api_key", "api_key_env", "models", "prices", *_URL_KEYS}
_PRICE_KEYS = {"input", "output", "cached_input"}


@dataclass(frozen=True)
class Price:
    """USD per million tokens; a million tokens at one USD is one µUSD a token, so cost is a plain product."""

    input: float = 0.0
    output: float = 0.0
    cached_input: float | None = None  # None: cached input costs as much as input

    def cost_microusd(self, input_tokens: int, output_tokens: int, cached_tokens: int | None) -> int:
        cached = min(cached_tokens or 0, input_tokens)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        return round((input_tokens - cached) * self.input + cached * cached_rate + output_tokens * self.output)


@dataclass(frozen=True)
class ProviderConfig:
    name: str
    api_key: str | None
    base_urls: dict[str, str]  # family -> base URL, as its SDK takes it
    prices: dict[str, Price] = field(default_factory=dict)  # model pattern -> price

    @property
    def base_url(self) -> str:
        """The OpenAI-family base URL (Chat Completions, Responses), or the first one there is."""
        return self.base_urls.get("openai") or next(iter(self.base_urls.values()), "")

    def price(self, model: str) -> Price | None:
        return next((price for pattern, price in self.prices.items() if fnmatch.fnmatchcase(model, pattern)), None)


def providers_file(env: Mapping[str, str]) -> Path:
    if explicit := env.get("AOE_PROVIDERS_FILE"):
        return Path(explicit)
    config_home = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(config_home) / "aoe_tui" / "providers.toml"


def resolve_provider(model: str, env: Mapping[str, str] = os.environ) -> ProviderConfig:
    if base_url := env.get("AOE_OPENAI_BASE_URL"):
        return ProviderConfig("AOE_OPENAI_BASE_URL", env.get("AOE_OPENAI_API_KEY") or None, {"openai": base_url})
    path = providers_file(env)
    if path.is_file() and (configured := _from_file(path, model, env)) is not None:
        return configured
    key = env.get("AOE_OPENAI_API_KEY") or env.get("OPENAI_API_KEY") or None
    if base_url := env.get("OPENAI_BASE_URL"):
        return ProviderConfig("OPENAI_BASE_URL", key, {"openai": base_url})
    if key:
        return ProviderConfig("openai", key, {"openai": OPENAI_DEFAULT_BASE_URL})
    raise AoeError(
        f"no provider configured for model {model}: set AOE_OPENAI_BASE_URL "
        f"(and AOE_OPENAI_API_KEY) or add a provider to {path}"
    )


def _from_file(path: Path, model: str, env: Mapping[str, str]) -> ProviderConfig | None:
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise AoeError(f"{path}: cannot read provider config: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise AoeError(f"{path}: invalid TOML: {error}") from None
    unknown = set(document) - {"default", "providers"}
    if unknown:
        raise AoeError(f"{path}: unknown key {sorted(unknown)[0]}")
    providers = document.get("providers") or {}
    if not isinstance(providers, dict):
        raise AoeError(f"{path}: providers must be a table of [providers.NAME] tables")
    for name, table in providers.items():
        _check_table(path, name, table)
    chosen = next(
        (
            name
            for name, table in providers.items()
            if any(fnmatch.fnmatchcase(model, pattern) for pattern in table.get("models", []))
        ),
        document.get("default"),
    )
    if chosen is None:
        return None
    if chosen not in providers:
        raise AoeError(f"{path}: default: names unknown provider {chosen}")
    table = providers[chosen]
    key = table.get("api_key") or (env.get(table["api_key_env"]) if "api_key_env" in table else None)
    if "api_key_env" in table and not key:
        raise AoeError(
            f"{path}: providers.{chosen}.api_key_env: environment variable {table['api_key_env']} is not set"
        )
    urls = {family: table[name] for name, family in _URL_KEYS.items() if name in table}
    if "base_url" in table:
        urls.setdefault("openai", table["base_url"])
    prices = {pattern: Price(**values) for pattern, values in (table.get("prices") or {}).items()}
    return ProviderConfig(chosen, key or None, urls, prices)


def _check_table(path: Path, name: str, table: object) -> None:
    where = f"{path}: providers.{name}"
    if not isinstance(table, dict):
        raise AoeError(f"{where}: must be a table")
    if unknown := set(table) - _PROVIDER_KEYS:
        raise AoeError(f"{where}.{sorted(unknown)[0]}: unknown key")
    for key in ("base_url", *_URL_KEYS):
        if key in table and not (isinstance(table[key], str) and table[key].startswith(("http://", "https://"))):
            raise AoeError(f'{where}.{key}: must be an http(s) URL (e.g. "https://openrouter.ai/api/v1")')
    if not any(key in table for key in ("base_url", *_URL_KEYS)):
        raise AoeError(
            f'{where}: needs a base URL: openai_base_url (e.g. "https://openrouter.ai/api/v1"), '
            "anthropic_base_url or gemini_base_url"
        )
    models = table.get("models", [])
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        raise AoeError(f"{where}.models: must be a list of model name patterns")
    _check_prices(where, table.get("prices", {}))


def _check_prices(where: str, prices: Any) -> None:
    if not isinstance(prices, dict):
        raise AoeError(f'{where}.prices: must be a table of model patterns, e.g. [prices."openai/*"]')
    for pattern, values in prices.items():
        if not isinstance(values, dict):
            raise AoeError(f"{where}.prices.{pattern}: must be a table with input, output, cached_input")
        if unknown := set(values) - _PRICE_KEYS:
            raise AoeError(f"{where}.prices.{pattern}.{sorted(unknown)[0]}: unknown key (input, output, cached_input)")
        for key, value in values.items():
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
                raise AoeError(f"{where}.prices.{pattern}.{key}: must be a number of USD per million tokens")
