"""The one error type users see.

Every failure a person can cause or fix (bad file, bad field, a VM that never
boots) is raised as an `AoeError` whose message is a single line naming the
file, line, field or territory. The CLI prints it without a traceback.
"""


class AoeError(Exception):
    """A user-facing failure with a one-line explanation."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()) if "\n" in str(message) else str(message))
