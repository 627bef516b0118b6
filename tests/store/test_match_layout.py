"""The match-folder layout has one owner: paths come from store.match_layout, nowhere else."""

from __future__ import annotations

import re
from pathlib import Path

from aoe_tui.store.match_layout import MatchLayout

PACKAGE = Path(__file__).resolve().parents[2] / "aoe_tui"
LAYOUT_MODULE = PACKAGE / "store" / "match_layout.py"
# A path joined by hand from one of the layout's names: `/ "territories"`, `/ "console.log"`, f"{id}-result.json" ...
HAND_BUILT = re.compile(
    r'/ *f?"(territories|agents|evidence|ssh|events\.jsonl|world\.json|arena\.json|match\.json|'
    r'ports\.json|console\.log|overlay\.qcow2|[^"]*(tool_trace\.jsonl|transcript\.json|'
    r'result\.json|usage\.json|stdout\.log|stderr\.log|instruction\.md|analysis\.json))"'
)


def test_nested_and_published_agent_files(tmp_path):
    nested, flat = MatchLayout(tmp_path), MatchLayout(tmp_path, flat=True)
    assert nested.agent("a").tool_trace == tmp_path / "agents" / "a" / "tool_trace.jsonl"
    assert nested.agent("a").live_transcript == tmp_path / "agents" / "a" / "transcript.live.json"
    assert flat.agent("a").transcript == tmp_path / "a-transcript.json"
    assert flat.agent("a").live_transcript == tmp_path / "a-transcript.live.json"
    assert MatchLayout.of_agent_directory(nested.agent_directory("a")) == nested
    assert nested.territory("t").console_log == tmp_path / "territories" / "t" / "console.log"
    assert nested.evidence("t", "m") == tmp_path / "evidence" / "t" / "m.json"
    assert nested.ssh_directory("t") == tmp_path / "ssh" / "t"


def test_published_or_nested_follows_the_agents_folder(tmp_path):
    assert MatchLayout.published_or_nested(tmp_path).flat
    (tmp_path / "agents").mkdir()
    assert not MatchLayout.published_or_nested(tmp_path).flat


def test_no_module_but_the_layout_joins_match_paths_by_hand():
    # A manual VM's folder (`<cache>/vms/NAME/`, runtime.manual_vm) is not a match: its key folder is its own.
    found = [
        f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != LAYOUT_MODULE
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if HAND_BUILT.search(line) and "vm_dir(" not in line
    ]
    assert found == []


def test_the_guard_sees_a_hand_built_path():
    assert HAND_BUILT.search('console = match_dir / "territories" / tid / "console.log"')
    assert HAND_BUILT.search('return directory / f"{agent_id}-result.json"')
