"""Read one tool_trace entry: which tool family it is, the command text shown to people, and its effect.

Harnesses name their tools differently (`Bash`, `bash`, `shell`; `Write`,
`write`, `create_file`), so tools are matched case-insensitively by family.
Planning tools such as TodoWrite only touch the agent's own notes: they are not
observable in the territory and get no action, exactly like the earlier
analyzer did.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from aoe_tui.analysis.commands import script_effect
from aoe_tui.analysis.effects import Effect, of_kind, units_in_path, write_effect
from aoe_tui.analysis.technologies import technologies_of_file
from aoe_tui.domain.analysis import ActionKind
from aoe_tui.domain.transcript import ToolTraceEntry

INTERNAL_TOOLS = {"todowrite", "todoread", "todo_write", "todo_read", "update_plan", "think", "exit_plan_mode"}
_SHELL_TOOLS = {
    "bash",
    "shell",
    "sh",
    "exec",
    "exec_command",
    "run_command",
    "run_shell_command",
    "terminal",
    "execute_command",
    "local_shell",
}
_WRITE_TOOLS = {
    "write",
    "edit",
    "multiedit",
    "notebookedit",
    "create_file",
    "write_file",
    "edit_file",
    "str_replace_editor",
    "apply_patch",
    "patch",
    "replace",
    "insert",
}
_FETCH_TOOLS = {"webfetch", "fetch", "http_request"}
_PATCH_FILE = re.compile(r"^(?:\*\*\* (?:Add|Update) File: |\+\+\+ (?:b/)?)(\S+)", re.MULTILINE)


def is_observable(entry: ToolTraceEntry) -> bool:
    return (entry.name or "").lower() not in INTERNAL_TOOLS


def shell_script(entry: ToolTraceEntry) -> str | None:
    """The shell text of a shell tool call (argv lists are joined the way a shell would read them)."""
    if (entry.name or "").lower() not in _SHELL_TOOLS or not isinstance(entry.input, dict):
        return None
    command = entry.input.get("command", entry.input.get("cmd", entry.input.get("script")))
    if isinstance(command, list):
        return shlex.join(str(part) for part in command)
    return command if isinstance(command, str) else None


def command_text(entry: ToolTraceEntry) -> str:
    """What a person reads: the shell text, `Write /path`, or the tool name with its input as compact JSON."""
    script = shell_script(entry)
    if script is not None:
        return script
    name = entry.name or "tool"
    path = _file_path(entry.input, include_plain_path=(entry.name or "").lower() in _WRITE_TOOLS)
    if path:
        return f"{name} {path}"
    if entry.input in (None, {}):
        return name
    return f"{name} {json.dumps(entry.input, separators=(',', ':'), ensure_ascii=False)}"


def description(entry: ToolTraceEntry) -> str | None:
    value = entry.input.get("description") if isinstance(entry.input, dict) else None
    return value if isinstance(value, str) else None


def tool_effect(entry: ToolTraceEntry) -> Effect:
    family = (entry.name or "").lower()
    script = shell_script(entry)
    if script is not None:
        return script_effect(script)
    if family in _WRITE_TOOLS:
        paths = _written_paths(entry.input)
        return write_effect(paths, _written_content(entry.input)) if paths else of_kind(ActionKind.MUTATION)
    if family in _FETCH_TOOLS:
        return of_kind(ActionKind.VALIDATION)
    # Read, Glob, Grep and tools we do not know only look at the territory.
    path = _file_path(entry.input) or ""
    return of_kind(ActionKind.DISCOVERY, service_units=units_in_path(path), technologies=technologies_of_file(path))


def _file_path(tool_input: Any, include_plain_path: bool = False) -> str | None:
    """The one file a tool works on. `path` alone is often a search root (Glob, Grep), so only writers use it."""
    if not isinstance(tool_input, dict):
        return None
    keys = ("file_path", "filePath", "notebook_path") + (("path", "filename") if include_plain_path else ())
    return next((tool_input[key] for key in keys if isinstance(tool_input.get(key), str)), None)


def _written_paths(tool_input: Any) -> list[str]:
    path = _file_path(tool_input, include_plain_path=True)
    if path:
        return [path]
    patch = next((v for v in (tool_input or {}).values() if isinstance(v, str) and _PATCH_FILE.search(v)), "")
    return _PATCH_FILE.findall(patch)


def _written_content(tool_input: Any) -> str | None:
    if not isinstance(tool_input, dict):
        return None
    for key in ("content", "new_string", "new_str", "file_text", "text"):
        value = tool_input.get(key)
        if isinstance(value, str):
            return value
    return None
