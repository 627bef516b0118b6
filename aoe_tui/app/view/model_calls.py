"""An agent's model exchanges (the referee's gateway's `model_calls.jsonl`) as lines of the territory details.

One line per exchange: when (match clock), the protocol, the HTTP status,
whether it streamed, the tokens in and out (n/a when the provider did not
say), the tools it asked for, and why it was cut when it was. Every string
of the record is player or provider text: cleaned and cut to fit
(`domain.untrusted.first_line`); a line is (text, style) parts that the
screen assembles into `Content` (never parsed for markup), so the view needs
no Textual. The file is read by a `ModelCallTail`: only what was appended
since the last look, so a live match's details stay cheap to refresh.
"""

from __future__ import annotations

from aoe_tui.domain.clock import format_clock
from aoe_tui.domain.untrusted import first_line
from aoe_tui.app.view.presentation import NOT_AVAILABLE
from aoe_tui.store.model_calls import ModelCallSummary, ModelCallTail

Line = list[str | tuple[str, str]]  # `Content.assemble`'s parts: text, or (text, style)

SHOWN = 12  # exchanges shown, the latest
PROTOCOL_CHARS = 20
TOOLS_CHARS = 80
CUT_CHARS = 80


def _tokens(count: int | None) -> str:
    return NOT_AVAILABLE if count is None else f"{count:,}"


def model_call_line(call: ModelCallSummary) -> Line:
    """`1:02  openai-chat  200  streamed  1,234 in / 56 out  → shell, read_file  cut: the budget ran out`."""
    status = str(call.status) if call.status is not None else "—"
    ok = call.status is not None and 200 <= call.status < 300
    streamed = "streamed" if call.streamed else ("whole" if call.streamed is False else "?")
    tools = ", ".join(first_line(name, TOOLS_CHARS) or "?" for name in call.tool_names)
    line: Line = [
        (format_clock(call.elapsed_ms), "bold"),
        "  ",
        first_line(call.protocol, PROTOCOL_CHARS) or "?",
        "  ",
        (status, "$success" if ok else "$error"),
        f"  {streamed}  {_tokens(call.input_tokens)} in / {_tokens(call.output_tokens)} out",
    ]
    if tools:
        line.append(("  → " + first_line(tools, TOOLS_CHARS), "$accent"))
    if call.cut is not None:
        line.append(("  cut: " + (first_line(call.cut, CUT_CHARS) or "?"), "$error"))
    return line


def plain(line: Line) -> str:
    return "".join(part if isinstance(part, str) else part[0] for part in line)


def model_call_lines(tail: ModelCallTail, shown: int = SHOWN) -> list[Line]:
    """The latest exchanges' lines after a look for new ones, or a muted note when there are none."""
    tail.read_new()
    if not tail.seen:
        return [[("(no model calls recorded)", "$text-muted")]]
    lines = [model_call_line(call) for call in list(tail.summaries)[-shown:]]
    if tail.skipped_bytes:
        lines.insert(0, [(f"(the file's first {tail.skipped_bytes:,} bytes not read)", "$text-muted")])
    return lines


def model_calls_title(tail: ModelCallTail, shown: int = SHOWN) -> str:
    count = min(tail.seen, shown)
    return f"Model calls (the referee's gateway: last {count} of {tail.seen})" if tail.seen else "Model calls"
