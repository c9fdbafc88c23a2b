"""The deterministic lint rules about the wiki's shape: links, orphans, missing
and duplicate pages, front matter, empty pages and the index. Rules about
sources, citations and the build state live in citations.py.

Each rule is a function from the lint Context to findings; the runner (runner.py)
gives them their level and applies suppressions.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from functools import lru_cache

from rapidfuzz import fuzz, process

from wikic.lint.context import Context, Finding
from wikic.lint.names import Names
from wikic.wiki.blocks import LinkRef
from wikic.wiki.page import Page
from wikic.wiki.read import ATTACHMENT, Wiki

RuleFn = Callable[[Context], Iterable[Finding]]


@lru_cache(maxsize=1 << 17)  # missing-page and duplicate-page ask for the same names
def topic_key(name: str) -> str:
    """The build's topic key (build/plan.py), imported when first asked: `wikic lint` with
    nothing changed never needs it, nor the build's modules it comes with."""
    from wikic.build.plan import topic_key as key

    return key(name)


SUGGEST_CUTOFF = 60
OBVIOUS = 90  # a near-miss this close, with no rival, is relinked by --fix
DIGITS = re.compile(r"\d+")
COUNT_LINE = re.compile(r"^(\d+) pages?\.$")


def page_keys(wiki: Wiki) -> dict[str, str]:
    """Every page's names (title, aliases, slug as words) in topic_key form -> slug."""
    keys: dict[str, str] = {}
    for page in sorted(wiki.pages.values(), key=lambda p: (p.type == "source", p.slug)):
        for name in [page.title, *page.aliases, page.slug.replace("-", " ")]:
            keys.setdefault(topic_key(name), page.slug)
    return keys


# --- broken-link ---------------------------------------------------------------
class _Suggester:
    def __init__(self, names: Names) -> None:
        self.names = names
        self.choices: dict[str, str] = dict(names.names)
        for slug in names.pages:
            self.choices.setdefault(slug.casefold(), slug)
            self.choices.setdefault(slug.replace("-", " ").casefold(), slug)
        self._keys = list(self.choices)

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


# --- missing-page -----------------------------------------------------------------
_STOPWORDS_TEXT = """a an the and or of to in on for with by is are this that it not no"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


def _term_ok(term: str) -> bool:
    words = term.split()
    return (
        3 <= len(term) <= 80
        and not term.startswith("(")
        and 1 <= len(words) <= 6
        and any(c.isalpha() for c in term)
        and not all(w.casefold() in STOPWORDS for w in words)
    )


def _mentions(page: Page, names: Names) -> Iterator[tuple[str, int]]:
    """Terms a page treats as topics: links to nothing, bold terms, plain items of a Topics list."""
    for link in page.links:
        if link.target and not names.resolve(link.target) and not ATTACHMENT.search(link.target):
            yield link.target.replace("-", " ") if link.label is None else link.text, link.line
    for term, line in page.bold:
        if "[[" not in term:
            yield term, line
    for block in page.blocks:
        if block.section == "topics" and block.kind == "paragraph" and not block.links:
            term = re.split(r":\s|\[", block.text, maxsplit=1)[0].strip()
            yield term, block.line


Mentions = dict[str, tuple[int, dict[str, int]]]  # topic key -> (first line, term -> how often)


def page_mentions(page: Page, names: Names, have: Container[str]) -> Mentions:
    """The terms with no page that the page treats as topics, by topic key; `have`: the topic
    keys of every page's names (page_keys)."""
    found: Mentions = {}
    for term, line in _mentions(page, names):
        term = " ".join(term.split())
        key = topic_key(term)
        if not key or not _term_ok(term) or key in have or names.resolve(term):
            continue
        terms = found.setdefault(key, (line, {}))[1]
        terms[term] = terms.get(term, 0) + 1
    return found


def missing_finding(
    key: str, where: Mapping[str, tuple[int, dict[str, int]]], threshold: int
) -> Finding | None:
    """The finding for a topic key from the pages that mention it (path -> first line, terms)."""
    if len(where) < threshold:
        return None
    rels = sorted(where)
    surface: Counter[str] = Counter()
    for rel in rels:  # in the pages' order: the first of equally common names is shown
        surface.update(where[rel][1])
    name = surface.most_common(1)[0][0]
    shown = ", ".join(rels[:5]) + (f" and {len(rels) - 5} more" if len(rels) > 5 else "")
    return Finding(
        "missing-page",
        rels[0],
        where[rels[0]][0],
        f'"{name}" is treated as a topic in {len(rels)} pages ({shown}) but has no page; '
        "add a source about it, or pin it under topics: in schema.yaml",
        also=tuple(rels[1:]),
    )


