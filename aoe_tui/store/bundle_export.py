"""`aoe export` of a series or benchmark: one bundle file holding the checkpoint and every round.

The writer of the bundle shape `series_source` reads: each round goes through
the same `match_export.shareable_document` as a single match (reasoning out,
secrets redacted, its own events digest), so a round read from the bundle
replays like the round folder and standings recomputed from the bundle equal
the folder's. Set-aside attempts (`round-NNN.interrupted-N`, `.unavailable-N`)
are not rounds and stay on this machine; the report names them.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from aoe_tui.domain.secret_patterns import Redactor
from aoe_tui.store.atomic_file import write_text_atomic
from aoe_tui.store.match_export import ExportReport, encode_document, left_out_files, shareable_document, slug
from aoe_tui.store.series_files import ROUND_DIR, FolderKind
from aoe_tui.store.series_source import BUNDLE_SCHEMA, BUNDLE_TYPES, BenchmarkSource, SeriesSource

BUNDLE_SUFFIX: dict[FolderKind, str] = {"series": ".series.json", "benchmark": ".benchmark.json"}


def default_bundle_output(source: SeriesSource | BenchmarkSource) -> Path:
    return Path(f"{slug(source.name)}{BUNDLE_SUFFIX[_kind(source)]}")


def export_bundle(
    source: SeriesSource | BenchmarkSource, output: Path, known_secrets: Iterable[str | None] = ()
) -> ExportReport:
    known = list(known_secrets)
    report = ExportReport(output=output)
    document: dict[str, Any] = {
        "artifact_type": BUNDLE_TYPES[_kind(source)],
        "schema_version": BUNDLE_SCHEMA,
        "name": source.name,
    }
    if isinstance(source, SeriesSource):
        document.update(_series_part(source, known, report, prefix=""))
    else:
        document["benchmark"] = _redacted(source.checkpoint or None, known, report, "benchmark")
        document["arenas"] = {
            series.location.name: _series_part(series, known, report, prefix=f"{series.location.name}/")
            for _, series in source.arenas
        }
    write_text_atomic(output, encode_document(document))
    return report


def _kind(source: SeriesSource | BenchmarkSource) -> FolderKind:
    return "series" if isinstance(source, SeriesSource) else "benchmark"


def _series_part(series: SeriesSource, known: list[str | None], report: ExportReport, prefix: str) -> dict[str, Any]:
    rounds = {}
    for round_ in series.rounds:
        name = round_.location.name
        if not round_.recorded:
            report.left_out.append((f"{prefix}{name}/", "no match record in it (the round never started)"))
            continue
        match = round_.load()
        shared, part = shareable_document(match, known)
        rounds[name] = shared
        report.redacted += [(f"{prefix}{name} {where}", kind, count) for where, kind, count in part.redacted]
        report.reasoning_removed += part.reasoning_removed
        report.left_out += [(f"{prefix}{name}/{file}", why) for file, why in left_out_files(match)]
    report.left_out += [
        (f"{prefix}{path.name}/", "a set-aside attempt, not a round: stays on this machine")
        for path in _set_aside(series.location)
    ]
    checkpoint = _redacted(series.checkpoint or None, known, report, f"{prefix}series.json")
    return {"series": checkpoint, "rounds": rounds}


def _set_aside(location: Path) -> list[Path]:
    """`round-NNN.<why>-N` folders beside the rounds (only a series folder on disk has them)."""
    if not location.is_dir():
        return []
    return sorted(
        p for p in location.iterdir() if p.is_dir() and ROUND_DIR.match(p.name.split(".")[0]) and "." in p.name
    )


def _redacted(value: Any, known: list[str | None], report: ExportReport, where: str) -> Any:
    redactor = Redactor(known)
    clean = redactor.value(value)
    report.redacted += [(where, kind, count) for kind, count in sorted(redactor.counts.items())]
    return clean
