"""The deterministic lint rules that look past the page: at the sources it cites
and was built from, and at what the build recorded (stale-page, hand-edit,
uncited-claim, bad-citation)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from wikic.lint.context import Context, Finding
from wikic.wiki.blocks import Block
from wikic.wiki.overlap import content_words, plain
from wikic.wiki.page import Citation, Page
from wikic.wiki.support import cited_sentences, judge

MIN_WORDS = 4  # a paragraph shorter than this is not a claim
MIN_CONTENT = 3  # support is only judged on sentences with this many content words


# --- stale-page ------------------------------------------------------------------
def _front_line(page: Page, needle: str) -> int:
    head = page.text[: page.text.find("\n---\n", 3) + 1] if page.has_front_matter else ""
    pos = head.find(needle)
    return head.count("\n", 0, pos) + 1 if pos >= 0 else 1


def _changed(ctx: Context, rel: str) -> str | None:
    """Why a source is not what the last build read, or None when it is (or we cannot tell)."""
    stats, gone = ctx.statted
    if rel in stats:  # stat'ed already in this lint
        now = stats[rel]
        if now is None:
            return "no longer exists" if rel in gone else None
    else:
        try:
            st = os.stat(os.path.join(ctx.project.root, rel))  # once per source cited: no Path made
        except FileNotFoundError:
            return "no longer exists"
        except OSError:
            return None
        now = (st.st_size, st.st_mtime_ns)
    recorded = (ctx.source_stats or {}).get(rel)
    if recorded is None or now == (recorded[0], recorded[1]):
        return None
    text = ctx.sources.get(rel)
    if isinstance(text, str):
        return f"can no longer be read ({text})"
    return None if recorded[2] in (text.hash, text.raw_hash) else "changed since the last build"


def stale_page(ctx: Context) -> Iterator[Finding]:
    verdicts: dict[str, str | None] = {}
    for page in ctx.wiki.pages.values():
        reasons: list[tuple[str, str]] = []
        for rel in page.sources:
            if not rel.startswith("sources/") or ".." in rel.split("/"):
                continue  # the frontmatter rule reports it
            if rel not in verdicts:
                verdicts[rel] = _changed(ctx, rel)
            if (why := verdicts[rel]) is not None:
                reasons.append((rel, why))
        if reasons:
            said = "; and ".join(f"{rel}, which {why}" for rel, why in reasons)
            yield Finding(
                "stale-page",
                page.rel,
                _front_line(page, reasons[0][0]),
                f"built from {said}; run `wikic build`",
            )
        if page.type == "answer":  # a saved `wikic ask` answer: its cited pages changed since
            yield from _stale_answer(ctx, page)


def _stale_answer(ctx: Context, page: Page) -> Iterator[Finding]:
    from wikic.ask.answers import answer_staleness

    changed = answer_staleness(ctx.project.wiki_dir, page.meta)
    if changed:
        yield Finding(
            "stale-page",
            page.rel,
            _front_line(page, "cited_hashes"),
            f"cites pages that changed since it was saved ({', '.join(changed)}); "
            "ask again with `wikic ask --save`",
        )


# --- hand-edit -------------------------------------------------------------------
def hand_edit(ctx: Context) -> Iterator[Finding]:
    wiki = ctx.wiki
    on_disk = {p.rel: p.hash for p in wiki.pages.values()}
    if wiki.index is not None:
        on_disk[wiki.index.rel] = wiki.index.hash
    return hand_edits(ctx.files or {}, on_disk, ctx.project.root)


def hand_edits(files: Mapping[str, str], on_disk: Mapping[str, str], root: Path) -> Iterator[Finding]:
    """`files`: what wikic wrote (path -> hash); `on_disk`: the pages there are (path -> hash
    of their bytes, "" when unreadable)."""
    for rel, recorded in sorted(files.items()):
        if not rel.endswith(".md") or rel.endswith("/log.md"):
            continue
        found = on_disk.get(rel)
        if found is None and not (root / rel).exists():
            yield Finding(
                "hand-edit",
                rel,
                1,
                "wikic wrote this page but it was deleted; the next build writes it again",
            )
        elif found and found != recorded:
            yield Finding(
                "hand-edit",
                rel,
                1,
                "edited by hand since wikic wrote it: the next build keeps the "
                "edit and reports a conflict (`wikic build --force` overwrites it)",
            )


# --- uncited-claim ---------------------------------------------------------------
def uncited_claim(ctx: Context) -> Iterator[Finding]:
    topic_types = ctx.topic_types()
    for page in ctx.wiki.pages.values():
        if page.type not in topic_types:
            continue
        for block in page.prose():
            if not block.citations and len(plain(block.text).split()) >= MIN_WORDS:
                yield Finding(
                    "uncited-claim",
                    page.rel,
                    block.line,
                    "this paragraph cites no source lines; cite them or remove the claim",
                )


# --- bad-citation ----------------------------------------------------------------
def citation_problem(ctx: Context, cite: Citation) -> str | None:
    text = ctx.sources.get(cite.source)
    if isinstance(text, str):
        return f"cites {cite.source}, which {text}"
    if cite.start < 1 or cite.end < cite.start:
        return f"cites lines {cite.start}-{cite.end} of {cite.source}: not a line range"
    if cite.end > len(text.lines):
        return f"cites line {cite.end} of {cite.source}, which has {len(text.lines)} lines"
    return None


def check_block(ctx: Context, page: Page, block: Block, prose: bool) -> Iterator[Finding]:
    valid = []
    for ref in block.citations:
        problem = citation_problem(ctx, ref.citation)
        if problem:
            yield Finding("bad-citation", page.rel, ref.line, problem)
        elif not ref.consistent:
            yield Finding(
                "bad-citation", page.rel, ref.line, f"{ref.raw}: its label and its link name different lines"
            )
        else:
            valid.append(ref.citation)
    if prose and valid:
        yield from _unsupported(ctx, page, block, valid)


def _cited_lines(ctx: Context, cites: list[Citation]) -> list[str]:
    lines: list[str] = []
    for cite in cites:
        text = ctx.sources.get(cite.source)
        if not isinstance(text, str):
            lines += text.lines[cite.start - 1 : cite.end]
    return lines


def _unsupported(ctx: Context, page: Page, block: Block, valid: list[Citation]) -> Iterator[Finding]:
    """Each sentence judged against the lines cited after it (the shared check); a sentence
    after the paragraph's last citation against all of them."""
    threshold = ctx.schema.lint.citation_threshold
    said = cited_sentences(block.text, [(r.at, r.raw, r.citation) for r in block.citations])
    for sentence, cites in said:
        if len(content_words(plain(sentence))) < MIN_CONTENT:
            continue
        cites = [c for c in cites if c in valid] or valid
        verdict = judge(sentence, _cited_lines(ctx, cites), threshold)
        if verdict.ok:
            continue
        if verdict.reason.startswith("its lines hold only"):
            unit = "this paragraph's words" if len(said) == 1 else f'the words of "{_snippet(sentence)}"'
            why = f"the cited lines contain only {verdict.score:.0f}% of {unit}"
        else:
            why = f'"{_snippet(sentence)}" {verdict.reason}'
        yield Finding(
            "bad-citation",
            page.rel,
            block.line,
            f"{why} (lint.citation_threshold is {threshold}); cite the lines that say it",
        )


def _snippet(sentence: str, limit: int = 60) -> str:
    text = plain(sentence)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def bad_citation(ctx: Context) -> Iterator[Finding]:
    for page in ctx.wiki.pages.values():
        prose = {id(b) for b in page.prose()}
        for block in page.blocks:
            if block.citations:
                yield from check_block(ctx, page, block, id(block) in prose)


RULES = {
    "stale-page": ("warning", stale_page),
    "hand-edit": ("warning", hand_edit),
    "uncited-claim": ("warning", uncited_claim),
    "bad-citation": ("error", bad_citation),
}
