"""The built-in `openai` adapter: a tool-calling agent loop against any OpenAI-compatible endpoint.

It is an ordinary command adapter (docs/adapters.md): the controller starts
`python -m aoe_tui.agents.openai_harness` with the adapter environment, and the
harness talks to the model on the host while every tool call runs in the
guest over SSH. The provider key stays in this process: it is never sent to
the guest and is scrubbed from every file the harness writes.
"""
