"""One health probe: GET the territory's health path over its loopback forward, bounded in time and bytes.

The body comes from a guest a player controls, so it is untrusted: at most
`MAX_RESPONSE_BYTES` are read (a guest that streams forever is cut, never
buffered), and the detail recorded is the body made printable and bounded
(`clean_text`), shown literally. A plain HTTP/1.0 request on an asyncio stream:
no client library follows redirects, decodes encodings or retries behind
the referee's back, and each probe has its own deadline, so one slow guest
never holds up another's.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass

from aoe_tui.domain.untrusted import clean_text

PROBE_TIMEOUT_SECONDS = 3.0
MAX_RESPONSE_BYTES = 16 * 1024
DETAIL_LIMIT = 200


@dataclass(frozen=True)
class ProbeResult:
    healthy: bool
    status: int | None
    latency_ms: int
    detail: str


async def probe_http(
    host: str,
    port: int,
    path: str,
    expected_status: int,
    expected_body: str | None,
    timeout: float = PROBE_TIMEOUT_SECONDS,
) -> ProbeResult:
    """Healthy iff the status is `expected_status` and (when given) the trimmed body is `expected_body`."""
    started = time.monotonic()

    def done(healthy: bool, status: int | None, detail: str) -> ProbeResult:
        latency = int((time.monotonic() - started) * 1000)
        return ProbeResult(healthy, status, latency, clean_text(detail, DETAIL_LIMIT))

    try:
        raw = await asyncio.wait_for(_get(host, port, path), timeout)
    except TimeoutError:
        return done(False, None, f"timed out after {timeout:g} s")
    except OSError as error:
        return done(False, None, os.strerror(error.errno) if error.errno else str(error) or type(error).__name__)
    if not raw:
        return done(False, None, "connection closed before any response")
    status, body = _parse(raw)
    if status is None:
        return done(False, None, f"not an HTTP response: {raw[:80].decode('utf-8', 'replace')}")
    text = body.decode("utf-8", "replace")
    healthy = status == expected_status and (expected_body is None or text.strip() == expected_body)
    return done(healthy, status, text.rstrip("\r\n"))


async def _get(host: str, port: int, path: str) -> bytes:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(f"GET {path} HTTP/1.0\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        data = b""
        while len(data) < MAX_RESPONSE_BYTES:
            chunk = await reader.read(MAX_RESPONSE_BYTES - len(data))
            if not chunk:
                break
            data += chunk
        return data
    finally:
        writer.close()
        try:
            await writer.wait_closed()
        except OSError:
            pass


def _parse(raw: bytes) -> tuple[int | None, bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    parts = head.split(b"\r\n", 1)[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit() or len(parts[1]) != 3:
        return None, b""
    return int(parts[1]), body
