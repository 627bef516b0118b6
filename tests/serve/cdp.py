"""A headless Chromium driven over the DevTools protocol: just enough to load the served app, read it and type.

Debian's `chromium` runs with its own throwaway profile and a debugging port
the OS picks (`--remote-debugging-port=0`, read back from the profile's
`DevToolsActivePort`); commands go over one websocket (aiohttp, which
textual-serve already brings). Every request the page makes is paused and let
through only to the served app's origin, so its web-font link never leaves
the machine. The served page draws
the terminal on a canvas, so the screen is read from the xterm.js buffer it
draws from: a hook installed before the page's scripts keeps the page's
Terminal object when the page stores it.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

KEEP_TERMINAL = """
Object.defineProperty(Object.prototype, "terminal", {
  configurable: true,
  set(value) {
    Object.defineProperty(this, "terminal", {value, writable: true, configurable: true, enumerable: true});
    if (value && typeof value.loadAddon === "function" && !window.__aoeTerminal) window.__aoeTerminal = value;
  },
});
"""
SCREEN_TEXT = """
(() => {
  const t = window.__aoeTerminal;
  if (!t) return null;
  const buffer = t.buffer.active, lines = [];
  for (let y = 0; y < t.rows; y++) {
    const line = buffer.getLine(buffer.viewportY + y);
    lines.push(line ? line.translateToString(true) : "");
  }
  return lines.join("\\n");
})()
"""
KEYS = {
    "ArrowRight": 39,
    "ArrowLeft": 37,
    "End": 35,
    "Home": 36,
}


class Chromium:
    def __init__(self, width: int = 1600, height: int = 1000) -> None:
        self.width, self.height = width, height
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.allow = "about:"
        self.blocked: list[str] = []

    async def __aenter__(self) -> Chromium:
        assert CHROMIUM is not None, "chromium is not installed (scripts/bootstrap installs it)"
        self._profile = Path(tempfile.mkdtemp(prefix="aoe-chromium-"))
        self._process = subprocess.Popen(
            [
                CHROMIUM,
                "--headless=new",
                "--no-sandbox",  # root in a container: Chromium's own sandbox cannot start
                "--no-first-run",
                "--disable-extensions",
                "--disable-background-networking",
                "--enable-unsafe-swiftshader",  # software WebGL for xterm's renderer
                f"--window-size={self.width},{self.height}",
                f"--user-data-dir={self._profile}",
                "--remote-debugging-port=0",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port = await self._debugging_port()
        self._http = aiohttp.ClientSession()
        async with self._http.get(f"http://127.0.0.1:{port}/json/list") as response:
            page = next(t for t in await response.json() if t["type"] == "page")
        self._socket = await self._http.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        self._reader = asyncio.create_task(self._read())
        await self.send("Fetch.enable", patterns=[{"urlPattern": "*"}])
        await self.send("Page.enable")
        await self.send("Page.addScriptToEvaluateOnNewDocument", source=KEEP_TERMINAL)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._reader.cancel()
        await self._socket.close()
        await self._http.close()
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        shutil.rmtree(self._profile, ignore_errors=True)

    async def _debugging_port(self, timeout: float = 20) -> int:
        active = self._profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if active.exists() and (lines := active.read_text().splitlines()):
                return int(lines[0])
            if self._process.poll() is not None:
                raise RuntimeError(f"chromium exited with status {self._process.returncode}")
            await asyncio.sleep(0.05)
        raise TimeoutError("chromium did not open its debugging port")

    async def _read(self) -> None:
        async for message in self._socket:
            data = json.loads(message.data)
            if data.get("method") == "Fetch.requestPaused":
                task = asyncio.create_task(self._gate(data["params"]))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
                continue
            future = self._pending.pop(data.get("id", -1), None)
            if future is not None and not future.done():
                future.set_result(data)

    async def _gate(self, request: dict[str, Any]) -> None:
        """Every request the page makes: on to the served app, or failed (web fonts, anything off this machine)."""
        if request["request"]["url"].startswith(self.allow):
            await self.send("Fetch.continueRequest", requestId=request["requestId"])
        else:
            self.blocked.append(request["request"]["url"])
            await self.send("Fetch.failRequest", requestId=request["requestId"], errorReason="BlockedByClient")

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        call_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        await self._socket.send_json({"id": call_id, "method": method, "params": params})
        reply = await asyncio.wait_for(future, 15)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    async def open(self, url: str) -> None:
        """Load `url` (on loopback); the page may fetch from that origin only."""
        self.allow = "/".join(url.split("/", 3)[:3]) + "/"  # scheme://host:port/
        await self.send("Page.navigate", url=url)

    async def evaluate(self, expression: str) -> Any:
        result = await self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    async def screen(self) -> str | None:
        return await self.evaluate(SCREEN_TEXT)

    async def wait_for_screen(self, wanted: str, timeout: float) -> str:
        """The terminal's text once it contains `wanted`."""
        deadline = time.monotonic() + timeout
        text = None
        while time.monotonic() < deadline:
            text = await self.screen()
            if text and wanted in text:
                return text
            await asyncio.sleep(0.2)
        raise AssertionError(f"the page never showed {wanted!r}; it showed:\n{text}")

    async def press(self, key: str) -> None:
        """A key typed into the terminal (focused first), as a person would."""
        await self.evaluate("document.querySelector('.xterm-helper-textarea').focus()")
        code = KEYS[key]
        for kind in ("rawKeyDown", "keyUp"):
            await self.send("Input.dispatchKeyEvent", type=kind, key=key, code=key, windowsVirtualKeyCode=code)

    async def screenshot(self, path: Path) -> None:
        shot = await self.send("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(shot["data"]))
