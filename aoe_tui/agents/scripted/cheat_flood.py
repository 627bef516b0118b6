"""Adversarial scripted builders that attack the referee's reading, not its checks.

They exist to prove that whatever a guest says reaches the referee bounded and
inert (issue 10): each really does it over SSH, as root in its own guest.

- `cheat-flood` makes the guest produce enormous output wherever the referee
  or a tool reads: `/health` streams an endless body, `systemctl` and `cat`
  wrappers early in PATH print a gigabyte before doing their job, the serial
  console is flooded with random bytes for the rest of the match, and its last
  step is `yes | head -c 50G` (its own adapter kills that at the cap). It keeps
  records in memory and never earns more than the endless body allows: nothing.
- `cheat-markup` answers `/health` correctly (it earns service-up) but serves
  records and errors wrapped in Rich markup (`[/]`, `[link=...]`,
  `[bold red]`), ANSI colours, a terminal-title OSC sequence and a screen
  clear, and prints the same into its own tool output, so every place that
  shows player text is tried. Its records never read back, so write-read fails
  with a detail that must show the markup as text and no escape character.
"""

from __future__ import annotations

from aoe_tui.agents.scripted.base import APP_PATH, SERVICE_URL, UNIT, Plan, Step, wait_until_answering

# Escape sequences are written as Python escapes inside the generated sources, never raw in this file.
# Octal escapes: the same text is a Python literal in the app and a printf format in the shell (dash has no \x).
HOSTILE_TEXT = (
    r"\033]0;owned by cheat-markup\007\033[2J\033[31m[bold red]pwned[/] [link=file:///etc/shadow]x[/link] [/]\033[0m"
)

_FLOOD_APP = '''"""builder-app.service of cheat-flood: /health never ends; records in memory."""
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHUNK = b"ready" + b"y" * 65531
RECORDS = {}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        try:
            while True:
                self.wfile.write(CHUNK)
        except OSError:
            pass

    def do_PUT(self):
        RECORDS[self.path] = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(204)
        self.end_headers()


ThreadingHTTPServer(("0.0.0.0", int(os.environ.get("BUILDER_PORT", "8080"))), Handler).serve_forever()
'''

_MARKUP_APP = f'''"""builder-app.service of cheat-markup: healthy, but every other answer is markup and escapes."""
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOSTILE = "{HOSTILE_TEXT}".encode()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/health":
            return self.reply(200, b"ready")
        return self.reply(200, HOSTILE)

    def do_PUT(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.reply(204, b"")


ThreadingHTTPServer(("0.0.0.0", int(os.environ.get("BUILDER_PORT", "8080"))), Handler).serve_forever()
'''

# A wrapper that floods, then does the real thing: wherever the referee calls it through PATH, it reads 1 GiB first.
_FLOODING_WRAPPER = """#!/bin/sh
yes "flood from $(basename "$0")" | head -c 1G
exec /usr/bin/$(basename "$0") "$@"
"""


def _write(path: str, source: str, mode: str = "644") -> str:
    return f"mkdir -p $(dirname {path}) && cat > {path} <<'AOE_CHEAT_EOF'\n{source}AOE_CHEAT_EOF\nchmod {mode} {path}"


def _start_unit() -> str:
    return f"systemctl enable {UNIT} && systemctl restart {UNIT} && sleep 2 && systemctl is-active {UNIT}"


FLOOD_CHEATS = {
    "cheat-flood": Plan(
        "cheat-flood",
        "memory",
        "flooded every reader: endless /health, 1 GiB wrappers, console flood, 50 GB of yes",
        (
            Step(
                "cat /etc/os-release | head -n 2 && systemctl cat " + UNIT,
                "Look at the guest and the service slot",
                1.0,
            ),
            Step(_write(APP_PATH, _FLOOD_APP), "Write a service whose /health never ends", 1.0),
            Step(_start_unit(), "Start it through its unit", 1.0),
            Step(
                " && ".join(_write(f"/usr/local/bin/{tool}", _FLOODING_WRAPPER, "755") for tool in ("systemctl", "cat"))
                + " && hash -r && echo wrappers installed",
                "Put flooding systemctl and cat wrappers early in PATH",
                1.0,
            ),
            Step(
                "systemd-run --unit aoe-console-flood sh -c 'while :; do cat /dev/urandom > /dev/ttyS0; done' "
                "&& echo console flood started",
                "Flood the serial console for the rest of the match",
                1.0,
            ),
            Step("yes | head -c 50G", "Print 50 GB", 1.0),
        ),
    ),
    "cheat-markup": Plan(
        "cheat-markup",
        "memory",
        "answered with Rich markup and terminal escapes everywhere",
        (
            Step(f"printf '{HOSTILE_TEXT}\\n'", "Say hello [bold red]loudly[/]", 1.0),
            Step(_write(APP_PATH, _MARKUP_APP), "Write a service answering in markup and escapes", 1.0),
            Step(
                f"systemctl enable {UNIT} && systemctl restart {UNIT} && {wait_until_answering(SERVICE_URL, UNIT)}",
                "Start it",
                1.0,
            ),
            Step(
                f"curl -sS http://127.0.0.1:8080/records/anything; printf '{HOSTILE_TEXT}' >&2; exit 3",
                "Fail [link=https://example.invalid]with markup[/link] [/]",
                1.0,
            ),
        ),
    ),
}