def missing_page(ctx: Context) -> Iterator[Finding]:
    have = page_keys(ctx.wiki)
    where: dict[str, dict[str, tuple[int, dict[str, int]]]] = defaultdict(dict)
    for page in ctx.wiki.pages.values():
        for key, found in page_mentions(page, ctx.names, have).items():
            where[key][page.rel] = found
    for key in sorted(where):
        finding = missing_finding(key, where[key], ctx.schema.lint.missing_page_threshold)
        if finding is not None:
            yield finding


# --- duplicate-page ---------------------------------------------------------------
def _near_pairs(keys: list[str], cutoff: int) -> Iterator[tuple[int, int, float]]:
    """Index pairs (i < j) of keys whose fuzz.ratio is at least cutoff.

    fuzz.ratio >= c needs len(b) <= len(a) * (2 - c/100) / (c/100): each length
    is compared only with the lengths in that window (a few times fewer pairs)."""
    order = sorted(range(len(keys)), key=lambda i: len(keys[i]))
    lengths = [len(keys[i]) for i in order]
    stretch = (2 - cutoff / 100) / (cutoff / 100)
    start = 0
    while start < len(order):
        end = bisect.bisect_right(lengths, lengths[start])
        stop = bisect.bisect_right(lengths, int(lengths[start] * stretch + 1e-6))
        rows, cols = order[start:end], order[start:stop]
        for r, c, score in _scores([keys[i] for i in rows], [keys[j] for j in cols], cutoff):
            i, j = rows[r], cols[c]
            if i != j and (c >= end - start or i < j):  # each pair once
                yield min(i, j), max(i, j), score
        start = end


def _scores(rows: list[str], cols: list[str], cutoff: int) -> Iterator[tuple[int, int, float]]:
    """(row, column, score) for every pair at or above cutoff."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy comes with llama-cpp-python
        for r, row in enumerate(rows):
            for _, score, c in process.extract(row, cols, scorer=fuzz.ratio, limit=None, score_cutoff=cutoff):
                yield r, c, score
        return
    for first in range(0, len(rows), 1000):
        matrix = process.cdist(
            rows[first : first + 1000], cols, scorer=fuzz.ratio, score_cutoff=cutoff, dtype=np.uint8
        )
        hits_r, hits_c = np.nonzero(matrix)
        for r, c in zip(hits_r.tolist(), hits_c.tolist(), strict=True):
            yield first + r, c, float(matrix[r, c])


def duplicate_page(ctx: Context) -> Iterator[Finding]:
    """Pages (other than source summaries, which are one per file) with near-identical names."""
    owners: dict[str, set[str]] = defaultdict(set)
    shown: dict[tuple[str, str], str] = {}
    for page in ctx.wiki.pages.values():
        if page.type == "source" or page.read_error:
            continue
        for name in {page.title, *page.aliases}:
            key = topic_key(name)
            if key:
                owners[key].add(page.slug)
                shown.setdefault((key, page.slug), name)
    keys = sorted(owners)
    best: dict[tuple[str, str], tuple[float, dict[str, str]]] = {}

    def consider(a: str, key_a: str, b: str, key_b: str, score: float) -> None:
        pair = (min(a, b), max(a, b))
        if a != b and score > best.get(pair, (-1.0, {}))[0]:
            best[pair] = (score, {a: key_a, b: key_b})

    for key in keys:
        for a in owners[key]:
            for b in owners[key]:
                consider(a, key, b, key, 100.0)
    for i, j, score in _near_pairs(keys, ctx.schema.lint.duplicate_threshold):
        if DIGITS.findall(keys[i]) != DIGITS.findall(keys[j]):
            continue  # "Python 3.10" and "Python 3.11" are different things
        for a in owners[keys[i]]:
            for b in owners[keys[j]]:
                consider(a, keys[i], b, keys[j], score)
    for (a, b), (score, key_of) in sorted(best.items()):
        page_a, page_b = ctx.wiki.pages[a], ctx.wiki.pages[b]
        yield Finding(
            "duplicate-page",
            page_b.rel,
            1,
            f'"{shown[(key_of[b], b)]}" looks like a twin of "{shown[(key_of[a], a)]}" ({page_a.rel}, '
            f"{score:.0f}% alike); merge them, or make one an alias of the other in schema.yaml",
            also=(page_a.rel,),
        )


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
