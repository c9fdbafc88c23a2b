"""Answers as wiki pages: the [[citations]] in a model's answer checked against
the pages it was shown, `ask --save` filing an answer as a page of type
`answer`, and finding saved answers whose cited pages changed since (lint's
`stale-page` rule calls `stale_answers` or `answer_staleness`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wikic.build.linker import Linker, phrases
from wikic.fsutil import atomic_write
from wikic.hashing import bytes_hash
from wikic.project import Project
from wikic.wiki.frontmatter import render_front_matter
from wikic.wiki.page import (
    COMMENT,
    LINKED_FROM,
    MAX_SLUG,
    WIKILINK,
    Page,
    clean_title,
    plain_links,
    seal,
    slugify,
    split_page,
    wikilink,
)

ANSWER_TYPE = "answer"


@dataclass
class Citations:
    cited: list[Page] = field(default_factory=list)  # pages in the context that the answer names
    dropped: list[str] = field(default_factory=list)  # names that are no page the model was shown
    by_mention: bool = False  # no [[links]] in the answer: cited are the pages it names


def check_citations(text: str, shown: list[Page], every: list[Page]) -> Citations:
    """Resolve each [[Name]] like the build resolves links; keep those the model could see.

    A small model often names pages without brackets: when the answer has no [[link]]
    at all, the pages it names (title or alias, as the build autolinks them) are its citations.
    """
    names = _Names(text, every)
    visible = {p.slug: p for p in shown}
    out = Citations()
    if not WIKILINK.search(text):
        mentioned: set[str] = set()
        names.linker.autolink(text, "", mentioned)
        out.cited = [p for p in shown if p.slug in mentioned]
        out.by_mention = bool(out.cited)
        return out
    for m in WIKILINK.finditer(text):
        name = m.group(1).strip()
        slug = names.resolve(name) if name else None
        if slug in visible:
            if visible[slug] not in out.cited:
                out.cited.append(visible[slug])
        elif name and name not in out.dropped:
            out.dropped.append(name)
    return out


def _linker(pages: list[Page]) -> Linker:
    return Linker.of_pages([(p.slug, p.title, p.type, p.aliases) for p in pages])


class _Names:
    """An answer's names resolved and autolinked as the linker of every page would (ask's every
    page: a table of 100,000 pages' names took 0.7 s a question). Only the pages a name of
    which the answer may write make the table: a phrase autolink may look up in it, or a
    [[target]] of it. Each of those names is given the page the table of every page gives it
    (name_table's order holds among fewer pages), and no other name can be found in the text
    (its heads are those names' heads). A [[target]] that is none of them is resolved by the
    linker of every page (the file stem, then the name most like it of every name), made then."""

    def __init__(self, text: str, every: list[Page]) -> None:
        wanted = set(phrases(text)) | {m.group(1).strip().casefold().strip() for m in WIKILINK.finditer(text)}
        named = []
        for page in every:
            title, aliases = page.title, page.aliases
            if title.casefold().strip() in wanted or any(a.casefold().strip() in wanted for a in aliases):
                named.append((page.slug, title, page.type, aliases))
        self.linker = Linker.of_pages(named)
        self.every = every
        self._all: Linker | None = None

    def resolve(self, name: str) -> str | None:
        slug = self.linker.names.get(name.casefold().strip())
        if slug is not None:
            return slug
        if self._all is None:
            self._all = _linker(self.every)
        return self._all.resolve(name)


def content_hash(text: str) -> str:
    """A page's content for staleness: not its backlinks or link markup, which the
    next build changes (it will list the answer itself under "Linked from")."""
    page = split_page(text)
    body = plain_links(LINKED_FROM.sub("", COMMENT.sub("", page.body)))
    meta = {k: v for k, v in page.meta.items() if k in ("title", "type", "aliases", "sources")}
    normal = "\n".join(line.rstrip() for line in body.strip().splitlines())
    return bytes_hash((repr(sorted(meta.items())) + "\n" + normal).encode("utf-8"))


def linked_answer(text: str, citations: Citations, every: list[Page]) -> str:
    """The answer with cited names as [[slug|Name]] links and dropped ones as plain text."""
    names = _Names(text, every)
    cited = {p.slug for p in citations.cited}
    if citations.by_mention:
        return _link_mentions(text, names.linker, cited)

    def repl(m: re.Match[str]) -> str:
        name = m.group(1).strip()
        shown = (m.group(3) or m.group(1)).strip()
        slug = names.resolve(name) if name else None
        return f"[[{slug}|{shown}]]" if slug in cited else shown

    return WIKILINK.sub(repl, text)


def _link_mentions(text: str, linker: Linker, cited: set[str]) -> str:
    linked = set(linker.titles) - cited  # autolink skips these: only cited pages become links
    return linker.autolink(text, "", linked)


def answer_page(question: str, answer: str, citations: Citations, wiki_dir: Path, every: list[Page]) -> str:
    meta: dict[str, Any] = {
        "title": clean_title(plain_links(question)) or "Answer",
        "type": ANSWER_TYPE,
        "question": question,
        "cites": [p.slug for p in citations.cited],
        "cited_hashes": {p.slug: _page_hash(wiki_dir, p.slug) for p in citations.cited},
    }
    lines = [
        f"# {meta['title']}",
        "",
        linked_answer(answer.strip(), citations, every) or "(no answer)",
        "",
        "## Question",
        "",
        plain_links(question),
        "",
        "## Cited pages",
        "",
    ]
    lines += [f"- {wikilink(p.slug, p.title)}" for p in citations.cited] or ["- (the answer cites no page)"]
    return render_front_matter(meta) + "\n" + "\n".join(lines) + "\n"


def _page_hash(wiki_dir: Path, slug: str) -> str | None:
    try:
        return content_hash((wiki_dir / f"{slug}.md").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


def answer_slug(wiki_dir: Path, question: str) -> str:
    """The question's slug; an earlier answer to the same question is replaced, any other page kept."""
    wanted = slugify(clean_title(plain_links(question)) or "answer")
    taken = {p.stem for p in wiki_dir.glob("*.md")} | {"index", "log"}
    slug, n = wanted, 2
    while slug in taken:
        meta = _meta(wiki_dir / f"{slug}.md")
        if meta.get("type") == ANSWER_TYPE and meta.get("question") == question:
            return slug
        suffix = f"-{n}"
        slug, n = wanted[: MAX_SLUG - len(suffix)] + suffix, n + 1
    return slug


def save_answer(project: Project, question: str, answer: str, citations: Citations, every: list[Page]) -> str:
    """File the answer as wiki/<slug>.md (atomically); returns its project-relative path.
    The build never writes this page (it is not in its records) but lists and links it."""
    wiki = project.wiki_dir
    slug = answer_slug(wiki, question)
    # sealed, so that forgetting the pages it cites can tell it from a hand-edited answer
    page = seal(answer_page(question, answer, citations, wiki, every).rstrip("\n"))
    atomic_write(wiki / f"{slug}.md", page.encode("utf-8"))
    return f"wiki/{slug}.md"


def _meta(path: Path) -> dict[str, Any]:
    try:
        return split_page(path.read_text(encoding="utf-8")).meta
    except (OSError, UnicodeDecodeError):
        return {}


def answer_staleness(wiki_dir: Path, meta: dict[str, Any]) -> list[str]:
    """The slugs an answer page cites whose content changed, or that are gone, since it was saved."""
    hashes = meta.get("cited_hashes")
    if meta.get("type") != ANSWER_TYPE or not isinstance(hashes, dict):
        return []
    return sorted(str(slug) for slug, old in hashes.items() if _page_hash(wiki_dir, str(slug)) != old)


def stale_answers(project: Project) -> dict[str, list[str]]:
    """Every saved answer ('wiki/x.md') whose cited pages changed since, with those pages' slugs."""
    out = {}
    for path in sorted(project.wiki_dir.glob("*.md")):
        changed = answer_staleness(project.wiki_dir, _meta(path))
        if changed:
            out[f"wiki/{path.name}"] = changed
    return out
