"""The static site: which pages the given paths make, rendered with Jinja2 and written incrementally.

`publish(paths, site)` finds every match, series, benchmark, cup and ladder under the paths, renders each
source's pages and writes `index.html`, `archive/`, `matches/<slug>/`, `series/<slug>/`,
`benchmarks/<id>/`, `cups/<id>/<season>/` and `ladder/`. The site keeps its own state in
`.aoe-publish.json`: per source its fingerprint (every file's size and modification time, the publisher's
version and the title), the pages it made and what the index and the archive list of it. Re-publishing
renders only the sources whose fingerprint changed and writes a file only when its bytes change, so an
unchanged site is left untouched; a source that is gone keeps its pages (and its rows in the archive) unless
`prune` is asked for.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import jinja2

from aoe_tui.analysis.ladder import RatedMatch, RatedSeat, ladder_rows, match_paths, rate, rated_match
from aoe_tui.analysis.series_overview import BenchmarkOverview, SeriesOverview, overview
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.secret_patterns import environment_secrets
from aoe_tui.publish.collection_pages import (
    benchmark_context,
    cup_context,
    cup_ids,
    ladder_context,
    rated_ladder,
    series_context,
)
from aoe_tui.publish.match_page import match_context, summarize
from aoe_tui.publish.text import Scrubber
from aoe_tui.store.atomic_file import write_text_atomic
from aoe_tui.store.match_export import slug as slug_of
from aoe_tui.store.match_layout import EVENTS, holds_match
from aoe_tui.store.saved_match import SavedMatch, load_match
from aoe_tui.store.series_files import folder_kind
from aoe_tui.store.series_source import BenchmarkSource, SeriesSource, bundle_kind, open_collection

SourceKind = Literal["match", "series", "benchmark", "cup", "ladder"]
STATE_FILE = ".aoe-publish.json"
STATE_SCHEMA = 1
CUP_FILE = "cup.json"
LADDER_FILE = "ladder.json"
DEFAULT_TITLE = "Agents of Empires"
HERE = Path(__file__).resolve().parent
LATEST = 12
MAX_DEPTH = 6


@dataclass(frozen=True)
class Source:
    kind: SourceKind
    path: Path

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.path}"


@dataclass
class PublishReport:
    site: Path
    written: list[str] = field(default_factory=list)  # pages (site-relative) whose bytes changed
    unchanged: int = 0  # pages rendered and found identical
    reused: int = 0  # sources not rendered at all: nothing of them changed
    pruned: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # sources that could not be read, one line each

    def lines(self) -> list[str]:
        said = [
            f"published {self.site}: {len(self.written)} files written, {self.unchanged} unchanged, "
            f"{self.reused} sources unchanged since the last publish"
        ]
        said += [f"  pruned {page}" for page in self.pruned]
        said += [f"  skipped {problem}" for problem in self.problems]
        return said


def publisher_version() -> str:
    """A digest of the publisher's code, templates and assets: a new publisher renders every page again."""
    digest = hashlib.sha256()
    for path in sorted(HERE.rglob("*")):
        if path.is_file() and path.suffix in (".py", ".j2", ".js", ".css"):
            digest.update(path.relative_to(HERE).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def fingerprint(path: Path) -> str:
    """Every file under `path` (or the file itself) by name, size and modification time."""
    digest = hashlib.sha256()
    if path.is_file():
        stat = path.stat()
        digest.update(f"{path.name}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
        return digest.hexdigest()
    for folder, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            file = Path(folder, name)
            try:
                stat = file.stat()
            except OSError:
                continue
            digest.update(f"{file.relative_to(path)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def discover(paths: list[Path]) -> tuple[list[Source], list[str]]:
    """The sources under `paths`, each once, and a line for each path that holds nothing to publish."""
    found: dict[str, Source] = {}
    problems = []
    for path in paths:
        path = Path(path).resolve()
        if not path.exists():
            raise AoeError(f"{path}: no such file or directory")
        before = len(found)
        _discover(path, found, 0)
        if len(found) == before:
            problems.append(f"{path}: no match, series, benchmark, cup or ladder in it")
    return list(found.values()), problems


def _add(found: dict[str, Source], kind: SourceKind, path: Path) -> None:
    source = Source(kind, path)
    found.setdefault(source.key, source)


def _discover(path: Path, found: dict[str, Source], depth: int) -> None:
    if path.is_file():
        if path.name == LADDER_FILE:
            _add(found, "ladder", path)
        elif path.name == CUP_FILE:
            _add(found, "cup", path.parent)
        elif path.name.endswith((".series.json", ".benchmark.json")) and (kind := bundle_kind(path)) is not None:
            _add(found, kind, path)
        elif path.name.endswith(".json") or path.name == EVENTS:
            _add(found, "match", path.parent if path.name == EVENTS else path)
        return
    if (path / CUP_FILE).is_file():
        _add(found, "cup", path)
        return
    kind = folder_kind(path)
    if kind is not None:
        _add(found, kind, path)
        return
    if holds_match(path):
        _add(found, "match", path)
        return
    if depth >= MAX_DEPTH:
        return
    for child in sorted(path.iterdir()):
        if child.name.startswith("."):
            continue
        if (
            child.is_dir()
            or child.name == LADDER_FILE
            or child.name.endswith((".match.json", ".series.json", ".benchmark.json"))
        ):
            _discover(child, found, depth + 1)


class Renderer:
    def __init__(self, title: str) -> None:
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        assets = HERE / "assets"
        self.css = (assets / "site.css").read_text()
        self.scripts = {
            "replay": (assets / "replay.js").read_text(),
            "archive": (assets / "archive.js").read_text(),
            "ready": 'document.documentElement.dataset.ready = "true";',
        }
        hashes = " ".join(
            "'sha256-" + _b64(hashlib.sha256(script.encode()).digest()) + "'" for script in self.scripts.values()
        )
        self.common = {"site_title": title, "css": self.css, "scripts": self.scripts, "script_hashes": hashes}

    def render(self, template: str, depth: int, **context: Any) -> str:
        return self.env.get_template(template).render(root="../" * depth, **self.common, **context)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


class Site:
    """One publish run into `root`: its state, its renderer, the pages it wrote."""

    def __init__(self, root: Path, title: str, report: PublishReport) -> None:
        self.root = root
        self.title = title
        self.report = report
        self.renderer = Renderer(title)
        self.scrub = Scrubber(_environment_secrets())
        self.version = publisher_version()
        self.state = self._read_state()
        self.used_slugs = {
            slug: key for key, entry in self.state["sources"].items() for slug in entry.get("slugs", {}).values()
        }

    def _read_state(self) -> dict[str, Any]:
        try:
            state = json.loads((self.root / STATE_FILE).read_text())
        except (OSError, ValueError):
            return {"schema_version": STATE_SCHEMA, "sources": {}}
        if not isinstance(state, dict) or state.get("schema_version") != STATE_SCHEMA:
            return {"schema_version": STATE_SCHEMA, "sources": {}}
        return state

    def write(self, relative: str, text: str) -> None:
        path = self.root / relative
        try:
            if path.read_text(encoding="utf-8") == text:
                self.report.unchanged += 1
                return
        except (OSError, UnicodeDecodeError):
            pass
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, text)
        self.report.written.append(relative)

    # -- slugs ------------------------------------------------------------------------------------------

    def match_slug(self, owner: str, match: SavedMatch, where: str, name: str | None = None) -> str:
        """The match's own slug, else its folder's (or file's) name; a clash with another source's match
        takes its parent folder's name in front, then a number."""
        previous = self.state["sources"].get(owner, {}).get("slugs", {}).get(where)
        if previous:
            self.used_slugs[previous] = owner
            return previous
        own = match.match_info.get("slug") if isinstance(match.match_info.get("slug"), str) else None
        source = Path(where)
        if name is None:
            name = (
                source.name.removesuffix(".match.json").removesuffix(".json")
                if source.suffix == ".json"
                else source.name
            )
        candidates = [slug_of(own or name), slug_of(f"{source.parent.name}-{own or name}")]
        for candidate in candidates:
            if self.used_slugs.get(candidate, owner) == owner and candidate not in self._taken_here:
                break
        else:
            number = 2
            while (candidate := f"{candidates[0]}-{number}") in self.used_slugs or candidate in self._taken_here:
                number += 1
        self.used_slugs[candidate] = owner
        self._taken_here.add(candidate)
        return candidate

    _taken_here: set[str]
    _rateable: set[Path]

    # -- sources ----------------------------------------------------------------------------------------

    def publish_source(self, source: Source) -> None:
        fp = hashlib.sha256(f"{fingerprint(source.path)}\0{self.version}\0{self.title}".encode()).hexdigest()
        entry = self.state["sources"].get(source.key)
        if entry and entry.get("fingerprint") == fp and all((self.root / p).exists() for p in entry.get("pages", [])):
            self.report.reused += 1
            for slug in entry.get("slugs", {}).values():
                self.used_slugs[slug] = source.key
            return
        self._taken_here = set()
        fresh: dict[str, Any] = {
            "kind": source.kind,
            "path": str(source.path),
            "pages": [],
            "slugs": {},
            "matches": [],
            "rated": [],
        }
        # the matches `aoe ladder` would rate here (set-aside attempts and undecided cup attempts left out)
        self._rateable = {path.resolve() for path in match_paths([source.path])} if source.kind != "ladder" else set()
        self._current = fresh
        self._current_key = source.key
        if entry:
            fresh["slugs"] = dict(entry.get("slugs", {}))
        {
            "match": self._publish_match_source,
            "series": self._publish_series,
            "benchmark": self._publish_benchmark,
            "cup": self._publish_cup,
            "ladder": self._publish_ladder,
        }[source.kind](source.path)
        fresh["fingerprint"] = fp
        self.state["sources"][source.key] = fresh

    def _publish_match(
        self, match: SavedMatch, where: Path, recorded: float | None = None, name: str | None = None
    ) -> str:
        key = str(where)
        slug = self.match_slug(self._current_key, match, key, name)
        self._current["slugs"][key] = slug
        context = match_context(match, slug, self.scrub)
        page = f"matches/{slug}/index.html"
        self.write(page, self.renderer.render("match.html.j2", 2, m=context))
        self._current["pages"].append(page)
        mtime = recorded if recorded is not None else _mtime(where)
        if where.resolve() in self._rateable:
            rated = rated_match(key, match.name, match.world, match.agents)
            if rated is not None:
                self._current["rated"].append(_rated_json(rated))
        summary = summarize(match, slug, mtime, self.scrub)
        if name is not None and match.name == where.name:
            summary.name = self.scrub.text(name, 300)  # a series' round-NNN, named after its series
        self._current["matches"].append(summary.to_json())
        return slug

    def _publish_match_source(self, path: Path) -> None:
        self._publish_match(load_match(path), path)

    def _rounds(self, series: SeriesSource) -> dict[int, str]:
        slugs = {}
        for round_ in series.rounds:
            if not round_.recorded:
                continue
            try:
                match = round_.load()
            except AoeError as error:
                self.report.problems.append(str(error))
                continue
            name = f"{series.name.removesuffix('.series.json')}-{round_.location.name}"
            slugs[round_.number] = self._publish_match(match, round_.location, _mtime(round_.location), name)
        return slugs

    def _collection_entry(self, folder: str, path: str, title: str, note: str) -> None:
        self._current["collection"] = {"folder": folder, "path": path, "title": title, "note": note}

    def _publish_series(self, path: Path) -> None:
        source = open_collection(path)
        if not isinstance(source, SeriesSource):
            return self._publish_benchmark(path)
        slugs = self._rounds(source)
        found = overview(path)
        assert isinstance(found, SeriesOverview)
        name = slug_of(source.name.removesuffix(".series.json"))
        context = series_context(found, source.name, slugs.get, self.scrub)
        page = f"series/{name}/index.html"
        self.write(page, self.renderer.render("series.html.j2", 2, s=context))
        self._current["pages"].append(page)
        self._collection_entry("series", name, context["title"], f"{found.decided} rounds decided · {found.arena_id}")

    def _publish_benchmark(self, path: Path) -> None:
        source = open_collection(path)
        assert isinstance(source, BenchmarkSource)
        slugs = [self._rounds(series) for _, series in source.arenas]
        found = overview(path)
        assert isinstance(found, BenchmarkOverview)
        ident = slug_of(str(source.checkpoint.get("suite_id") or source.name.removesuffix(".benchmark.json")))
        if any(
            e.get("collection", {}).get("path") == ident and k != self._current_key
            for k, e in self.state["sources"].items()
            if e.get("kind") == "benchmark"
        ):
            ident = slug_of(f"{ident}-{source.name}")
        context = benchmark_context(found, source.name, lambda arena, number: slugs[arena].get(number), self.scrub)
        page = f"benchmarks/{ident}/index.html"
        self.write(page, self.renderer.render("benchmark.html.j2", 2, b=context))
        self._current["pages"].append(page)
        self._collection_entry("benchmarks", ident, context["title"], f"{len(found.arenas)} arenas")

    def _publish_cup(self, path: Path) -> None:
        try:
            record = json.loads((path / CUP_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise AoeError(f"{path / CUP_FILE}: cannot read the cup ({error.__class__.__name__})") from None
        if not isinstance(record, dict):
            raise AoeError(f"{path / CUP_FILE}: expected a JSON object")
        matches = []
        for folder, dirs, _files in os.walk(path):
            dirs.sort()
            here = Path(folder)
            if here != path and holds_match(here):
                dirs.clear()
                try:
                    match = load_match(here)
                except AoeError as error:
                    self.report.problems.append(str(error))
                    continue
                matches.append((self._publish_match(match, here), match.name, here.relative_to(path)))
        cup_id, season = (slug_of(part) for part in cup_ids(record, path))
        context = cup_context(record, path, matches, self.scrub)
        page = f"cups/{cup_id}/{season}/index.html"
        self.write(page, self.renderer.render("cup.html.j2", 3, c=context))
        self._current["pages"].append(page)
        self._collection_entry("cups", f"{cup_id}/{season}", context["title"], f"{len(matches)} matches")

    def _publish_ladder(self, path: Path) -> None:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise AoeError(f"{path}: cannot read the ladder ({error.__class__.__name__})") from None
        self._current["ladder"] = ladder_context(record, self.scrub)

    # -- the site's own pages ---------------------------------------------------------------------------

    def _rate(self, entries: list[dict[str, Any]]) -> None:
        """The ladder of every match of the site, as `aoe ladder` rates them (openskill over the decided
        matches in start order), from each source's rated matches kept in the state: no match is read again."""
        key = hashlib.sha256("\0".join(sorted(str(entry.get("fingerprint")) for entry in entries)).encode()).hexdigest()
        if self.state.get("rated_key") == key:
            return  # no source changed, came or went: the same ladder
        self.state["rated_key"] = key
        matches = sorted(
            (_rated_from(item) for entry in entries for item in entry.get("rated", [])), key=lambda m: m.start
        )
        if not matches:
            self.state["rated"] = None
            return
        rated = rate(matches)
        report = {
            "ladder": ladder_rows(rated),
            "matches": len(matches),
            "by": "entrant",
            "history": {e.entrant: e.history for e in rated},
        }
        slugs = {where: slug for entry in entries for where, slug in entry.get("slugs", {}).items()}
        self.state["rated"] = rated_ladder(report, slugs, self.scrub)

    def finish(self, prune: bool, seen: set[str]) -> None:
        gone = [key for key in self.state["sources"] if key not in seen]
        if prune:
            for key in gone:
                for page in self.state["sources"].pop(key).get("pages", []):
                    folder = (self.root / page).parent
                    if folder.is_dir() and folder != self.root:
                        shutil.rmtree(folder)
                        self.report.pruned.append(str(Path(page).parent))
        entries = list(self.state["sources"].values())
        self._rate(entries)
        matches = sorted(
            (summary for entry in entries for summary in entry.get("matches", [])),
            key=lambda s: (-s["recorded"], s["slug"]),
        )
        collections = [entry["collection"] for entry in entries if entry.get("collection")]
        ladder = next((entry["ladder"] for entry in entries if entry.get("ladder")), None) or self.state.get("rated")
        sections = [
            (title, folder, sorted((c for c in collections if c["folder"] == folder), key=lambda c: c["path"]))
            for title, folder in (("Series", "series"), ("Benchmarks", "benchmarks"), ("Cups", "cups"))
        ]
        counts = {
            "matches": len(matches),
            "series": len(sections[0][2]),
            "benchmarks": len(sections[1][2]),
            "cups": len(sections[2][2]),
        }
        self.write(
            "index.html",
            self.renderer.render(
                "index.html.j2",
                0,
                latest=matches[:LATEST],
                sections=sections,
                counts=counts,
                ladder_top=(ladder or {}).get("rows", [])[:5],
                ladder_columns=(ladder or {}).get("columns", [])[:6],
            ),
        )
        arenas = sorted({s["arena"] for s in matches})
        self.write("archive/index.html", self.renderer.render("archive.html.j2", 1, matches=matches, arenas=arenas))
        self.write("ladder/index.html", self.renderer.render("ladder.html.j2", 1, l=ladder))
        self.write(STATE_FILE, json.dumps(self.state, indent=1, sort_keys=True) + "\n")


def _rated_json(match: RatedMatch) -> dict[str, Any]:
    return {
        "source": match.source,
        "start": [match.start[0], list(match.start[1])],
        "seats": [[seat.entrant, list(seat.config), seat.place, seat.won, seat.durable] for seat in match.seats],
    }


def _rated_from(item: dict[str, Any]) -> RatedMatch:
    seats = tuple(
        RatedSeat(entrant, (config[0], config[1], config[2]), place, won, durable)
        for entrant, config, place, won, durable in item["seats"]
    )
    return RatedMatch(item["source"], (item["start"][0], tuple(item["start"][1])), seats)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _environment_secrets() -> list[str]:
    return environment_secrets(os.environ)


_SAFE_TITLE = re.compile(r"[\x00-\x1f\x7f]")


def publish(paths: list[Path], site: Path, title: str | None = None, prune: bool = False) -> PublishReport:
    """Publish every source under `paths` into `site` (made if missing); see the module's docstring."""
    site = Path(site)
    if site.exists() and not site.is_dir():
        raise AoeError(f"{site}: not a folder")
    site.mkdir(parents=True, exist_ok=True)
    report = PublishReport(site)
    sources, report.problems = discover(paths)
    run = Site(site, _SAFE_TITLE.sub("", title or DEFAULT_TITLE), report)
    seen = set()
    for source in sources:
        seen.add(source.key)
        try:
            run.publish_source(source)
        except AoeError as error:
            report.problems.append(str(error))
    run.finish(prune, seen)
    return report
