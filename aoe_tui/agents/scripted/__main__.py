"""`python -m aoe_tui.agents.scripted NAME`: run a built-in scripted builder as an adapter."""

import sys

from aoe_tui.agents.scripted.builder import main
from aoe_tui.agents.scripted.plans import PLANS

if len(sys.argv) != 2 or sys.argv[1] not in PLANS:
    print(f"usage: python -m aoe_tui.agents.scripted {{{','.join(PLANS)}}}", file=sys.stderr)
    sys.exit(2)
sys.exit(main(PLANS[sys.argv[1]]))
