"""Match-clock formatting shared by the CLI and the app (M:SS, like the replay pages)."""


def format_clock(elapsed_ms: int | None) -> str:
    if elapsed_ms is None:
        return "—"
    seconds = max(elapsed_ms, 0) // 1000
    return f"{seconds // 60}:{seconds % 60:02d}"
