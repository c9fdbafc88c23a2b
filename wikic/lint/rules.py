"""The deterministic lint rules about the wiki's shape: links, orphans, front
matter, empty pages and the index (missing and duplicate pages: topics.py). Rules
about sources, citations and the build state live in citations.py.

Each rule is a function from the lint Context to findings; the runner (runner.py)
gives them their level and applies suppressions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping

from rapidfuzz import fuzz, process

from wikic.lint.context import Context, Finding
from wikic.lint.names import Names
from wikic.lint.topics import duplicate_page, missing_page
from wikic.wiki.blocks import LinkRef
from wikic.wiki.page import Page

RuleFn = Callable[[Context], Iterable[Finding]]
SUGGEST_CUTOFF = 60
OBVIOUS = 90  # a near-miss this close, with no rival, is relinked by --fix
COUNT_LINE = re.compile(r"^(\d+) pages?\.$")


# --- broken-link ---------------------------------------------------------------
class _Suggester:
    def __init__(self, names: Names) -> None:
        self.names = names
        self.choices: dict[str, str] = dict(names.names)
        for slug in sorted(names.pages):
            self.choices.setdefault(slug.casefold(), slug)
            self.choices.setdefault(slug.replace("-", " ").casefold(), slug)
        # in order, not as the names came: the suggestions of equal likeness are the same
        # whichever way the names were made (a full lint's, or a patch's: lint/came.py)
        self._keys = sorted(self.choices)

    def suggest(self, link: LinkRef) -> tuple[str | None, list[str]]:
        """(the page it obviously meant, or None; candidate slugs, best first)."""
        if link.label and (by_label := self.names.resolve(link.label)):
            return by_label, [by_label]
        query = link.target.replace("-", " ").casefold()
        best: dict[str, float] = {}
        for key, score, _ in process.extract(
            query, self._keys, scorer=fuzz.ratio, limit=8, score_cutoff=SUGGEST_CUTOFF
        ):
            slug = self.choices[key]
            best[slug] = max(best.get(slug, 0), score)
        ranked = sorted(best, key=lambda s: (-best[s], s))
        if not ranked:
            return None, []
        rival = best[ranked[1]] if len(ranked) > 1 else 0
        obvious = ranked[0] if best[ranked[0]] >= OBVIOUS and rival < best[ranked[0]] - 5 else None
        return obvious, ranked[:3]


def _relinked(link: LinkRef, slug: str) -> str:
    anchor = f"#{link.anchor}" if link.anchor else ""
    return f"[[{slug}{anchor}|{link.text}]]"


def broken_link(ctx: Context) -> Iterator[Finding]:
    return broken_links(ctx.names, ctx.wiki.pages.values())


def broken_links(names: Names, pages: Iterable[Page]) -> Iterator[Finding]:
    """The broken links of these pages, against every page's names."""
    suggester: _Suggester | None = None
    for page in pages:
        for link in page.links:
            if not link.target or names.resolve(link.target) or names.is_file(link.target):
                continue
            suggester = suggester or _Suggester(names)
            obvious, candidates = suggester.suggest(link)
            msg = f"{link.raw} resolves to no page or alias"
            if candidates:
                msg += (
                    "; did you mean "
                    + " or ".join(f'"{names.pages[s].title}" ({s}.md)' for s in candidates)
                    + "?"
                )
            if obvious:
                new = _relinked(link, obvious)
                yield Finding(
                    "broken-link", page.rel, link.line, msg, f"relink to {new}", edit=(link.raw, new)
                )
            elif not candidates:
                yield Finding(
                    "broken-link",
                    page.rel,
                    link.line,
                    msg,
                    f"drop the link, keep its text {link.text!r}",
                    edit=(link.raw, link.text),
                )
            else:
                yield Finding("broken-link", page.rel, link.line, msg)


# --- orphan-page ------------------------------------------------------------------
def orphan_page(ctx: Context) -> Iterator[Finding]:
    pages = ctx.wiki.pages.values()
    return orphans([(p.slug, p.rel, can_be_orphan(p)) for p in pages], ctx.names.inbound(pages))


def can_be_orphan(page: Page) -> bool:
    return page.type != "answer" and not page.read_error


def orphans(pages: Iterable[tuple[str, str, bool]], inbound: Mapping[str, int]) -> Iterator[Finding]:
    """(slug, path, whether it can be an orphan) of each page; slug -> pages linking to it."""
    for slug, rel, can in pages:
        if can and not inbound[slug]:
            yield Finding("orphan-page", rel, 1, "no other page links to it (index.md does not count)")


