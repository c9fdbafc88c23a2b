"""The graph as a picture, laid out in Python and drawn as SVG (no JavaScript library, no
CDN, no npm build): the whole wiki (its most linked pages past a limit, with the sources
that feed them) by a force layout, and one page's neighbourhood on a ring."""

from __future__ import annotations

import math
import re
from html import escape

from wikic.web.model import Model, href, page_path, source_path
from wikic.wiki.page import Page

WIDTH, HEIGHT = 1000.0, 700.0
RING = 130.0
LABELS = 40  # the most linked pages carry their title; every node has it as a tooltip


def force_layout(n: int, edges: list[tuple[int, int]], iterations: int = 80) -> list[tuple[float, float]]:
    """Fruchterman-Reingold, vectorised with numpy (n^2 repulsion: the caller limits n), then
    scaled into a WIDTH x HEIGHT picture."""
    import numpy as np

    if n == 0:
        return []
    rng = np.random.default_rng(7)  # a fixed seed: the same wiki draws the same picture
    pos = rng.random((n, 2)).astype(np.float32)
    k = np.float32(1.0 / math.sqrt(n))
    src = np.array([a for a, _ in edges], dtype=np.intp)
    dst = np.array([b for _, b in edges], dtype=np.intp)
    for i in range(iterations):
        # Repulsion k^2/d along the unit vector, per axis: n x n float32 arrays, no 3-d temporaries.
        dx = pos[:, 0, None] - pos[None, :, 0]
        dy = pos[:, 1, None] - pos[None, :, 1]
        push = k * k / np.maximum(dx * dx + dy * dy, np.float32(1e-6))
        disp = np.stack([(dx * push).sum(axis=1), (dy * push).sum(axis=1)], axis=1)
        if len(src):
            d = pos[src] - pos[dst]
            pull = d * (np.sqrt((d * d).sum(axis=1))[:, None] / k)
            np.add.at(disp, src, -pull)
            np.add.at(disp, dst, pull)
        disp -= (pos - 0.5) * (2.0 * k)  # gravity: unlinked pages stay in the picture
        length = np.maximum(np.sqrt((disp * disp).sum(axis=1)), 1e-9)[:, None]
        step = 0.1 * (1 - i / iterations) + 0.002
        pos += disp / length * np.minimum(length, step)
    lo, hi = (
        np.percentile(pos, 2, axis=0),
        np.percentile(pos, 98, axis=0),
    )  # a stray node cannot shrink the rest
    scaled = (pos - lo) / np.maximum(hi - lo, 1e-9)
    scaled = np.clip(scaled, -0.03, 1.03)
    out = scaled * np.array([WIDTH - 200, HEIGHT - 80]) + np.array([100, 40])
    return [(float(x), float(y)) for x, y in out]


def type_class(kind: str) -> str:
    return "t-" + (re.sub(r"[^a-z0-9-]+", "-", kind.lower()).strip("-") or "page")


def _degree(model: Model) -> dict[str, int]:
    return {slug: len(model.inbound.get(slug, ())) + len(model.outbound[slug]) for slug in model.wiki.pages}


