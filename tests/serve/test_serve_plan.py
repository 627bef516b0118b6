"""`aoe serve` decided without a browser: the command each session runs, loopback by default, a token elsewhere."""

from __future__ import annotations

import gc
import sys

import pytest
from aiohttp import WSServerHandshakeError
from aiohttp.test_utils import TestClient, TestServer

from aoe_tui.cli.main import build_parser
from aoe_tui.cli.serve_commands import plan
from aoe_tui.cli.web_server import TOKEN_COOKIE, AppServer
from aoe_tui.domain.errors import AoeError
from tests.fixture_paths import HARNESS, MATCHES, PROJECT
from tests.series.helpers import SERIES

AOE = [sys.executable, "-m", "aoe_tui.cli.main"]
ARENA = PROJECT / "arenas" / "first-build" / "arena.toml"
FLEET = PROJECT / "arenas" / "first-build" / "fleets" / "real-models.toml"


def planned(*argv: str):
    return plan(build_parser().parse_args(["serve", *argv]))


def test_a_saved_match_series_or_folder_of_matches_is_served_as_the_terminal_would_open_it():
    assert planned(str(HARNESS)).command == [*AOE, "replay", str(HARNESS)]
    assert planned(str(SERIES)).command == [*AOE, "replay", str(SERIES)]
    assert planned(str(MATCHES)).command == [*AOE, "open", str(MATCHES)]
    assert planned().command == [*AOE, "open"]


def test_live_runs_the_manifest_with_its_fleet_one_session_at_a_time():
    served = planned("--live", str(ARENA), "--agents", str(FLEET))
    assert served.command == [*AOE, "run", str(ARENA), "--agents", str(FLEET)]
    assert served.live and "steer" in (planned("--live", str(ARENA), "--host", "0.0.0.0").warning() or "")
    with pytest.raises(AoeError, match="not both"):
        planned(str(HARNESS), "--live", str(ARENA))
    with pytest.raises(AoeError, match="--agents goes with --live"):
        planned(str(HARNESS), "--agents", str(FLEET))


def test_loopback_by_default_without_a_token():
    served = planned(str(HARNESS))
    assert (served.host, served.token, served.warning()) == ("127.0.0.1", None, None)
    assert served.open_url == f"http://127.0.0.1:{served.port}/"
    assert planned(str(HARNESS), "--host", "::1").warning() is None


def test_any_other_address_warns_and_requires_a_token():
    served = planned(str(HARNESS), "--host", "0.0.0.0", "--port", "9100")
    assert served.token and len(served.token) >= 20 and planned(str(HARNESS), "--host", "0.0.0.0").token != served.token
    assert "WARNING: listening on 0.0.0.0, not loopback" in (served.warning() or "")
    assert served.open_url.endswith(f":9100/?token={served.token}")
    assert planned(str(HARNESS), "--host", "10.1.2.3", "--token", "chosen-token").token == "chosen-token"


async def test_without_the_token_nothing_is_served_and_with_it_a_cookie_carries_it():
    server = AppServer("true", "127.0.0.1", 0, "http://127.0.0.1:0", "s3cret-token", one_session=False, banner="")
    async with TestClient(TestServer(await server._make_app())) as client:
        for path in ("/", "/static/js/textual.js", "/ws"):
            assert (await client.get(path)).status == 403
        assert (await client.get("/?token=wrong")).status == 403
        opened = await client.get("/?token=s3cret-token")
        assert opened.status == 200 and opened.cookies[TOKEN_COOKIE].value == "s3cret-token"
        assert opened.cookies[TOKEN_COOKIE]["httponly"]
        assert (await client.get("/static/js/textual.js")).status == 200  # the cookie now carries the token


async def test_a_live_match_is_open_in_one_browser_at_a_time():
    """The stand-in app runs until textual-serve's quit packet reaches its stdin, like the real one."""
    server = AppServer("head -c 1 >/dev/null", "127.0.0.1", 0, "http://127.0.0.1:0", None, one_session=True, banner="")
    async with TestClient(TestServer(await server._make_app())) as client:
        first = await client.ws_connect("/ws")
        with pytest.raises(WSServerHandshakeError) as refused:
            await client.ws_connect("/ws")
        assert refused.value.status == 409
        await first.close()
        second = await client.ws_connect("/ws")  # the first session over, the next browser gets in
        await second.close()
    gc.collect()  # textual-serve never waits for its app process: let its transport go while the loop runs
