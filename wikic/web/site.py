"""`wikic site OUT`: the viewer's pages as a static site (relative links: it works from file://
and any static host; search and graph need no server). Incremental: each file's inputs are
hashed into a key kept in the manifest (manifest.py), so a page whose text, links, backlinks
and findings are unchanged is not rendered again, and a file whose bytes are unchanged is not
rewritten; a page whose file's stat is unchanged is not even read (facts.py), and only the
pages the change can reach have their key computed again. Lint's findings come from the
build's, kept per page in the state (only what changed since is checked: lint/cache.py), and
a page whose findings changed is rendered again. Only files the manifest lists are ever
removed."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from wikic import __version__
from wikic.errors import UsageError
from wikic.hashing import bytes_hash, digest, json_digest
from wikic.project import Project
from wikic.web.facts import Changes, Facts, affected, everything, read_known, same_names
from wikic.web.keys import graph_key, health_key, page_key
from wikic.web.manifest import (
    FORMAT,
    MANIFEST,
    PIECES,
    dump,
    entries_path,
    piece,
    read_manifest,
    shard_path,
    shards,
)
from wikic.web.model import HOME, Model, is_within, lint_findings, page_path, source_path
from wikic.web.pieces import piece_path, search_outputs
from wikic.web.views import (
    TEMPLATES,
    Mode,
    graph_view,
    health_view,
    home_view,
    page_view,
    search_view,
    source_view,
)
from wikic.wiki.read import PageStats, gc_paused, read_page

WEB = Path(__file__).parent
ASSETS = WEB / "assets"
STATIC = Mode()


@dataclass
class SiteReport:
    out: str
    pages: int
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    rendered: int = 0  # outputs whose inputs changed (rendered again; written only if their bytes did)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _code_version() -> str:
    """wikic's version, the viewer's own code, templates and assets: a change to any of them
    reads and renders every page again (a new wikic may render them differently)."""
    files = sorted([*WEB.glob("*.py"), *TEMPLATES.glob("*.html"), *ASSETS.iterdir()])
    return digest(__version__.encode() + b"".join(p.name.encode() + p.read_bytes() for p in files), 16)


def check_out(project: Project, out: Path) -> None:
    """OUT is a new or empty folder, or a site this command wrote; never inside the project's
    own folders, whose files wikic must not touch or mix with its output."""
    for folder in (project.sources_dir, project.wiki_dir, project.state_dir):
        if is_within(out, folder):
            raise UsageError(f"{out} is inside {folder.name}/; export the site to a folder outside it")
    if out.resolve() == project.root.resolve():
        raise UsageError("the site cannot be written over the project; give a folder such as `site`")
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} is a file; give a folder for the site")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise UsageError(
            f"{out} is not empty and holds no {MANIFEST}: it is not a site wikic wrote; "
            "choose an empty or new folder"
        )


def export(project: Project, out: Path, lint: bool = True, graph_limit: int = 500) -> SiteReport:
    started = time.monotonic()
    check_out(project, out)
    # Many small objects and no cycles: the collector's passes cost a fifth. Paused around the
    # whole export, whose objects are freed when it returns, not only around their making: the
    # first collection after it then has only the report to look at, not a million objects.
    with gc_paused():
        report = _export(project, out, lint, graph_limit)
    report.seconds = round(time.monotonic() - started, 3)
    return report


def _export(project: Project, out: Path, lint: bool, graph_limit: int) -> SiteReport:
    started_ns = time.time_ns()
    old = read_manifest(out, page_path)
    site = _prepare(project, out, old, lint, graph_limit)
    outputs = _outputs(site)
    report = SiteReport(str(out), len(site.model.wiki.pages))
    new = _write_outputs(out, site, outputs, report)
    for rel in sorted(set(old["files"]) - set(new)):
        if _remove(out, rel):
            report.removed.append(rel)
    facts, known = site.facts, old["pages"]  # (all shards are written again if the code changed)
    considered = [rel for rel, _, _ in outputs]
    everything = site.changes.todo == set(facts)
    dirty = set(range(PIECES)) if everything else _dirty_shards(site, known, new, considered)
    for rel, data in shards(facts, new, page_path, dirty, site.model.resolved, site.linted).items():
        _write(out / rel, data)
    for i, entries in site.pieces.items():
        _write(out / entries_path(i), dump(entries))
    manifest = {
        "format": FORMAT,
        "context": site.context,
        "code": site.version,
        "started_ns": started_ns,
        "index": site.index,
        "sources": sorted(site.model.sources),
        "source_stats": {path: [f.size, f.mtime_ns] for path, f in site.model.sources.items()},
        "files": {rel: record for rel, record in new.items() if not rel.startswith("p/")},  # pages: shards
    }
    _write(out / MANIFEST, dump(manifest))
    return report


def _prepare(project: Project, out: Path, old: dict[str, Any], lint: bool, graph_limit: int) -> Site:
    """The model, from the pages' facts where their files did not change, and what changed."""
    version = _code_version()
    known: dict[str, Facts] = old["pages"] if old.get("code") == version else {}  # facts it made
    taken = PageStats.take(project.wiki_dir)
    wiki, facts = read_known(project, known, old["started_ns"], taken)
    stubs: set[str] = set()
    targets, cites, resolved = {}, {}, {}
    for slug, found in facts.items():
        if found is known.get(slug):
            stubs.add(slug)
            targets[slug], cites[slug], resolved[slug] = found["targets"], found["cites"], found["res"]
    same = same_names(known, facts)  # then every stub's links resolve as they did
    model = Model.load(
        project, lint=False, wiki=wiki, targets=targets, cites=cites, resolved=resolved if same else None
    )
    if lint:  # the build's closing lint, kept per page: only what changed since is checked
        model.findings = lint_findings(project, store=True, wiki_stats=taken, schema=model.schema)
    linted = _findings_digests(model)
    context = json_digest([version, model.title, lint, graph_limit])
    index = wiki.index.hash if wiki.index else ""
    if old.get("context") == context:
        moved = set(old.get("sources", [])) ^ set(model.sources)
        changes = affected(known, facts, model.resolved, model, moved, set(facts) - stubs if same else None)
        changes.names = changes.names or bool(moved) or old.get("index") != index
        before = {s for s, f in known.items() if f.get("lint") is not None}
        changes.todo |= {s for s in before | set(linted) if known.get(s, {}).get("lint") != linted.get(s)}
    else:
        changes = everything(facts)
    present = _present(out)
    stats = old.get("source_stats")
    stats = stats if isinstance(stats, dict) else {}
    return Site(
        model,
        version,
        graph_limit,
        old["files"],
        facts,
        changes,
        stubs,
        present,
        context,
        index,
        out,
        linted,
        stats,
        same,
    )


