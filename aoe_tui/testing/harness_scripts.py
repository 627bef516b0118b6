"""Scripted models for the real harnesses: each harness's own tool names, so a script drives any of them.

The harnesses call their shell tool by different names and arguments (Claude
Code `Bash`, Codex `exec_command`, opencode `bash`, Gemini CLI
`run_shell_command`, mini-swe-agent `bash`), and make side requests of their
own (a title, a topic check) without tools. `ToolTurns` spends the script only on
requests that offer tools and answers the others with a short text.
"""

from __future__ import annotations

import base64
import posixpath
from typing import Any

from aoe_tui.testing.model_server import ScriptedModelServer, Turn

MINI_SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"  # mini-swe-agent ends on the command that prints it


def shell_call(adapter_id: str, command: str, description: str = "") -> tuple[str, dict[str, Any]]:
    """One shell command, as `adapter_id`'s model would ask for it."""
    if adapter_id == "claude-code":
        return "Bash", {"command": command, "description": description}
    if adapter_id == "codex":
        return "exec_command", {"cmd": command}
    if adapter_id == "opencode":
        return "bash", {"command": command, "description": description}
    if adapter_id == "gemini-cli":
        return "run_shell_command", {"command": command, "description": description}
    if adapter_id == "mini-swe-agent":
        return "bash", {"command": command}
    raise ValueError(f"no scripted tool shape for {adapter_id!r}")


def write_command(path: str, content: str) -> str:
    """A file written by one shell command (base64: no quoting of the content can go wrong). Without command
    substitution, which Gemini CLI refuses to run."""
    encoded = base64.b64encode(content.encode()).decode()
    return f"mkdir -p {posixpath.dirname(path)} && echo {encoded} | base64 -d > {path} && wc -c {path}"


def script(adapter_id: str, commands: list[tuple[str, str]], final: str, **usage: Any) -> list[Turn]:
    """A turn per (command, description), then the final answer (mini-swe-agent: its submission command)."""
    turns = [Turn(tool_calls=(shell_call(adapter_id, command, about),), **usage) for command, about in commands]
    if adapter_id == "mini-swe-agent":
        turns.append(Turn(tool_calls=(shell_call(adapter_id, MINI_SUBMIT),), **usage))
    return [*turns, Turn(text=final, **usage)]


class ToolTurns(list[Turn]):
    """The script's turns, spent only on requests that offer tools: a harness's side calls (titles, topic checks)
    get a short text answer and leave the script where it was."""

    def __init__(self, server: ScriptedModelServer, turns: list[Turn], always: bool = False) -> None:
        super().__init__(turns)
        self.server = server
        self.always = always
        self.side_calls = 0
        self.served: list[Turn] = []  # every answer given, in order (what the gateway should have charged)

    def __bool__(self) -> bool:
        return True  # the server asks before each pop; past the script's end the server's final answer is given here

    def pop(self, index: Any = -1) -> Turn:
        body = self.server.requests[-1].body if self.server.requests else None
        if not self.always and not (isinstance(body, dict) and body.get("tools")):
            self.side_calls += 1
            turn = Turn(text="Arena notes", input_tokens=100, output_tokens=5)
        else:
            turn = super().pop(index) if len(self) else self.server.final
        self.served.append(turn)
        return turn


def scripted_server(turns: list[Turn], final: Turn | None = None) -> ScriptedModelServer:
    """A server that plays `turns` to the harness's tool-bearing requests (side requests answered aside)."""
    server = ScriptedModelServer(final=final or Turn(text="Nothing left to do."))
    server.turns = ToolTurns(server, turns)
    return server
