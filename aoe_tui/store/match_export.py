"""`aoe export --format match`: any saved match as one shareable `agents-of-empires.match` file.

The writer beside the reader (`saved_match.match_from_document`): whatever
shape a match was saved in, what the loader made of it is written as the
single-file shape of SPEC §5.3, plus what a replay needs that §5.3 lacks
(the agents' transcripts, live tool traces, results and model exchanges as the
referee's gateway recorded them) and the events' digest (`match_integrity`). The file is canonical JSON (keys sorted, two-space
indent), so exporting an export gives back the same bytes.

Nothing private leaves with it: the agents' private reasoning is taken out of
the transcripts and the model exchanges, every string passes the secret redactor
(`domain.secret_patterns`), and files that are not part of a match record
(the SSH key folder, consoles, disks, logs) are never read into it. The
report says what was left out and what was redacted, never the secret itself.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aoe_tui.domain.secret_patterns import SECRET_SHAPES, Redactor
from aoe_tui.domain.transcript import without_private_reasoning
from aoe_tui.store.atomic_file import write_text_atomic
from aoe_tui.store.match_integrity import EVENTS_DIGEST, INTEGRITY, events_digest
from aoe_tui.store.match_layout import MatchLayout
from aoe_tui.store.model_calls import public_record, request_without_history
from aoe_tui.store.saved_match import SINGLE_FILE_TYPE, SavedMatch

MATCH_SUFFIX = ".match.json"
PER_AGENT_SECTIONS = ("analyses", "transcripts", "live_tool_traces", "results", "model_calls")
KEY_FOLDER = "ssh"
_PRIVATE_KEY_NAME = re.compile(r"^(id_[a-z0-9_]+|.*\.(pem|key))$")


@dataclass
class ExportReport:
    """What one export wrote and what it kept back, for the person sharing it."""

    output: Path | None = None  # set once written
    left_out: list[tuple[str, str]] = field(default_factory=list)  # (file or folder, why)
    redacted: list[tuple[str, str, int]] = field(default_factory=list)  # (where, kind of secret, how many)
    reasoning_removed: int = 0

    def lines(self) -> list[str]:
        said = [f"left out {name}: {why}" for name, why in self.left_out]
        said += [
            f"redacted {count} {kind}{'s' if count != 1 else ''} in {where}" for where, kind, count in self.redacted
        ]
        if self.reasoning_removed:
            said.append(
                f"left out {self.reasoning_removed} private reasoning block(s) of the transcripts and model calls"
            )
        return said


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "match"


def match_document(match: SavedMatch) -> dict[str, Any]:
    """The match as a §5.3 single-file object, exactly as loaded (nothing taken out yet)."""
    info = match.match_info
    fog = match.manifest is not None and match.manifest.fog_of_war is not None
    return {
        "artifact_type": SINGLE_FILE_TYPE,
        "schema_version": 1,
        "match": {
            **info,
            "name": match.name,
            "slug": info.get("slug") or slug(match.name),
            "listed": info.get("listed", True),
            "fog_of_war": info.get("fog_of_war", fog),
        },
        "arena": match.manifest.to_json() if match.manifest is not None else None,
        "events": [event.to_json() for event in match.events],
        "world": (match.recorded_world or match.world).to_json(),
        "analyses": {agent: a.model_dump(mode="json", exclude_unset=True) for agent, a in match.analyses.items()},
        "provenance": match.provenance,
        "visualization": match.visualization.model_dump(mode="json", by_alias=True) if match.visualization else None,
        "transcripts": {
            agent: transcript.model_dump(mode="json", exclude_unset=True)
            for agent, transcript in match.transcripts.items()
        },
        "live_tool_traces": {
            agent: [entry.model_dump(mode="json", exclude_unset=True) for entry in trace]
            for agent, trace in match.live_tool_traces.items()
        },
        "results": match.results,
        **({"model_calls": model_calls} if (model_calls := _model_calls(match)) else {}),
    }


def _model_calls(match: SavedMatch) -> dict[str, list[dict[str, Any]]]:
    """The agents' model exchanges (the referee's gateway's record), for those that have any."""
    return {agent: records for agent in sorted(match.agents) if (records := match.agent_model_calls(agent))}


