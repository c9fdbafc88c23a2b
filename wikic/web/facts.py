"""What `wikic site` remembers of each page between exports: its facts (title, aliases, type,
sources, link targets and what they resolved to, the source of each citation, its search entry,
the hash of its file), kept in the site's manifest keyed by the file's stat, so that a
re-export reads only the pages whose stat changed; and which pages' HTML an export must
consider again (`affected`), exactly, from the facts before and after."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wikic.project import Project
from wikic.web.model import Model
from wikic.web.views import search_entry
from wikic.wiki.page import Page
from wikic.wiki.read import INDEX, LOG, PageStats, Wiki, gc_paused, read_page

Facts = dict[str, Any]
# A file written this close to the export that recorded its stat may change again within the
# same mtime tick at the same size (git's "racily clean" entries): such a stat is not trusted.
RACY_NS = 100_000_000


def read_known(
    project: Project, known: dict[str, Facts], since_ns: int, taken: PageStats
) -> tuple[Wiki, dict[str, Facts]]:
    """The wiki as read_wiki gives it, except that a page whose file has the stat its facts
    recorded (and older than `since_ns` by a margin) is a stub made from them: no body.
    `taken`: wiki/ by stat, just now."""
    pages: dict[str, Page] = {}
    facts: dict[str, Facts] = {}
    index: Page | None = None
    wiki_dir = project.wiki_dir
    prefix = (
        wiki_dir.relative_to(project.root).as_posix() if wiki_dir.is_relative_to(project.root) else "wiki"
    )
    with gc_paused():
        for name, (size, mtime) in taken.stats:
            if name == LOG:
                continue
            stat, rel = [size, mtime], f"{prefix}/{name}"
            if name == INDEX:
                index = read_page(wiki_dir / name, rel)
                continue
            slug = name.removesuffix(".md")
            before = known.get(slug)
            if before is not None and before.get("stat") == stat and stat[1] < since_ns - RACY_NS:
                pages[slug], facts[slug] = stub(rel, before), before
                continue
            page = read_page(wiki_dir / name, rel)
            pages[slug] = page
            facts[slug] = page_facts(page, stat if page.read_error is None else None)
    return Wiki(project.root, pages, index, taken.attachments), facts


def page_facts(page: Page, stat: list[int] | None) -> Facts:
    return {
        "stat": stat,
        "hash": page.hash,
        "title": page.title,
        "aliases": page.aliases,
        "type": page.type,
        "sources": page.sources,
        "targets": page.link_targets(),
        "cites": Model.cites_of(page),
        "entry": search_entry(page),
    }


class Stub(Page):
    """A page known from its facts, not read: its title, aliases, type, sources and slug are
    plain attributes set from them (not Page's properties, which parse the front matter's
    values on every use, 10,000 times per export), and its body is empty: it is read again
    only if its HTML must be rendered."""

    slug: str = ""
    title: str = ""
    type: str = ""
    aliases: list[str] = []  # noqa: RUF012 (set per instance)
    sources: list[str] = []  # noqa: RUF012


def stub(rel: str, facts: Facts) -> Page:
    """The page as its facts describe it (see Stub)."""
    meta = {k: facts[k] for k in ("title", "aliases", "type", "sources")}
    page = Stub(rel, "", meta=meta, has_front_matter=True, hash=facts["hash"])
    page.__dict__.update(meta, slug=rel.rsplit("/", 1)[-1].removesuffix(".md"))
    return page


@dataclass
class Changes:
    """What changed since the last export, as far as the site's files can tell."""

    todo: set[str]  # pages whose HTML inputs may have changed
    graph: bool  # a page's title, type, links or sources, or the pages themselves
    names: bool  # a page's title, type or aliases, or the pages themselves: how links resolve


def everything(facts: dict[str, Facts]) -> Changes:
    return Changes(set(facts), True, True)


def affected(
    old: dict[str, Facts],
    new: dict[str, Facts],
    res: dict[str, list[str | None]],
    model: Model,
    moved_sources: set[str],
    read: set[str] | None = None,
) -> Changes:
    """A page's HTML depends on its file, what its targets resolve to and their titles and
    types, who links to it and their titles and types, which of its sources exist: each of
    these is followed here, from the facts before and after. `read`: the pages read again,
    when only they can have changed (the others' facts and links are the last export's)."""
    look = read if read is not None else new
    changed = {s for s in look if s not in old or old[s]["hash"] != new[s]["hash"]}
    relinked = {s for s in look if s not in old or old[s].get("res") != res[s]}
    todo = changed | relinked
    graph = bool(moved_sources or set(old) ^ set(new))
    for slug in relinked:  # a page that gained or lost a link changes the target's backlinks
        before = {r for r in old[slug].get("res", []) if r and r != slug} if slug in old else set()
        gained_or_lost = before ^ model.outbound[slug]
        todo |= gained_or_lost
        graph = graph or bool(gained_or_lost)
    names = bool(set(old) ^ set(new))
    for slug in changed & set(old):
        if _face(old.get(slug)) != _face(new.get(slug)):  # its neighbours show its title and type
            todo |= model.inbound.get(slug, set()) | model.outbound.get(slug, set())
        names = names or _names(old[slug]) != _names(new[slug])
        graph = graph or _face(old[slug]) != _face(new[slug]) or old[slug]["sources"] != new[slug]["sources"]
    for slug in set(new) - set(old):  # an added page: its neighbours list it
        todo |= model.inbound[slug] | model.outbound[slug]
    for slug in set(old) - set(new):  # a removed page: the pages it linked to listed it
        todo |= {r for r in old[slug].get("res", []) if r}
    for source in moved_sources:
        todo |= set(model.fed.get(source, []))
    return Changes(todo & set(new), graph, names)


def same_names(old: dict[str, Facts], new: dict[str, Facts]) -> bool:
    """The same pages with the same names (titles, aliases; types, which rank a shared name):
    every [[link]] resolves as it did."""
    if old.keys() != new.keys():
        return False
    return all(_names(old[s]) == _names(f) for s, f in new.items() if f is not old[s])


def _face(facts: Facts | None) -> tuple[str, str] | None:
    return (facts["title"], facts["type"]) if facts is not None else None


def _names(facts: Facts) -> tuple[str, str, list[str]]:
    return (facts["title"], facts["type"], facts["aliases"])
