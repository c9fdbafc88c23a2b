"""What the lint cache keeps of a page: the facts the rules across pages read of it (its
names, links, bold terms, Topics items, switches), as JSON and back to a page those rules can
read without the file; and findings as JSON."""

from __future__ import annotations

import json
from typing import Any

from wikic.hashing import quick_fingerprint
from wikic.lint.context import Finding
from wikic.wiki.blocks import Block, Body, LinkRef
from wikic.wiki.page import Page

Facts = dict[str, Any]


def facts_of(page: Page, answer: bool = False) -> dict[str, Any] | None:
    """What the rules across pages read of the page, JSON-able (with "across", a digest of just
    that, and "deps", the sources its own findings read); None for a page that is always reread
    (a saved answer, whose staleness depends on other pages, but with `answer`: what the rules
    across pages read of it all the same; front matter JSON cannot hold)."""
    if (page.type == "answer" and not answer) or page.read_error:
        return None
    try:
        meta_text = json.dumps(page.meta, ensure_ascii=False)
    except (TypeError, ValueError):
        return None
    if json.loads(meta_text) != page.meta:
        return None
    h1 = next((b.text for b in page.blocks if b.kind == "heading"), "")
    topics = [
        [b.text, b.line]
        for b in page.blocks
        if b.section == "topics" and b.kind == "paragraph" and not b.links
    ]
    cited = {c.citation.source for c in page.citations}
    facts = {
        "meta": page.meta,
        "meta_error": page.meta_error,
        "fm": page.has_front_matter,
        "body_line": page.body_line,
        "h1": h1,
        "links": [[k.target, k.anchor, k.label, k.raw, k.line] for k in page.links],
        "bold": [[t, n] for t, n in page.bold],
        "topics": topics,
        "disabled": sorted(page.disabled),
        "content": page.has_content,
    }
    facts["across"] = quick_fingerprint(facts)  # by repr: JSON with sorted keys was a third of this
    facts["hash"] = page.hash
    facts["deps"] = sorted(cited | set(page.sources))
    return facts


def folded(facts: Facts | None) -> str:
    """What the rules across pages resolve against the wiki's names of a page (its link
    targets, labels, bold terms and Topics items), casefolded: where a build whose pages came
    looks for their names (lint/came.py)."""
    if facts is None:
        return ""
    texts = [t for target, _, label, _, _ in facts["links"] for t in (target, label or "")]
    texts += [term for term, _ in facts["bold"]] + [text for text, _ in facts["topics"]]
    return "\n".join(texts).casefold()


def page_of(rel: str, facts: dict[str, Any]) -> Page:
    """A page as the rules across pages see it, from its facts: no reading, no parsing."""
    page = _bare(rel, facts)
    _fill(
        page, facts["h1"], facts["links"], facts["bold"], facts["topics"], facts["disabled"], facts["content"]
    )
    return page


def head_page(rel: str, facts: dict[str, Any]) -> Page:
    """page_of without the links, bold terms and Topics items: enough for its names, type and
    switches (names.head_of), in a fraction of the time."""
    page = _bare(rel, facts)
    _fill(page, facts["h1"], [], [], [], facts["disabled"], facts["content"])
    return page


Cross = tuple[list[list[Any]], list[list[Any]], list[list[Any]]]  # links, bold terms, Topics items


def cross_of(facts: dict[str, Any]) -> Cross:
    """What the rules across pages read of a page besides its head (names.Head)."""
    return facts["links"], facts["bold"], facts["topics"]


def cross_page(rel: str, cross: Cross) -> Page:
    """A page with only what cross_of keeps: as the rules across pages read its links, bold
    terms and Topics items (not its names, type or switches: its Head has those)."""
    page = Page(rel, "")
    _fill(page, "", *cross, [], True)
    return page


def _bare(rel: str, facts: dict[str, Any]) -> Page:
    meta, line, error, fm = facts["meta"], facts["body_line"], facts["meta_error"], facts["fm"]
    return Page(rel, "", meta, "", line, error, fm, None, facts["hash"])


def _fill(
    page: Page,
    h1: str,
    links_facts: list[list[Any]],
    bold_facts: list[list[Any]],
    topics: list[list[Any]],
    disabled: list[str],
    content: bool,
) -> None:
    """The page's body as its facts say it (blocks, links, bold terms, switches)."""
    blocks = [Block("heading", h1, 0, 0, "", True)] if h1 else []
    blocks += [Block("paragraph", text, line, line, "topics", False) for text, line in topics]
    links = [LinkRef(t, a, lab, raw, line) for t, a, lab, raw, line in links_facts]
    if links:
        blocks.append(Block("paragraph", "", links[0].line, links[-1].line, "linked", False, links))
    bold = [(t, n) for t, n in bold_facts]
    page.__dict__["_read_body"] = Body(blocks, bold, set(disabled), content)
    page.__dict__["links"] = links


def finding_json(f: Finding) -> list[Any]:
    return [f.rule, f.path, f.line, f.message, f.fix, list(f.edit) if f.edit else None, list(f.also)]


def json_finding(data: list[Any]) -> Finding:
    rule, path, line, message, fix, edit, also = data
    return Finding(rule, path, line, message, fix, edit=tuple(edit) if edit else None, also=tuple(also))
