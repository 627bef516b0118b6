"""Which OpenAI-compatible endpoint serves a model, and with which key.

Order, most explicit first: `AOE_OPENAI_BASE_URL`/`AOE_OPENAI_API_KEY`, then the
first provider in `providers.toml` whose `models` patterns match the model (or
its `default`), then the generic `OPENAI_BASE_URL`/`OPENAI_API_KEY`. The generic
pair comes last because it is often set for unrelated tools on a workstation.
A key is optional: local servers such as Ollama or vLLM usually take none.

    # ~/.config/aoe_tui/providers.toml
    default = "openrouter"
    [providers.openrouter]
    base_url = "https://openrouter.ai/api/v1"
    api_key_env = "OPENROUTER_API_KEY"        # or api_key = "..." (keep the file private)
    models = ["openai/*", "z-ai/*", "deepseek/*"]
    [providers.ollama]
    base_url = "http://127.0.0.1:11434/v1"
    models = ["qwen*", "llama*"]
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from aoe_tui.domain.errors import AoeError

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
_PROVIDER_KEYS = {"base_url", "api_key", "api_key_env", "models"}


@dataclass(frozen=True)
class ProviderConfig:
    name: str
    base_url: str
    api_key: str | None

    @property
    def chat_completions_url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"


def providers_file(env: Mapping[str, str]) -> Path:
    if explicit := env.get("AOE_PROVIDERS_FILE"):
        return Path(explicit)
    config_home = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(config_home) / "aoe_tui" / "providers.toml"


def resolve_provider(model: str, env: Mapping[str, str] = os.environ) -> ProviderConfig:
    if base_url := env.get("AOE_OPENAI_BASE_URL"):
        return ProviderConfig("AOE_OPENAI_BASE_URL", base_url, env.get("AOE_OPENAI_API_KEY") or None)
    path = providers_file(env)
    if path.is_file() and (configured := _from_file(path, model, env)) is not None:
        return configured
    key = env.get("AOE_OPENAI_API_KEY") or env.get("OPENAI_API_KEY") or None
    if base_url := env.get("OPENAI_BASE_URL"):
        return ProviderConfig("OPENAI_BASE_URL", base_url, key)
    if key:
        return ProviderConfig("openai", OPENAI_DEFAULT_BASE_URL, key)
    raise AoeError(
        f"no OpenAI-compatible provider configured for model {model}: set AOE_OPENAI_BASE_URL "
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
    return ProviderConfig(chosen, table["base_url"], key or None)


def _check_table(path: Path, name: str, table: object) -> None:
    where = f"{path}: providers.{name}"
    if not isinstance(table, dict):
        raise AoeError(f"{where}: must be a table")
    if unknown := set(table) - _PROVIDER_KEYS:
        raise AoeError(f"{where}.{sorted(unknown)[0]}: unknown key")
    if not isinstance(table.get("base_url"), str):
        raise AoeError(f'{where}.base_url: required (e.g. "https://openrouter.ai/api/v1")')
    models = table.get("models", [])
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        raise AoeError(f"{where}.models: must be a list of model name patterns")
