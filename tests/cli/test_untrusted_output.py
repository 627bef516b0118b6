"""`aoe info` and `aoe inspect` over a crafted match: no control character reaches the terminal, JSON stays exact."""

import json

from aoe_tui.cli.main import main
from aoe_tui.store.saved_match import load_match
from tests.app.hostile_match import DETAIL, ESCAPES, hostile_match


def _raw_controls(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]


def test_inspect_and_info_print_no_control_characters(tmp_path, capsys):
    match_dir = hostile_match(tmp_path)
    sequence = next(
        e.sequence for e in load_match(match_dir).events if (getattr(e, "detail", None) or "").startswith(DETAIL)
    )
    assert main(["inspect", str(match_dir), str(sequence)]) == 0
    text = capsys.readouterr().out
    assert DETAIL in text and not _raw_controls(text)
    assert main(["inspect", str(match_dir), str(sequence), "--json"]) == 0
    out = capsys.readouterr().out
    assert not _raw_controls(out) and json.loads(out)["detail"] == DETAIL + ESCAPES
    assert main(["info", str(match_dir)]) == 0
    assert not _raw_controls(capsys.readouterr().out)
