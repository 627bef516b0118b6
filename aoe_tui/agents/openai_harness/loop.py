"""The agent loop: ask the model, run the tools it calls in the guest, repeat until it answers.

The run ends when the model answers without a tool call (completed), the
budget is spent (budget_exceeded), the provider fails for good (unavailable),
or the guest stays unreachable (interrupted). Every finished tool call is on
disk before the next one starts, so the app's live feed and the referee's
usage charges follow the agent as it works.
"""

from __future__ import annotations

import time
from typing import Any
from collections.abc import Callable

from aoe_tui.agents.openai_harness.chat import ChatClient, ProviderError
from aoe_tui.agents.openai_harness.guest_tools import DEFINITIONS, GuestTools, GuestUnreachable
from aoe_tui.agents.openai_harness.outputs import Outcome, RunOutputs
from aoe_tui.agents.openai_harness.transcript import TranscriptRecorder
from aoe_tui.agents.openai_harness.usage import Budget, UsageTotals

SYSTEM_PROMPT = (
    "You are an autonomous engineer with root access to one Linux host. You reach it only through your tools: "
    "bash runs a shell command, read_file and write_file read and replace files. Nobody will answer questions, so "
    "decide for yourself, act, and check your work on the host. When the task is done, reply with a short summary "
    "of what you built and how you checked it, without calling a tool."
)


class AgentRun:
    def __init__(
        self,
        instruction: str,
        chat: ChatClient,
        tools: GuestTools,
        budget: Budget,
        outputs: RunOutputs,
        log: Callable[[str], None],
    ) -> None:
        self.chat = chat
        self.tools = tools
        self.budget = budget
        self.outputs = outputs
        self.log = log
        self.totals = UsageTotals()
        self.recorder = TranscriptRecorder(chat.model)
        self.recorder.user_text(instruction)
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": instruction},
        ]
        self._started = time.monotonic()

    def elapsed_ms(self) -> int:
        return int((time.monotonic() - self._started) * 1000)

    def transcript(self, outcome: Outcome) -> dict[str, Any]:
        result = outcome.summary if outcome.status == "completed" else None
        return self.recorder.document(outcome.status, result, self.totals, self.elapsed_ms())

    async def run(self) -> Outcome:
        try:
            return await self._loop()
        except GuestUnreachable as error:
            return Outcome("interrupted", f"guest unreachable: {error}", "arena")

    async def _loop(self) -> Outcome:
        while True:
            if refusal := self.budget.refusal_before_round(self.totals):
                return Outcome("budget_exceeded", refusal, "player")
            started = self.elapsed_ms()
            try:
                reply = await self.chat.complete(self.messages, DEFINITIONS)
            except ProviderError as error:
                self.recorder.model_round(started, self.elapsed_ms() - started, "failed", None)
                return Outcome("unavailable", error.detail, "provider")
            self.recorder.model_round(started, self.elapsed_ms() - started, "completed", reply.usage)
            self.totals.add_round(reply.usage)
            self.outputs.usage(self.totals)
            self.recorder.assistant(reply)
            self.messages.append(reply.as_request_message())
            self.log(f"round {self.totals.rounds}: {len(reply.tool_calls)} tool call(s)")
            if not reply.tool_calls:
                return Outcome("completed", reply.content or "(the model ended without a summary)")
            if refusal := self.budget.cost_refusal(self.totals):
                return Outcome("budget_exceeded", refusal, "player")
            for call in reply.tool_calls:
                await self._tool_call(call.id, call.name, call.arguments)
            self.outputs.live_transcript(self.recorder.document("running", None, self.totals, self.elapsed_ms()))

    async def _tool_call(self, call_id: str, name: str, arguments: str) -> None:
        started = self.elapsed_ms()
        result = await self.tools.call(name, arguments)
        entry = self.recorder.tool_result(call_id, result, started, self.elapsed_ms() - started)
        self.totals.tool_calls += 1
        self.outputs.tool_call(entry)
        self.outputs.usage(self.totals)
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": result.output})
