"""The deterministic lint at the cost of what changed: each page's own findings
(front matter, empty page, uncited claims, citations, staleness) are cached by what
they read (the page's bytes by stat, the stats of the sources it cites and lists,
the rules' settings), and the rules across pages (links, orphans, missing and
duplicate pages, the index, hand edits) run over facts cached per page, so an
unchanged page is neither read nor parsed. Same findings as runner.lint, by test.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wikic.config import Schema
from wikic.hashing import FINGERPRINT, digest, fingerprint
from wikic.lint import citations, rules
from wikic.lint.context import Context, Finding
from wikic.project import Project
from wikic.state import LintRow, Meta, State
from wikic.wiki.blocks import Block, Body, LinkRef
from wikic.wiki.page import Page
from wikic.wiki.read import INDEX, LOG, Wiki, attachments, page_files, read_page

VERSION = 3  # bump when a rule or the facts change: every page is checked again
# A page's own findings: what the page says, checked against the sources it cites and lists.
OWN = {
    "frontmatter": rules.frontmatter,
    "empty-page": rules.empty_page,
    **{r: fn for r, (_, fn) in citations.RULES.items() if r != "hand-edit"},
}
# Findings that read other pages or the build's records of every page (hand-edit: a page wikic
# wrote that is gone is a finding on no page there is).
ACROSS = {r: fn for r, (_, fn) in {**rules.RULES, **citations.RULES}.items() if r not in OWN}


@dataclass
class _Entry:
    page: Page
    row: LintRow | None  # a row to store (None: the cached one still holds)
    findings: list[Finding]  # the page's own findings (filled after the check for a reread page)
    across: str  # a digest of what the rules across pages read of it (its bytes, for one always reread)


def cached_findings(
    project: Project, schema: Schema, levels: dict[str, str], state: State, fresh: bool = False
) -> tuple[list[Finding], Wiki]:
    """Every finding of the rules in `levels` (unsuppressed, without levels), and the wiki."""
    settings = fingerprint(
        [VERSION, sorted(r for r in levels if r in OWN), schema.lint.citation_threshold, schema.type_names()]
    )
    source_stats = state.source_stats()
    rows = {} if fresh else state.lint_pages()  # fresh (--force): every page read and checked
    stats: dict[str, tuple[int, int] | None] = {}
    entries: dict[str, _Entry] = {}
    index: Page | None = None
    for path in page_files(project.wiki_dir):
        rel = f"wiki/{path.name}"
        if path.name == LOG:
            continue
        if path.name == INDEX:
            index = read_page(path, rel)
            continue
        entry = _entry(project.root, path, rel, rows.get(rel), settings, source_stats, stats)
        entries[entry.page.slug] = entry
    wiki = Wiki(
        project.root, {slug: e.page for slug, e in entries.items()}, index, attachments(project.wiki_dir)
    )
    ctx = Context(project, schema, wiki, state.file_hashes(), source_stats)
    found = _across(ctx, levels, entries, state, fresh)
    recheck = {slug: e.page for slug, e in entries.items() if e.row is not None}
    if recheck:
        own = Context(project, schema, Wiki(project.root, recheck), ctx.files, ctx.source_stats)
        by_page: dict[str, list[Finding]] = {}
        for rule, check in OWN.items():
            if rule in levels:
                for f in check(own):
                    by_page.setdefault(f.path, []).append(f)
        for e in entries.values():
            if e.row is not None:
                e.findings = by_page.get(e.page.rel, [])
    for e in entries.values():
        found.extend(e.findings)
    _store(state, entries, rows)
    return found, wiki


def _across(
    ctx: Context, levels: dict[str, str], entries: dict[str, _Entry], state: State, fresh: bool
) -> list[Finding]:
    """The findings of the rules across pages: taken from the last lint when nothing they
    read changed (every page's facts, the index, attachments, what wikic wrote, the settings);
    an edit that changes only pages' text and citations (most do) leaves them as they were."""
    wiki = ctx.wiki
    files = ctx.files or {}
    index = wiki.index
    seen = (index.hash, index.read_error, index.hash == files.get(index.rel)) if index is not None else None
    parts: list[Any] = [
        VERSION,
        sorted(r for r in levels if r in ACROSS),
        ctx.schema.lint.model_dump(),
        ctx.schema.type_names(),
        seen,
        sorted(wiki.files),
    ]
    parts.append(sorted(files))  # hand-edit: a recorded page that is gone; and, per page, whether
    for e in entries.values():  # its bytes are still what wikic wrote
        parts.append((e.page.rel, e.across, e.page.hash == files.get(e.page.rel)))
    key = digest(repr(parts), FINGERPRINT)
    saved = json.loads(state.get_meta(Meta.LINT_ACROSS) or "{}")
    if not fresh and saved.get("key") == key:
        return [_finding(f) for f in saved["findings"]]
    found: list[Finding] = []
    for rule, check in ACROSS.items():
        if rule in levels:
            found.extend(check(ctx))
    findings = [_finding_json(f) for f in found]
    state.set_meta(Meta.LINT_ACROSS, json.dumps({"key": key, "findings": findings}, ensure_ascii=False))
    return found


def _store(state: State, entries: dict[str, _Entry], rows: dict[str, LintRow]) -> None:
    keep = {e.page.rel for e in entries.values()}
    new = []
    for e in entries.values():
        if e.row is not None and e.row.facts:
            findings = json.dumps([_finding_json(f) for f in e.findings], ensure_ascii=False)
            new.append(LintRow(e.row.rel, e.row.size, e.row.mtime_ns, e.row.key, e.row.facts, findings))
    gone = [rel for rel in rows if rel not in keep]
    if new or gone:
        state.set_lint_pages(new, gone)


def _entry(
    root: Path,
    path: Path,
    rel: str,
    row: LintRow | None,
    settings: str,
    source_stats: dict[str, tuple[int, int, str]],
    stats: dict[str, tuple[int, int] | None],
) -> _Entry:
    """The page from its cached facts when its bytes (by stat) and what its findings read are
    as they were; else read, parsed and marked for its own rules."""
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if (
        st is not None
        and row is not None
        and row.facts
        and (row.size, row.mtime_ns) == (st.st_size, st.st_mtime_ns)
    ):
        facts = json.loads(row.facts)
        key = _key(root, settings, facts["deps"], source_stats, stats)
        page = _page(rel, facts)
        if key == row.key:
            return _Entry(page, None, [_finding(f) for f in json.loads(row.findings)], facts["across"])
    page = read_page(path, rel)
    facts = _facts(page)
    key = _key(root, settings, facts["deps"] if facts else [], source_stats, stats)
    size, mtime = (st.st_size, st.st_mtime_ns) if st is not None else (-1, -1)
    text = json.dumps(facts, ensure_ascii=False) if facts else ""
    across = facts["across"] if facts else repr((page.hash, page.read_error))
    return _Entry(page, LintRow(rel, size, mtime, key, text, ""), [], across)


def _key(
    root: Path,
    settings: str,
    deps: list[str],
    source_stats: dict[str, tuple[int, int, str]],
    stats: dict[str, tuple[int, int] | None],
) -> str:
    """What a page's own findings read besides its bytes: the rules' settings, and for each
    source it cites or lists, the file's stat and what the last build recorded of it."""
    parts: list[Any] = [settings]
    for rel in deps:
        if rel not in stats:
            try:
                st = (
                    os.stat(root / rel) if rel.startswith("sources/") and ".." not in rel.split("/") else None
                )
                stats[rel] = (st.st_size, st.st_mtime_ns) if st is not None else None
            except OSError:
                stats[rel] = None
        parts.append((rel, stats[rel], source_stats.get(rel)))
    return digest(repr(parts), FINGERPRINT)  # repr: plain tuples and strings, cheaper than JSON


# --- a page's facts: what the rules across pages read of it ---------------------------
def _facts(page: Page) -> dict[str, Any] | None:
    """What the rules across pages read of the page, JSON-able (with "across", a digest of just
    that, and "deps", the sources its own findings read); None for a page that is always reread
    (a saved answer, whose staleness depends on other pages; front matter JSON cannot hold)."""
    if page.type == "answer" or page.read_error:
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
    facts["across"] = fingerprint(facts)
    facts["hash"] = page.hash
    facts["deps"] = sorted(cited | set(page.sources))
    return facts


def _page(rel: str, facts: dict[str, Any]) -> Page:
    """A page as the rules across pages see it, from its facts: no reading, no parsing."""
    page = Page(
        rel, "", facts["meta"], "", facts["body_line"], facts["meta_error"], facts["fm"], None, facts["hash"]
    )
    blocks = [Block("heading", facts["h1"], 0, 0, "", True)] if facts["h1"] else []
    blocks += [Block("paragraph", text, line, line, "topics", False) for text, line in facts["topics"]]
    links = [LinkRef(t, a, lab, raw, line) for t, a, lab, raw, line in facts["links"]]
    if links:
        blocks.append(Block("paragraph", "", links[0].line, links[-1].line, "linked", False, links))
    bold = [(t, n) for t, n in facts["bold"]]
    page.__dict__["_read_body"] = Body(blocks, bold, set(facts["disabled"]), facts["content"])
    page.__dict__["links"] = links
    return page


def _finding_json(f: Finding) -> list[Any]:
    return [f.rule, f.path, f.line, f.message, f.fix, list(f.edit) if f.edit else None, list(f.also)]


def _finding(data: list[Any]) -> Finding:
    rule, path, line, message, fix, edit, also = data
    return Finding(rule, path, line, message, fix, edit=tuple(edit) if edit else None, also=tuple(also))
