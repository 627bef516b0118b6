"""Test doubles of the engine's edges: scripted territories, agents and the provider/launcher pair that
start them, so a whole match runs in-process on an injected clock (tests, benchmarks, screenshots).

Not product code: `.importlinter` keeps the app and the command line from importing it.
"""
