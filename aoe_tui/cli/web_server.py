"""The app in a browser: textual-serve's server with an access token and, for a live match, one session.

textual-serve runs the app command once per browser connection and streams
its screen over a websocket; by itself it lets anyone who reaches the port in.
`AppServer` adds what `aoe serve` promises when it listens beyond loopback: an
access token, given once in the URL (`/?token=...`) and then carried by an
HTTP-only, same-site cookie, required on every route (the page, its scripts,
the websocket). Serving a live match, a second browser would start a second
match on new guests, so only one session runs at a time.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable

from aiohttp import web
from textual_serve.server import Server

TOKEN_COOKIE = "aoe_serve_token"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class AppServer(Server):
    def __init__(
        self, command: str, host: str, port: int, public_url: str, token: str | None, one_session: bool, banner: str
    ) -> None:
        super().__init__(command, host=host, port=port, title="Agents of Empires", public_url=public_url)
        self.token = token
        self.one_session = one_session
        self.banner = banner
        self._sessions = 0

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        if self.token is not None:
            app.middlewares.append(self._require_token)
        return app

    @web.middleware
    async def _require_token(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        assert self.token is not None
        given = request.query.get("token") or request.cookies.get(TOKEN_COOKIE) or ""
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            raise web.HTTPForbidden(
                text="aoe serve: this page needs its access token: open the URL aoe serve printed\n"
            )
        response = await handler(request)
        if "token" in request.query and not response.prepared:
            response.set_cookie(TOKEN_COOKIE, self.token, httponly=True, samesite="Strict")
        return response

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        if self.one_session and self._sessions:
            raise web.HTTPConflict(text="aoe serve: the live match is already open in another browser\n")
        self._sessions += 1
        try:
            return await super().handle_websocket(request)
        finally:
            self._sessions -= 1

    async def on_startup(self, app: web.Application) -> None:
        self.console.print(self.banner, highlight=False, markup=False, soft_wrap=True)
