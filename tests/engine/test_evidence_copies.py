"""Evidence copies are written off the loop, in order, and the referee can wait for them."""

import json

import pytest

from aoe_tui.engine.evidence_copies import EvidenceCopies
from aoe_tui.store.match_layout import MatchLayout
from aoe_tui.store.rewrite_file import rewrite_in_place


async def test_the_last_pass_of_a_milestone_wins_and_written_waits_for_every_copy(tmp_path):
    layout = MatchLayout(tmp_path)
    copies = EvidenceCopies(layout)
    copies.write("t-1", "m", {"value": "first, and longer than the second"})
    copies.write("t-2", "m", {"value": 2})
    copies.write("t-1", "m", {"value": "second"})
    await copies.written()
    assert json.loads(layout.evidence("t-1", "m").read_text()) == {"value": "second"}
    assert json.loads(layout.evidence("t-2", "m").read_text()) == {"value": 2}


async def test_a_copy_that_cannot_be_written_is_reported_by_written(tmp_path):
    (tmp_path / "evidence").write_text("a file where the folder should be")
    copies = EvidenceCopies(MatchLayout(tmp_path))
    copies.write("t", "m", {})
    with pytest.raises(OSError):
        await copies.written()


def test_rewriting_in_place_leaves_exactly_the_new_text(tmp_path):
    path = tmp_path / "previous-evidence.json"
    rewrite_in_place(path, "a longer first text")
    rewrite_in_place(path, "short")
    assert path.read_text() == "short"
