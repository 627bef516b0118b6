"""Built-in scripted builders: no model, no network, real commands over SSH.

Each is an adapter process speaking the same protocol as any external
harness (`python -m aoe_tui.agents.scripted NAME`). One is correct; the others
make the classic mistakes that lose a durability race for real reasons.
"""