def _findings_digests(model: Model) -> dict[str, str]:
    """slug -> a digest of its findings, for the pages that have some (kept in their facts: a
    page whose findings changed is rendered again)."""
    found: dict[str, str] = {}
    for rel, findings in (model.findings or {}).items():
        page = model.wiki.pages.get(rel.rsplit("/", 1)[-1].removesuffix(".md"))
        if findings and page is not None and page.rel == rel:
            found[page.slug] = json_digest([f.to_json() for f in findings])
    return found


def _dirty_shards(
    site: Site, known: dict[str, Facts], new: dict[str, dict[str, str]], considered: list[str]
) -> set[int]:
    """The shards whose pages' facts or HTML records changed (or that are missing). A page
    whose findings changed is rendered again: its record, so its shard, changes with them.
    `considered`: the outputs that were not kept as they were (only their records can differ)."""
    facts, res = site.facts, site.model.resolved
    dirty = {i for i in range(PIECES) if shard_path(i) not in site.present}
    # While no page's names changed, a page not read again keeps what its links resolved to.
    check = set(facts) - site.stubs if site.same_names else facts
    dirty |= {piece(s) for s in check if s not in site.stubs or known[s].get("res") != res[s]}
    dirty |= {piece(s) for s in set(known) - set(facts)}
    pages = (rel for rel in considered if rel.startswith("p/"))
    dirty |= {piece(rel[2:-5]) for rel in pages if new.get(rel) is not site.files.get(rel)}
    return dirty


def _present(out: Path) -> set[str]:
    """The files under OUT, by name (one directory scan, not a stat per file)."""
    found: set[str] = set()
    for folder, _, names in os.walk(out):
        prefix = Path(folder).relative_to(out).as_posix()
        found.update(names if prefix == "." else (f"{prefix}/{n}" for n in names))
    return found


def _write_outputs(
    out: Path, site: Site, outputs: list[Output], report: SiteReport
) -> dict[str, dict[str, str]]:
    """Render what changed; write what differs from the file there."""
    new = dict(site.kept)
    for rel, key, make in outputs:
        before = site.files.get(rel)
        there = rel in site.present
        if before is not None and before.get("key") == key and there:
            new[rel] = before
            continue
        data = make()
        report.rendered += 1
        new[rel] = {"key": key, "hash": bytes_hash(data)}
        if before is None or before.get("hash") != new[rel]["hash"] or not there:
            _write(out / rel, data)
            report.written.append(rel)
    return new


@dataclass
class Site:
    """One export: the model, what the last export left (its files' keys, the pages' facts),
    and what changed since (`changes.todo`: the pages that may render differently)."""

    model: Model
    version: str
    graph_limit: int
    files: dict[str, dict[str, str]]
    facts: dict[str, Facts]
    changes: Changes
    stubs: set[str]  # pages known from their facts, not read
    present: set[str]  # the files under OUT now
    context: str  # the key of what every file depends on: templates, the wiki's title, options
    index: str  # the hash of index.md
    out: Path
    linted: dict[str, str]  # slug -> a digest of its lint findings, for the pages that have some
    source_stats: dict[str, list[int]]  # source path -> [size, mtime_ns], as the last export saw it
    same_names: bool  # no page's names changed: a page not read again resolves its links as it did
    pieces: dict[int, dict[str, Any]] = field(default_factory=dict)  # search pieces made: entries
    kept: dict[str, dict[str, str]] = field(default_factory=dict)  # views whose record stands


