"""Every performance figure of the scale issue in one run: the replay at 10^4..10^6 events (loaded alone, and
`aoe replay` in a real terminal: first frame, the log counted, keys pressed while it loads) and the browser
listing (`scale.py`), the referee's own cost per tick at 3 and 30 territories (`referee_overhead.py`),
and territory start-up on real guests (`guest_boot.py`). Each part prints ratios against a baseline
measured in the same run; this only runs them one after another, so no part's load skews another's.

    nice -n 19 .venv/bin/python benchmarks/performance.py [--quick] [--no-vm]

--quick: 10^4 and 10^5 events, and no guests (under a minute); --no-vm: everything but the guests.
Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def part(title: str, script: str, *args: str) -> int:
    print(f"\n== {title} ({script} {' '.join(args)})".rstrip() + " ==", flush=True)
    started = time.monotonic()
    code = subprocess.run([sys.executable, str(HERE / script), *args], check=False).returncode
    print(f"({script}: {time.monotonic() - started:.0f} s{'' if code == 0 else f', exit status {code}'})", flush=True)
    return code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^4 and 10^5 events, no guests")
    parser.add_argument("--no-vm", action="store_true", help="skip the guest boot figures")
    args = parser.parse_args()
    failed = part("replay and listing at scale", "scale.py", *(["--quick"] if args.quick else []))
    failed |= part("referee overhead per tick", "referee_overhead.py", "--repeats", "3" if args.quick else "5")
    if not (args.quick or args.no_vm):
        failed |= part("territory start-up on real guests", "guest_boot.py")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
