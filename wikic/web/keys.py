"""What each file of the static site is made from, as a key (site.py keeps them in the
manifest): a page's, the health page's, the graph's. A file whose key is unchanged is not
rendered again."""

from __future__ import annotations

from typing import Any

from wikic.hashing import json_digest
from wikic.web.model import Model
from wikic.web.views import receipt


def page_key(model: Model, slug: str, version: str) -> str:
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
            findings_key(model, page.rel),
        ]
    )


def health_key(model: Model, version: str) -> str:
    """The compile receipt and the findings, with whether the page each concerns exists."""
    rows = sorted(
        (rel, rel.removeprefix("wiki/").removesuffix(".md") in model.wiki.pages)
        for rel in model.findings or {}
    )
    return json_digest([version, model.title, receipt(model), findings_key(model, None), rows])


def findings_key(model: Model, rel: str | None) -> Any:
    if model.findings is None:
        return None
    found = model.findings.get(rel, []) if rel else [f for fs in model.findings.values() for f in fs]
    return [f.to_json() for f in found]


def graph_key(model: Model) -> str:
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