Output = tuple[str, str, Callable[[], bytes]]


def _outputs(site: Site) -> list[Output]:
    """Every file of the site that may have changed: its path, the key of its inputs, how to
    make its bytes. A page or source view whose inputs cannot have changed and whose file is
    there keeps its record (`site.kept`) without an entry here."""
    model, version = site.model, site.version
    outs: list[Output] = [
        (f"assets/{p.name}", bytes_hash(p.read_bytes()), p.read_bytes) for p in sorted(ASSETS.iterdir())
    ]
    scripts = tuple(piece_path(i) for i in range(PIECES))
    outs += [
        (HOME, _home_key(site), lambda: home_view(model, STATIC).encode()),
        (
            "search.html",
            json_digest([version, scripts]),
            lambda: search_view(model, STATIC, scripts).encode(),
        ),
        ("graph.html", _graph_output_key(site), lambda: graph_view(model, STATIC, site.graph_limit).encode()),
        ("health.html", health_key(model, version), lambda: health_view(model, STATIC).encode()),
    ]
    outs += search_outputs(site)
    return outs + _page_outputs(site) + _source_outputs(site)


def _page_outputs(site: Site) -> list[Output]:
    """The pages that may render differently (`changes.todo`), or whose file is new or gone."""
    files, present, todo, kept = site.files, site.present, site.changes.todo, site.kept
    outs: list[Output] = []
    for slug in site.model.wiki.pages:
        rel = page_path(slug)
        before = files.get(rel)
        if before is not None and slug not in todo:
            if rel in present:
                kept[rel] = before
                continue
            key = before["key"]
        else:
            key = page_key(site.model, slug, site.version)
        outs.append((rel, key, _page_maker(site, slug)))
    return outs


def _source_outputs(site: Site) -> list[Output]:
    """A source's view shows the source and the pages it feeds (their titles and types): its key
    is computed again only when the graph changed (what feeds what, titles, types) or its
    file's stat did."""
    model, facts, files, present = site.model, site.facts, site.files, site.present
    wiki = model.wiki
    outs: list[Output] = []
    for path, file in model.sources.items():
        rel, stat = source_path(path), [file.size, file.mtime_ns]
        before = files.get(rel)
        if before is not None and not site.changes.graph and site.source_stats.get(path) == stat:
            if rel in present:
                site.kept[rel] = before
                continue
            key = before["key"]
        else:
            fed = sorted(
                (s, facts[s]["title"], facts[s]["type"]) for s in model.fed.get(path, []) if s in wiki.pages
            )
            key = json_digest([site.version, model.title, *stat, fed])
        outs.append((rel, key, _source_maker(model, path)))
    return outs


def _graph_output_key(site: Site) -> str:
    before = site.files.get("graph.html")
    if before is not None and not site.changes.graph:
        return before["key"]
    return json_digest([site.version, graph_key(site.model), site.graph_limit])


def _page_maker(site: Site, slug: str) -> Callable[[], bytes]:
    def make() -> bytes:
        page = site.model.wiki.pages[slug]
        if slug in site.stubs:  # known from its facts: its text is read now, to render it
            page = read_page(site.model.project.wiki_dir / f"{slug}.md", page.rel)
        return page_view(site.model, page, STATIC).encode()

    return make


def _source_maker(model: Model, path: str) -> Callable[[], bytes]:
    return lambda: source_view(model, path, STATIC).encode()


def _home_key(site: Site) -> str:
    """index.md, and what its links resolve to: not every page's text (a big index takes
    seconds to render, and most edits leave it as it was). Computed only when the index, a
    page's name or the pages changed: it lists every page."""
    before = site.files.get(HOME)
    if before is not None and not site.changes.names:
        return before["key"]
    model = site.model
    wiki = model.wiki
    pages = sorted((slug, p.title, p.type, p.aliases) for slug, p in wiki.pages.items())
    cited = [s in model.sources for s in model.cites_of(wiki.index)] if wiki.index else []
    return json_digest([site.version, model.title, wiki.index.hash if wiki.index else "", pages, cited])


def _write(path: Path, data: bytes) -> None:
    """Temporary file, then rename: a reader of the site never sees half a page. No fsync: the
    site is output that the next export can always write again."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _remove(out: Path, rel: str) -> bool:
    target = out / rel
    if ".." in Path(rel).parts or rel.startswith("/") or not is_within(target, out):
        return False  # a manifest edited by hand cannot make us delete outside the site
    with contextlib.suppress(OSError):
        target.unlink()
        return True
    return False
