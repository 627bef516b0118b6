"""Headless Chromium for the published pages: the DevTools driver of `aoe serve`'s test (tests/serve/cdp.py),
also listening for uncaught script errors and console errors, each page opened from `file://`."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from tests.serve.cdp import Chromium


class PageBrowser(Chromium):
    """Every request the page makes outside `file:///` is failed and named in `blocked`; every uncaught
    exception and console error is kept in `errors`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.errors: list[str] = []

    async def __aenter__(self) -> PageBrowser:
        await super().__aenter__()
        self.allow = "file:///"
        await self.send("Runtime.enable")
        await self.send("Log.enable")
        return self

    async def _read(self) -> None:
        async for message in self._socket:
            data = json.loads(message.data)
            method = data.get("method")
            if method == "Runtime.exceptionThrown":
                details = data["params"]["exceptionDetails"]
                self.errors.append(str(details.get("exception", {}).get("description") or details.get("text")))
                continue
            if method == "Log.entryAdded" and data["params"]["entry"].get("level") == "error":
                self.errors.append(data["params"]["entry"].get("text", ""))
                continue
            if method == "Fetch.requestPaused":
                task = asyncio.create_task(self._gate(data["params"]))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
                continue
            future = self._pending.pop(data.get("id", -1), None)
            if future is not None and not future.done():
                future.set_result(data)

    async def load(self, url: str, timeout: float = 20) -> float:
        """Open `url` (a file:// page, a fresh load) and wait until its script says it is ready; the seconds it took."""
        await self.send("Page.navigate", url="about:blank")
        started = time.monotonic()
        await self.send("Page.navigate", url=url)
        await self.wait_for("document.documentElement.dataset.ready === 'true'", timeout)
        return time.monotonic() - started

    async def wait_for(self, expression: str, timeout: float = 10) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = await self.evaluate(expression)
            except RuntimeError:
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"never true: {expression}")
            await asyncio.sleep(0.05)

    async def states(self) -> dict[str, str]:
        """territory/milestone -> data-state of every milestone element on the page."""
        return await self.evaluate(
            "Object.fromEntries(Array.from(document.querySelectorAll('[data-territory][data-milestone]'))"
            ".map(el => [el.dataset.territory + '/' + el.dataset.milestone, el.dataset.state]))"
        )
