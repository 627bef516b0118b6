"""`python -m aoe_tui.agents.scripted NAME | --plan FILE`: run a scripted builder as an adapter.

NAME is a built-in plan; `--plan FILE` an arena's own plan file (`plan_file`), which the registry
passes for an arena's `adapters/NAME.toml`.
"""

import sys
from pathlib import Path

from aoe_tui.agents.scripted.builder import main
from aoe_tui.agents.scripted.plan_file import load_plan
from aoe_tui.agents.scripted.plans import PLANS
from aoe_tui.domain.errors import AoeError

if len(sys.argv) == 3 and sys.argv[1] == "--plan":
    try:
        plan = load_plan(Path(sys.argv[2]))
    except AoeError as error:
        print(f"scripted plan: {error}", file=sys.stderr)
        sys.exit(2)
elif len(sys.argv) == 2 and sys.argv[1] in PLANS:
    plan = PLANS[sys.argv[1]]
else:
    print(f"usage: python -m aoe_tui.agents.scripted {{{','.join(PLANS)}}} | --plan FILE", file=sys.stderr)
    sys.exit(2)
sys.exit(main(plan))
