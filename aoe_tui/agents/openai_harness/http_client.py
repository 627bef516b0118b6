"""A minimal HTTP/1.1 JSON POST on asyncio streams.

Why not http.client in a thread: a blocking request cannot be cancelled, and
the controller's SIGTERM must stop the harness at once, even in the middle of
a five-minute reasoning call. asyncio streams are cancellable at every await.
No new dependency either; this is all the protocol a chat-completions call needs.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

_MAX_HEADER_LINES = 200


class HttpFailure(Exception):
    """No HTTP response at all: refused, reset, TLS failure, or no answer in time."""


@dataclass(frozen=True)
class HttpResponse:
    status: int
    headers: dict[str, str]  # lower-cased names
    body: bytes


async def post_json(url: str, payload: Any, headers: dict[str, str], timeout: float) -> HttpResponse:
    try:
        return await asyncio.wait_for(_post(url, payload, headers), timeout)
    except asyncio.TimeoutError:
        raise HttpFailure(f"no response within {timeout:g} s") from None
    except (OSError, ssl.SSLError, asyncio.IncompleteReadError, ValueError) as error:
        raise HttpFailure(" ".join((str(error) or type(error).__name__).split())) from None


async def _post(url: str, payload: Any, headers: dict[str, str]) -> HttpResponse:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"unsupported URL {url!r} (need http:// or https://)")
    secure = parts.scheme == "https"
    port = parts.port or (443 if secure else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    body = json.dumps(payload).encode("utf-8")
    host_header = parts.hostname if parts.port is None else f"{parts.hostname}:{parts.port}"
    lines = [f"POST {target} HTTP/1.1", f"Host: {host_header}", "Content-Type: application/json",
             "Accept: application/json", "Accept-Encoding: identity", "Connection: close",
             f"Content-Length: {len(body)}", *(f"{name}: {value}" for name, value in headers.items())]
    context = ssl.create_default_context() if secure else None
    reader, writer = await asyncio.open_connection(parts.hostname, port, ssl=context)
    try:
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        await writer.drain()
        return await _read_response(reader)
    finally:
        writer.close()


async def _read_response(reader: asyncio.StreamReader) -> HttpResponse:
    status_line = (await reader.readline()).decode("latin-1").strip()
    fields = status_line.split(" ", 2)
    if len(fields) < 2 or not fields[0].startswith("HTTP/") or not fields[1].isdigit():
        raise ValueError(f"not an HTTP response: {status_line[:80]!r}")
    headers: dict[str, str] = {}
    for _ in range(_MAX_HEADER_LINES):
        line = (await reader.readline()).decode("latin-1").strip()
        if not line:
            break
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = await _read_chunked(reader)
    elif "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    else:
        body = await reader.read()
    return HttpResponse(int(fields[1]), headers, body)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    chunks = []
    while True:
        size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
        if size == 0:
            await reader.readline()  # trailer end (trailers themselves are not used by these APIs)
            return b"".join(chunks)
        chunks.append(await reader.readexactly(size))
        await reader.readline()