# --- frontmatter and empty-page ---------------------------------------------------
def _meta_problems(page: Page, ctx: Context) -> Iterator[str]:
    meta = page.meta
    title = meta.get("title")
    if not isinstance(title, str) or not title.strip():
        yield "no title: (a non-empty string)"
    kind = meta.get("type")
    if not isinstance(kind, str) or not kind:
        yield "no type: (" + ", ".join(sorted(ctx.known_types())) + ")"
    elif kind not in ctx.known_types():
        yield (
            f"type {kind!r} is not a page type of schema.yaml (" + ", ".join(sorted(ctx.known_types())) + ")"
        )
    aliases = meta.get("aliases")
    if aliases is not None and not (isinstance(aliases, list) and all(isinstance(a, str) for a in aliases)):
        yield "aliases: must be a list of strings"
    sources = meta.get("sources")
    if sources is not None and not (isinstance(sources, list) and all(isinstance(s, str) for s in sources)):
        yield "sources: must be a list of paths"
    elif sources:
        bad = [s for s in sources if not s.startswith("sources/") or ".." in s.split("/")]
        if bad:
            yield f"sources: {bad[0]!r} is not a path under sources/"
    if kind == "source" and isinstance(sources, list) and len(sources) != 1:
        yield "a source page lists exactly one source"


def frontmatter(ctx: Context) -> Iterator[Finding]:
    for page in ctx.wiki.pages.values():
        if page.read_error:
            yield Finding("frontmatter", page.rel, 1, f"the page {page.read_error}")
        elif page.meta_error:
            line = int(m.group(1)) if (m := re.match(r"line (\d+):", page.meta_error)) else 1
            yield Finding("frontmatter", page.rel, line, page.meta_error)
        elif not page.has_front_matter:
            yield Finding(
                "frontmatter",
                page.rel,
                1,
                "no front matter; start the page with ---, title:, type: and a closing ---",
            )
        else:
            for problem in _meta_problems(page, ctx):
                yield Finding("frontmatter", page.rel, 1, f"front matter: {problem}")


def empty_page(ctx: Context) -> Iterator[Finding]:
    topic_types = ctx.topic_types()
    for page in ctx.wiki.pages.values():
        if page.read_error:
            continue
        if not page.has_content:
            yield Finding("empty-page", page.rel, page.body_line, "the page has no content besides headings")
        elif page.type in topic_types and not any(page.prose()):
            yield Finding("empty-page", page.rel, page.body_line, "the topic page has no prose, only lists")


# --- index-drift ------------------------------------------------------------------
def index_drift(ctx: Context) -> Iterator[Finding]:
    return index_findings(ctx.names, ctx.wiki.index)


def index_findings(names: Names, index: Page | None) -> Iterator[Finding]:
    """What index.md gets wrong about the pages there are."""
    rel, fix = "wiki/index.md", "rebuild index.md"
    pages = names.pages
    if index is None:
        if pages:
            yield Finding("index-drift", rel, 1, f"index.md is missing ({len(pages)} pages exist)", fix)
        return
    listed: dict[str, int] = {}
    for link in index.links:
        slug = names.resolve(link.target)
        if slug is None:
            yield Finding("index-drift", rel, link.line, f"lists {link.raw}, which is no page", fix)
        elif slug in listed:
            yield Finding(
                "index-drift", rel, link.line, f"lists {slug}.md twice (also line {listed[slug]})", fix
            )
        else:
            listed[slug] = link.line
            if link.label is not None and link.label != pages[slug].shown:
                yield Finding(
                    "index-drift",
                    rel,
                    link.line,
                    f"lists {slug}.md as {link.label!r} but its title is {pages[slug].shown!r}",
                    fix,
                )
    for slug in sorted(set(pages) - set(listed)):
        yield Finding("index-drift", rel, 1, f"does not list {pages[slug].rel}", fix)
    for block in index.blocks:
        m = COUNT_LINE.match(block.text.strip())
        if m and int(m.group(1)) != len(pages):
            yield Finding(
                "index-drift", rel, block.line, f"says {m.group(1)} pages; there are {len(pages)}", fix
            )
            break


RULES: dict[str, tuple[str, RuleFn]] = {
    "broken-link": ("error", broken_link),
    "orphan-page": ("warning", orphan_page),
    "missing-page": ("warning", missing_page),
    "duplicate-page": ("warning", duplicate_page),
    "frontmatter": ("error", frontmatter),
    "empty-page": ("warning", empty_page),
    "index-drift": ("error", index_drift),
}
