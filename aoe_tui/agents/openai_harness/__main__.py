import sys

from aoe_tui.agents.openai_harness.main import main

sys.exit(main())