def wiki_svg(model: Model, at: str, limit: int) -> tuple[str, str]:
    """The whole wiki: pages (at most `limit`, the most linked), their links, their sources."""
    degree = _degree(model)
    ranked = sorted(model.wiki.pages, key=lambda s: (-degree.get(s, 0), s))
    shown = ranked[:limit] if limit > 0 else ranked
    total = len(ranked)
    note = f"{total} pages, {len(model.sources)} sources."
    if len(shown) < total:
        note = (
            f"The {len(shown)} most linked of {total} pages (--graph-limit); each page shows its own "
            "neighbourhood, and `wikic graph` gives the whole graph to Gephi or Graphviz."
        )
    index = {slug: i for i, slug in enumerate(shown)}
    sources = _sources_shown(model, shown, max(20, (limit or len(shown)) // 4))
    for s in sources:
        index["source:" + s] = len(index)
    links = [(index[a], index[b]) for a in shown for b in model.outbound[a] if b in index and b != a]
    feeds = [
        (index["source:" + s], index[slug])
        for slug in shown
        for s in model.wiki.pages[slug].sources
        if "source:" + s in index
    ]
    pos = force_layout(len(index), links + feeds)
    labelled = set(shown[:LABELS])
    parts = [f'<svg class="wiki-graph" viewBox="0 0 {WIDTH:.0f} {HEIGHT:.0f}" role="img">']
    parts += [_line(pos[a], pos[b], "feeds") for a, b in feeds]
    parts += [_line(pos[a], pos[b], "link") for a, b in links]
    for s in sources:
        x, y = pos[index["source:" + s]]
        parts.append(_source_node(s, href(at, source_path(s)), x, y))
    for slug in shown:
        page = model.wiki.pages[slug]
        x, y = pos[index[slug]]
        r = 4 + min(10.0, math.sqrt(degree.get(slug, 0)) * 1.5)
        parts.append(_page_node(page, href(at, page_path(slug)), x, y, r, slug in labelled))
    parts.append("</svg>")
    return "\n".join(parts), note


def _sources_shown(model: Model, shown: list[str], cap: int) -> list[str]:
    """The sources of the pages shown, those that feed the most of them first, at most `cap`:
    the picture is about pages; `wikic graph` has every source."""
    feeding: dict[str, int] = {}
    for slug in shown:
        for source in model.wiki.pages[slug].sources:
            if source in model.sources:
                feeding[source] = feeding.get(source, 0) + 1
    return sorted(sorted(feeding, key=lambda s: (-feeding[s], s))[:cap])


def neighbourhood_svg(model: Model, page: Page, at: str, cap: int = 24) -> str:
    """The page in the middle; the pages it links to and that link to it, and its sources, around it."""
    near = set(model.outbound[page.slug]) | model.inbound.get(page.slug, set())
    near.discard(page.slug)
    pages = sorted(near, key=lambda s: model.wiki.pages[s].title.casefold())[:cap]
    sources = [s for s in page.sources if s in model.sources][:8]
    ring = [("page", s) for s in pages] + [("source", s) for s in sources]
    c, side = RING + 20, 90  # room beside the ring for labels
    parts = [f'<svg class="near-graph" viewBox="{-side} 0 {2 * (c + side):.0f} {2 * c:.0f}" role="img">']
    spots = []
    for i, item in enumerate(ring):
        angle = 2 * math.pi * i / max(1, len(ring)) - math.pi / 2
        spots.append((c + RING * math.cos(angle), c + RING * math.sin(angle)))
        parts.append(_line((c, c), spots[-1], "feeds" if item[0] == "source" else "link"))
    for (kind, name), (x, y) in zip(ring, spots, strict=True):
        if kind == "page":
            other = model.wiki.pages[name]
            parts.append(
                _page_node(other, href(at, page_path(name)), x, y, 6, len(ring) <= 12, left=x < c - 1)
            )
        else:
            parts.append(_source_node(name, href(at, source_path(name)), x, y))
    parts.append(_page_node(page, href(at, page_path(page.slug)), c, c, 9, True, "here"))
    parts.append("</svg>")
    return "\n".join(parts)


def _line(a: tuple[float, float], b: tuple[float, float], kind: str) -> str:
    return f'<line class="{kind}" x1="{a[0]:.1f}" y1="{a[1]:.1f}" x2="{b[0]:.1f}" y2="{b[1]:.1f}"/>'


def _page_node(
    page: Page, link: str, x: float, y: float, r: float, label: bool, extra: str = "", left: bool = False
) -> str:
    kind = page.type or "page"
    title = escape(page.title)
    short = escape(page.title if len(page.title) <= 22 else page.title[:21] + "…")
    spot = f'x="{x - r - 2:.1f}" text-anchor="end"' if left else f'x="{x + r + 2:.1f}"'
    text = f'<text {spot} y="{y + 4:.1f}">{short}</text>' if label else ""
    return (
        f'<a href="{escape(link)}" data-type="{escape(kind)}" class="node">'
        f'<circle class="page {type_class(kind)} {extra}" data-slug="{escape(page.slug)}" '
        f'cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}"><title>{title}</title></circle>{text}</a>'
    )


def _source_node(path: str, link: str, x: float, y: float) -> str:
    name = escape(path)
    return (
        f'<a href="{escape(link)}" data-type="sources" class="node">'
        f'<rect class="source" x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8">'
        f"<title>{name}</title></rect></a>"
    )
