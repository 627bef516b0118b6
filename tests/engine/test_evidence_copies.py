"""Evidence copies are written off the loop, in order, and the referee can wait for them."""

import asyncio
import json

from aoe_tui.engine import evidence_copies

from aoe_tui.engine.evidence_copies import EvidenceCopies
from aoe_tui.store.match_layout import MatchLayout
from aoe_tui.store.rewrite_file import rewrite_in_place


async def test_the_last_pass_of_a_milestone_wins_and_written_waits_for_every_copy(tmp_path):
    layout = MatchLayout(tmp_path)
    copies = EvidenceCopies(layout, lambda task: None)
    copies.write("t-1", "m", {"value": "first, and longer than the second"})
    copies.write("t-2", "m", {"value": 2})
    copies.write("t-1", "m", {"value": "second"})
    await copies.written()
    assert json.loads(layout.evidence("t-1", "m").read_text()) == {"value": "second"}
    assert json.loads(layout.evidence("t-2", "m").read_text()) == {"value": 2}


async def test_copies_of_one_moment_go_to_the_thread_together_and_a_waiter_does_not_wait_for_the_moment(
    tmp_path, monkeypatch
):
    handed_off: list[int] = []
    write_all = evidence_copies._write_all
    monkeypatch.setattr(
        evidence_copies, "_write_all", lambda copies: (handed_off.append(len(copies)), write_all(copies))
    )
    monkeypatch.setattr(evidence_copies, "COPY_GATHER_SECONDS", 0.3)
    layout = MatchLayout(tmp_path)
    copies = EvidenceCopies(layout, lambda task: None)
    copies.write("t-1", "a", {"value": 1})
    await asyncio.sleep(0.05)  # a writer that does not gather has handed the first over by now
    copies.write("t-2", "b", {"value": 2})
    await asyncio.sleep(0.5)
    assert handed_off == [2]
    monkeypatch.setattr(evidence_copies, "COPY_GATHER_SECONDS", 60)
    copies.write("t-1", "c", {"value": 3})
    await asyncio.wait_for(copies.written(), 10)  # written() cuts the gathering short
    assert json.loads(layout.evidence("t-1", "c").read_text()) == {"value": 3}


async def test_a_copy_that_cannot_be_written_is_told_to_its_done_callback_and_written_returns(tmp_path):
    (tmp_path / "evidence").write_text("a file where the folder should be")
    failures: list[BaseException | None] = []
    copies = EvidenceCopies(MatchLayout(tmp_path), lambda task: failures.append(task.exception()))
    copies.write("t", "m", {})
    await copies.written()
    await asyncio.sleep(0)  # done callbacks run soon after the task ends
    assert len(failures) == 1 and isinstance(failures[0], OSError)


def test_rewriting_in_place_leaves_exactly_the_new_text(tmp_path):
    path = tmp_path / "previous-evidence.json"
    rewrite_in_place(path, "a longer first text")
    rewrite_in_place(path, "short")
    assert path.read_text() == "short"
