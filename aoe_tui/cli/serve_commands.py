"""`aoe serve [PATH | --live MANIFEST]`: the same Textual app, in a browser (textual-serve).

Each browser connection runs the command a terminal would (`aoe replay PATH`,
`aoe open DIR`, `aoe run MANIFEST`) with Textual's web driver, so the browser
shows exactly the terminal app, keys and steering included. It listens on
loopback unless told otherwise; on any other address it warns, and every
request needs the access token it prints (or `--token`).
"""

from __future__ import annotations

import argparse
import ipaddress
import secrets
import shlex
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from aoe_tui.cli.options import add_fleet_option
from aoe_tui.domain.errors import AoeError
from aoe_tui.store.match_layout import holds_match
from aoe_tui.store.series_source import collection_kind

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8800


@dataclass(frozen=True)
class ServePlan:
    """What `aoe serve` will run and where, decided before anything listens (and tested without a browser)."""

    command: list[str]
    host: str
    port: int
    public_url: str
    token: str | None
    live: bool

    @property
    def open_url(self) -> str:
        return f"{self.public_url}/" + (f"?token={self.token}" if self.token else "")

    def warning(self) -> str | None:
        if is_loopback(self.host):
            return None
        steering = " (and, serving a live match, pause, steer and abort it)" if self.live else ""
        return (
            f"aoe serve: WARNING: listening on {self.host}, not loopback: anyone who can reach port {self.port} "
            f"of this machine can open the app{steering} if they have the access token in the URL below. "
            "The connection is plain HTTP: use a network you trust, or put TLS in front."
        )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve anywhere


def app_command(path: Path | None, live: Path | None, agents: Path | None) -> list[str]:
    """The `aoe` command line each browser session runs (this interpreter, so the same install)."""
    aoe = [sys.executable, "-m", "aoe_tui.cli.main"]
    if live is not None:
        return [*aoe, "run", str(live.resolve()), *(["--agents", str(agents.resolve())] if agents else [])]
    if path is None:
        return [*aoe, "open"]
    if not path.exists():
        raise AoeError(f"{path}: no such file or directory")
    if path.is_dir() and not holds_match(path) and collection_kind(path) is None:
        return [*aoe, "open", str(path.resolve())]
    return [*aoe, "replay", str(path.resolve())]


def plan(args: argparse.Namespace) -> ServePlan:
    if args.live is not None and args.path is not None:
        raise AoeError("aoe serve: give a saved match PATH or --live MANIFEST, not both")
    if args.agents is not None and args.live is None:
        raise AoeError("aoe serve: --agents goes with --live MANIFEST")
    if not 0 < args.port < 65536:
        raise AoeError(f"--port {args.port}: not a TCP port")
    token = args.token or (None if is_loopback(args.host) else secrets.token_urlsafe(18))
    return ServePlan(
        command=app_command(args.path, args.live, args.agents),
        host=args.host,
        port=args.port,
        public_url=args.public_url.rstrip("/") if args.public_url else default_public_url(args.host, args.port),
        token=token,
        live=args.live is not None,
    )


def default_public_url(host: str, port: int) -> str:
    """The address the page tells the browser to connect back to: the host itself, or this machine's name."""
    if host in ("0.0.0.0", "::", ""):
        host = socket.getfqdn()
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


def serve(args: argparse.Namespace) -> int:
    from aoe_tui.cli.web_server import AppServer

    chosen = plan(args)
    warning = chosen.warning()
    if warning is not None:
        print(warning, file=sys.stderr, flush=True)
    banner = (
        f"aoe serve: open {chosen.open_url}  (Ctrl+C stops; each browser tab runs: {shlex.join(chosen.command[3:])})"
    )
    server = AppServer(
        shlex.join(chosen.command),
        host=chosen.host,
        port=chosen.port,
        public_url=chosen.public_url,
        token=chosen.token,
        one_session=chosen.live,
        banner=banner,
    )
    try:
        server.serve()
    except OSError as error:
        raise AoeError(f"aoe serve: cannot listen on {chosen.host}:{chosen.port} ({error.strerror})") from None
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve", help="the app in a browser (textual-serve): a replay, the match browser, or --live"
    )
    p.add_argument(
        "path", type=Path, nargs="?", help="a saved match, series or benchmark (a folder of matches: browse it)"
    )
    p.add_argument(
        "--live", type=Path, default=None, metavar="MANIFEST", help="run this arena live, watched from the browser"
    )
    add_fleet_option(p)
    p.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address to listen on (default {DEFAULT_HOST}: this machine only)"
    )
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument(
        "--token", default=None, help="access token to require (made up and printed when --host is not loopback)"
    )
    p.add_argument("--public-url", default=None, help="the URL browsers reach this server at, if not http://HOST:PORT")
    p.set_defaults(handler=serve)