def shareable_model_call(record: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """A model exchange as it may leave the match: no private reasoning (`public_record`), and its request
    cut to what it added to the conversation (the history before the model's last turn is in the earlier
    records already: a long match's requests would otherwise repeat it, growing, every exchange)."""
    public, removed = public_record(record)
    request = public.get("request")
    if isinstance(request, dict):
        public["request"] = request_without_history(str(public.get("protocol") or ""), request)
    return public, removed


def shareable_document(
    match: SavedMatch, known_secrets: Iterable[str | None] = ()
) -> tuple[dict[str, Any], ExportReport]:
    """`match_document` without private reasoning and secrets, sealed with the events' digest."""
    document = match_document(match)
    report = ExportReport()
    for transcript in document["transcripts"].values():
        if isinstance(transcript.get("messages"), list):
            transcript["messages"], removed = without_private_reasoning(transcript["messages"])
            report.reasoning_removed += removed
    for agent, records in document.get("model_calls", {}).items():
        shared = [shareable_model_call(record) for record in records]
        document["model_calls"][agent] = [record for record, _ in shared]
        report.reasoning_removed += sum(removed for _, removed in shared)
    known = list(known_secrets)
    for key in list(document):
        parts = document[key].items() if key in PER_AGENT_SECTIONS else [(None, document[key])]
        for agent, value in list(parts):
            redactor = Redactor(known)
            clean = redactor.value(value)
            if agent is None:
                document[key] = clean
            else:
                document[key][agent] = clean
            where = key if agent is None else f"{key}.{agent}"
            report.redacted += [(where, kind, count) for kind, count in sorted(redactor.counts.items())]
    document[INTEGRITY] = {EVENTS_DIGEST: events_digest(document["events"])}
    return document, report


def encode_document(document: dict[str, Any]) -> str:
    """Canonical text of an export: the same document always gives the same bytes."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def default_output(match: SavedMatch) -> Path:
    return Path(f"{slug(match.name)}{MATCH_SUFFIX}")


def export_match(match: SavedMatch, output: Path, known_secrets: Iterable[str | None] = ()) -> ExportReport:
    document, report = shareable_document(match, known_secrets)
    write_text_atomic(output, encode_document(document))
    report.output = output
    report.left_out = left_out_files(match)
    return report


def left_out_files(match: SavedMatch) -> list[tuple[str, str]]:
    """Files of the match's folder that are not in the export, grouped by top folder and reason."""
    if match.directory is None:
        return [(name, f"damaged ({reason})") for name, reason in match.skipped_files()]
    root = match.directory
    exported = _exported_files(match)
    damaged = dict(match.skipped_files())
    groups: dict[tuple[str, str], int] = {}
    for path in _files_under(root):
        relative = path.relative_to(root)
        if path in exported:
            continue
        why = _why_left_out(path, relative, damaged)
        top = relative.parts[0] + "/" if len(relative.parts) > 1 else relative.name
        if why.startswith(("private key", "damaged")):
            top = str(relative)  # named one by one: the user should see exactly which
        groups[(top, why)] = groups.get((top, why), 0) + 1
    return [
        (f"{top} ({count} files)" if top.endswith("/") and count != 1 else top, why)
        for (top, why), count in sorted(groups.items())
    ]


def _exported_files(match: SavedMatch) -> set[Path]:
    assert match.directory is not None
    layout = MatchLayout.published_or_nested(match.directory)
    files = {layout.events, layout.world, layout.arena, layout.provenance}
    for agent in match.agents:
        paths = layout.agent(agent)
        files |= {paths.transcript, paths.live_transcript, paths.result, paths.analysis, paths.tool_trace}
        files.add(paths.model_calls)
    skipped = {s.path for s in match.skipped}
    return {path for path in files if path.is_file() and not path.is_symlink() and path not in skipped}


def _files_under(root: Path) -> list[Path]:
    """Every file and symbolic link below `root`; links are listed, never followed."""
    found = []
    for folder, directories, names in os.walk(root, followlinks=False):
        base = Path(folder)
        found += [base / name for name in names]
        found += [base / name for name in directories if (base / name).is_symlink()]
    return sorted(found)


def _why_left_out(path: Path, relative: Path, damaged: dict[str, str]) -> str:
    if str(relative) in damaged:
        return f"damaged ({damaged[str(relative)]})"
    if relative.parts[0] == KEY_FOLDER:
        return "the match's SSH keys: never exported"
    if path.is_symlink():
        return "a symbolic link: never followed"
    if _PRIVATE_KEY_NAME.match(path.name) or _holds_private_key(path):
        return "private key: never exported"
    return "not part of a match record"


def _holds_private_key(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return False
    return SECRET_SHAPES["private key"].search(head) is not None
