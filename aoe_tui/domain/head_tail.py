"""A bounded record of a byte stream: its head, its tail and how much was in between.

Output from a guest or a verifier can be endless (`yes`, a flooding service),
so nothing that reads it may keep it whole. Readers feed chunks as they
arrive; memory stays at `keep` bytes however much flows through, and `total`
lets them stop the stream at a hard cap. The head usually says what started,
the tail how it ended: both are kept, the middle is counted.
"""

from __future__ import annotations

DEFAULT_KEEP = 16_000


class HeadTail:
    def __init__(self, keep: int = DEFAULT_KEEP) -> None:
        self.head_limit = keep - keep // 2
        self.tail_limit = keep // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk[-self.tail_limit :] if self.tail_limit else b""
            del self.tail[: max(len(self.tail) - self.tail_limit, 0)]

    @property
    def omitted(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    @property
    def truncated(self) -> bool:
        return self.omitted > 0

    def text(self) -> str:
        """The kept bytes as text, with a marker where the middle was dropped."""
        head = self.head.decode("utf-8", errors="replace")
        if not self.truncated:
            return head + self.tail.decode("utf-8", errors="replace")
        return f"{head}\n[... {self.omitted} bytes omitted ...]\n{self.tail.decode('utf-8', errors='replace')}"
