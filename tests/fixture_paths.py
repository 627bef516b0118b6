"""Where the checkout and the fixture matches are: real matches from an earlier implementation, read-only."""

from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
FIXTURES = PROJECT / "tests" / "fixtures"
MATCHES = FIXTURES / "matches"
SEEDS = FIXTURES / "seeds"
MATCH_DIRS = sorted(p for p in MATCHES.iterdir() if p.is_dir())
SINGLE_FILES = sorted(SEEDS.glob("*.match.json"))
WORLD_ONLY = SEEDS / "first-build-real.world.json"
ORACLE_DIR = MATCHES / "first-build-oracle-20260813-154733"
HARNESS = SEEDS / "harness-exhibition.match.json"
PRIMARY_FAILOVER = MATCHES / "primary-failover-real-20260813-174631"
