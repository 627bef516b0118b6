"""`python -m aoe_tui.agents.harnesses ADAPTER`: one real harness in its guest (runner.py)."""

import os
import sys

from aoe_tui.agents.harnesses.runner import main

if len(sys.argv) != 2:
    print("usage: python -m aoe_tui.agents.harnesses ADAPTER", file=sys.stderr)
    sys.exit(2)
sys.exit(main(sys.argv[1], dict(os.environ)))
