"""`agents/<id>/model_calls.jsonl`: every exchange of an agent with its model, as the gateway saw it.

One line per exchange: the request, the answer (a stream reassembled into the
document it stands for), the usage read from it and the tool calls the model
asked for. Every string is bounded and passes the export's redactor (the
provider key and any secret shape), so the record is safe to read in the app.
Reasoning stays in it: the file is private to the match, and the exports
leave reasoning out.

The gateway holds the file open and appends; the agent's folder is the
adapter's to write, so on close the record is put back from the referee's own
descriptor (whatever the adapter did to the name meanwhile).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from aoe_tui.domain.secret_patterns import SECRET_SHAPES, Redactor
from aoe_tui.domain.untrusted import clean_value


class ModelCallLog:
    def __init__(self, path: Path, secrets: list[str | None], field_chars: int, record_bytes: int) -> None:
        self.path = path
        self._secrets = secrets
        self._field_chars = field_chars
        self._record_bytes = record_bytes
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)

    def append(self, record: dict[str, Any]) -> None:
        """One line. Most records are small and hold nothing secret-shaped: one serialisation and one scan each.
        Any other is bounded string by string and redacted (the export's redactor), and its request left out
        when the whole is still over `record_bytes`."""
        if self._fd < 0:
            return
        text = _line(record)
        if len(text) > self._record_bytes or self._may_hold_secret(text):
            safe = Redactor(self._secrets).value(clean_value(record, self._field_chars))
            text = _line(safe)
            if len(text) > self._record_bytes:
                text = _line({**safe, "request": {"omitted": f"the request is over {self._record_bytes} bytes"}})
        os.write(self._fd, (text + "\n").encode())

    def _may_hold_secret(self, text: str) -> bool:
        return any(secret in text for secret in self._secrets if secret) or any(
            shape.search(text) for shape in SECRET_SHAPES.values()
        )

    def close(self) -> None:
        """Put the record back under its name from the referee's own descriptor, then let it go."""
        if self._fd < 0:
            return
        fd, self._fd = self._fd, -1
        try:
            size = os.fstat(fd).st_size
            content = os.pread(fd, size, 0) if size else b""
            temporary = self.path.with_name(f".{self.path.name}.referee")
            temporary.unlink(missing_ok=True)
            temporary.write_bytes(content)
            os.replace(temporary, self.path)
        except OSError:
            pass  # the record already written stays where it was
        finally:
            os.close(fd)


def _line(record: dict[str, Any]) -> str:
    """JSON escapes every control character, so a line holds no escape sequence whatever the model said."""
    return json.dumps(record, ensure_ascii=False, sort_keys=True, default=str)
