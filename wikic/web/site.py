"""`wikic site OUT`: the viewer's pages as a static site (relative links: it works from file://
and any static host; search and graph need no server). Incremental: each file's inputs are
hashed into a key kept in OUT/.wikic-site.json, so a page whose text, links, backlinks and
findings are unchanged is not rendered again, and a file whose bytes are unchanged is not
rewritten. Only files the manifest lists are ever removed."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from wikic.errors import UsageError
from wikic.hashing import bytes_hash, digest, json_digest
from wikic.project import Project
from wikic.web.model import HOME, Model, is_within, page_path, source_path
from wikic.web.views import (
    TEMPLATES,
    Mode,
    graph_view,
    health_view,
    home_view,
    page_view,
    search_data,
    search_view,
    source_view,
)

MANIFEST = ".wikic-site.json"
ASSETS = Path(__file__).parent / "assets"
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
    """Templates and assets: a change to either renders every page again."""
    files = sorted([*TEMPLATES.glob("*.html"), *ASSETS.iterdir()])
    return digest(b"".join(p.name.encode() + p.read_bytes() for p in files), 16)


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
    model = Model.load(project, lint=lint)
    old = _read_manifest(out)
    version = _code_version()
    report = SiteReport(str(out), len(model.wiki.pages))
    new: dict[str, dict[str, str]] = {}
    for rel, key, make in _outputs(model, version, graph_limit):
        before = old.get(rel)
        if before is not None and before.get("key") == key and (out / rel).is_file():
            new[rel] = before
            continue
        data = make()
        report.rendered += 1
        new[rel] = {"key": key, "hash": bytes_hash(data)}
        if before is None or before.get("hash") != new[rel]["hash"] or not (out / rel).is_file():
            _write(out / rel, data)
            report.written.append(rel)
    for rel in sorted(set(old) - set(new)):
        if _remove(out, rel):
            report.removed.append(rel)
    _write(out / MANIFEST, json.dumps(new, sort_keys=True, indent=0).encode())
    report.seconds = round(time.monotonic() - started, 3)
    return report


Output = tuple[str, str, Callable[[], bytes]]


def _outputs(model: Model, version: str, graph_limit: int) -> list[Output]:
    """Every file of the site: its path, the key of its inputs, how to make its bytes."""
    wiki = model.wiki
    everything = json_digest(
        [
            version,
            model.title,
            sorted((p.slug, p.hash) for p in wiki.pages.values()),
            wiki.index.hash if wiki.index else "",
            sorted(model.sources),
            _findings_key(model, None),
            graph_limit,
        ]
    )
    outs: list[Output] = [
        (f"assets/{p.name}", bytes_hash(p.read_bytes()), p.read_bytes) for p in sorted(ASSETS.iterdir())
    ]
    outs += [
        (HOME, _home_key(model, version), lambda: home_view(model, STATIC).encode()),
        ("search.html", version, lambda: search_view(model, STATIC).encode()),
        ("data/search.js", everything, lambda: search_data(model).encode()),
        (
            "graph.html",
            json_digest([version, _graph_key(model), graph_limit]),
            lambda: graph_view(model, STATIC, graph_limit).encode(),
        ),
        ("health.html", everything, lambda: health_view(model, STATIC).encode()),
    ]
    for page in wiki.pages.values():
        outs.append(
            (page_path(page.slug), _page_key(model, page.slug, version), _page_maker(model, page.slug))
        )
    for path, file in model.sources.items():
        fed = sorted(
            (s, wiki.pages[s].title, wiki.pages[s].type) for s in model.fed.get(path, []) if s in wiki.pages
        )
        key = json_digest([version, model.title, file.size, file.mtime_ns, fed])
        outs.append((source_path(path), key, _source_maker(model, path)))
    return outs


def _page_maker(model: Model, slug: str) -> Callable[[], bytes]:
    return lambda: page_view(model, model.wiki.pages[slug], STATIC).encode()


def _source_maker(model: Model, path: str) -> Callable[[], bytes]:
    return lambda: source_view(model, path, STATIC).encode()


def _page_key(model: Model, slug: str, version: str) -> str:
    """What a page's HTML depends on: its file, what its links resolve to, who links to it,
    which of its sources exist, its findings."""
    wiki = model.wiki
    page = wiki.pages[slug]
    targets = model.targets[slug]
    resolved = [(t, s, wiki.pages[s].title, wiki.pages[s].type) for t in targets if (s := wiki.resolve(t))]
    near = sorted(model.inbound.get(slug, set()) | model.outbound[slug])
    return json_digest(
        [
            version,
            model.title,
            page.hash,
            targets,
            resolved,
            [(s, wiki.pages[s].title, wiki.pages[s].type) for s in near],
            [s in model.sources for s in page.sources],
            _findings_key(model, page.rel),
        ]
    )


def _home_key(model: Model, version: str) -> str:
    """index.md, and what its links resolve to: not every page's text (a big index takes
    seconds to render, and most edits leave it as it was)."""
    wiki = model.wiki
    pages = sorted((p.slug, p.title, p.type) for p in wiki.pages.values())
    return json_digest([version, model.title, wiki.index.hash if wiki.index else "", pages])


def _findings_key(model: Model, rel: str | None) -> Any:
    if model.findings is None:
        return None
    found = model.findings.get(rel, []) if rel else [f for fs in model.findings.values() for f in fs]
    return [f.to_json() for f in found]


def _graph_key(model: Model) -> str:
    wiki = model.wiki
    return json_digest(
        sorted(
            (
                p.slug,
                p.title,
                p.type,
                sorted(model.outbound[p.slug]),
                p.sources,
                [s in model.sources for s in p.sources],
            )
            for p in wiki.pages.values()
        )
    )


def _read_manifest(out: Path) -> dict[str, dict[str, str]]:
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


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
