"""Every view as a complete HTML document: a page, the home page (index.md), a source with
its cited lines, search, the graph, health. jinja2 autoescapes everything; the only markup
passed through is what render.py and layout.py build with escaping of their own."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from wikic.web.model import HOME, Model, href, page_path, read_source_lines, root_of, source_path
from wikic.web.render import Links, render_body, strip_title
from wikic.wiki.page import Page

TEMPLATES = Path(__file__).parent / "templates"
ENTRY_KEYS = ("u", "t", "a", "y", "x")  # a search entry: address, title, aliases, type, text
MARKERS = re.compile(r"^(?:#{1,6} |[-*+] |\d+[.)] |> )", re.M)


@dataclass(frozen=True)
class Mode:
    """What the page can do besides reading: `served` (an ask box), `live` (reload after a
    build that changed it, with the build number the view was rendered at)."""

    served: bool = False
    live: bool = False
    build: int = 0


@cache
def _env() -> Environment:
    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _links(model: Model, at: str) -> Links:
    def page(target: str) -> tuple[str, str] | None:
        found = model.resolve(target)
        return (href(at, page_path(found.slug)), found.title) if found else None

    def source(path: str, start: int, end: int) -> str | None:
        if path not in model.sources:
            return None
        anchor = f"L{start}" if start == end else f"L{start}-L{end}"
        return href(at, source_path(path)) + "#" + anchor

    return Links(page, source)


def _common(model: Model, at: str, mode: Mode, title: str, watch: str = "") -> dict[str, Any]:
    return {
        "site": model.title,
        "title": title,
        "root": root_of(at),
        "home": href(at, HOME),
        "mode": mode,
        "watch": watch,  # the project file whose change reloads this view
    }


def page_view(model: Model, page: Page, mode: Mode) -> str:
    at = page_path(page.slug)
    body = render_body(strip_title(page.body), _links(model, at))
    backlinks = sorted((model.wiki.pages[s] for s in model.inbound.get(page.slug, ())), key=lambda p: p.title)
    from wikic.web.layout import neighbourhood_svg

    return (
        _env()
        .get_template("page.html")
        .render(
            **_common(model, at, mode, page.title, page.rel),
            page=page,
            body=Markup(body),
            sources=[(s, href(at, source_path(s)) if s in model.sources else None) for s in page.sources],
            backlinks=[(p.title, p.type, href(at, page_path(p.slug))) for p in backlinks],
            findings=model.page_findings(page.rel),
            linted=model.findings is not None,
            graph=Markup(neighbourhood_svg(model, page, at)),
        )
    )


def home_view(model: Model, mode: Mode) -> str:
    at = HOME
    index = model.wiki.index
    text = strip_title(index.body) if index is not None else ""
    body = render_body(text, _links(model, at)) if text.strip() else ""
    return (
        _env()
        .get_template("home.html")
        .render(
            **_common(model, at, mode, model.title, index.rel if index else "wiki/index.md"),
            body=Markup(body),
            pages=[(p.title, p.type, href(at, page_path(p.slug))) for p in model.ordered_pages()]
            if index is None
            else [],
        )
    )


def source_view(model: Model, path: str, mode: Mode) -> str:
    at = source_path(path)
    lines = read_source_lines(model.sources[path])
    fed = sorted((model.wiki.pages[s] for s in model.fed.get(path, []) if s in model.wiki.pages), key=_title)
    return (
        _env()
        .get_template("source.html")
        .render(
            **_common(model, at, mode, path, path),
            path=path,
            lines=list(enumerate(lines, 1)),
            fed=[(p.title, p.type, href(at, page_path(p.slug))) for p in fed],
        )
    )


def search_view(model: Model, mode: Mode, scripts: tuple[str, ...] = ("data/search.js",)) -> str:
    """`scripts`: the files the index is in (the static site writes it in pieces)."""
    return (
        _env()
        .get_template("search.html")
        .render(**_common(model, "search.html", mode, "Search"), scripts=scripts)
    )


def graph_view(model: Model, mode: Mode, limit: int) -> str:
    from wikic.web.layout import wiki_svg

    svg, note = wiki_svg(model, "graph.html", limit)
    types = sorted({p.type or "page" for p in model.wiki.pages.values()})
    return (
        _env()
        .get_template("graph.html")
        .render(**_common(model, "graph.html", mode, "Graph"), svg=Markup(svg), note=note, types=types)
    )


def health_view(model: Model, mode: Mode) -> str:
    at = "health.html"
    rows = []
    for path, found in sorted((model.findings or {}).items()):
        slug = path.removeprefix("wiki/").removesuffix(".md")
        link = href(at, page_path(slug)) if slug in model.wiki.pages else None
        rows.append((path, link, found))
    return (
        _env()
        .get_template("health.html")
        .render(
            **_common(model, at, mode, "Health"),
            rows=rows,
            linted=model.findings is not None,
            linting=model.linting,
            receipt=receipt(model),
        )
    )


def receipt(model: Model) -> dict[str, Any]:
    """The compile receipt: pages, sources, citations, and the share that open a source line."""
    total, resolving = model.citations()
    found = [f for fs in (model.findings or {}).values() for f in fs]
    return {
        "pages": len(model.wiki.pages),
        "sources": len(model.sources),
        "citations": total,
        "resolving": resolving,
        "share": f"{100 * resolving / total:.1f}%" if total else "n/a",
        "errors": sum(f.level == "error" for f in found),
        "warnings": sum(f.level == "warning" for f in found),
        "linted": model.findings is not None,
    }


def search_data(model: Model) -> str:
    """The client-side search index as a script (a script, not JSON: it loads from file:// too)."""
    return "window.WIKIC_SEARCH = " + script_json([search_entry(p) for p in model.ordered_pages()]) + ";\n"


def search_piece(entries: list[dict[str, Any]]) -> str:
    """One piece of the index: the pages' entries added to what the pieces before it added."""
    ordered = [{k: e[k] for k in ENTRY_KEYS} for e in entries]  # as made, whatever JSON round trip
    return "window.WIKIC_SEARCH = (window.WIKIC_SEARCH || []).concat(" + script_json(ordered) + ");\n"


def search_entry(page: Page) -> dict[str, Any]:
    return {
        "u": page_path(page.slug),
        "t": page.title,
        "a": page.aliases,
        "y": page.type,
        "x": _searchable(page.plain),
    }


def _searchable(text: str) -> str:
    """Plain text without Markdown's line markers, on one line: what snippets show."""
    return " ".join(MARKERS.sub("", text).split())[:20000]


def script_json(value: object) -> str:
    """JSON safe inside a script: no `</script>`, no HTML comment openers, no line separators."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _title(page: Page) -> str:
    return page.title.casefold()
