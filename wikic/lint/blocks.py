"""bad-citation by block, at the cost of the blocks that changed: a page the lint summary reads
again after an edit (totals.py) is mostly as it was (a topic page rewritten because one of its
hundred sources changed), and checking its citations reads every source it cites. Each block's
findings are kept by what they read (the block's text and citations, whether it is prose, the
cited sources' stats and what the build read of them, the rules' settings): a block whose key
is kept is not checked again, so only the sources of the blocks that changed are read."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping

from wikic.hashing import FINGERPRINT, digest
from wikic.lint import citations
from wikic.lint.context import Context, Finding
from wikic.lint.entries import Seen
from wikic.lint.facts import finding_json, json_finding
from wikic.wiki.blocks import Block
from wikic.wiki.page import Page

Kept = Mapping[str, str]  # block key -> its findings (JSON), lines counted from the block's


def key(seen: Seen, block: Block, prose: bool) -> str:
    """What a block's bad-citation findings read (see the module); Keys(seen) makes many."""
    return Keys(seen)(block, prose)


class Keys:
    """Block keys for one lint (see the module). Each part after its length, joined, not
    repr'd: a topic page of a 100,000-source wiki has 3,000 blocks, so the parts every key
    shares (the settings, a source's) are made once. A paragraph's citations, their lines and
    labels are read from its text (blocks.py scans the text it keeps): the text says them; a
    heading's text is kept without its marks, so they are added."""

    def __init__(self, seen: Seen) -> None:
        self.seen = seen
        settings = _part(seen.settings)
        self.heads = (settings + _part(""), settings + _part("prose"))
        self.sources: dict[str, str] = {}  # source -> its part

    def __call__(self, block: Block, prose: bool) -> str:
        parts = [self.heads[prose], _part(block.text)]
        cites = block.citations
        if block.kind != "paragraph":
            for r in cites:
                c = r.citation
                parts += [_part(r.raw), _part(f"{r.line - block.line} {r.consistent} {c.start} {c.end}")]
        for rel in (
            [cites[0].citation.source] if len(cites) == 1 else sorted({r.citation.source for r in cites})
        ):
            part = self.sources.get(rel)
            if part is None:
                part = self.sources[rel] = _part(self.seen.source_repr(rel))
            parts.append(part)
        return digest("".join(parts), FINGERPRINT)


def _part(text: str) -> str:
    return f"{len(text)}:{text}"


def bad_citations(
    seen: Seen, ctx: Context, page: Page, kept: Kept, now: dict[str, str], used: set[str]
) -> Iterator[Finding]:
    """The page's bad-citation findings: a block's from `kept` where its key is there (put in
    `used`), else checked; every block's key and findings put in `now`."""
    prose = {id(b) for b in page.prose()}
    keys = Keys(seen)
    for block in page.blocks:
        if not block.citations:
            continue
        at = keys(block, id(block) in prose)
        raw = kept.get(at)
        if raw is not None:
            used.add(at)
        else:
            found = list(citations.check_block(ctx, page, block, id(block) in prose))
            raw = json.dumps([finding_json(_moved(f, -block.line)) for f in found], ensure_ascii=False)
        now[at] = raw
        if raw != "[]":  # most blocks' findings: none
            for f in json.loads(raw):
                yield _moved(json_finding(f), block.line, page.rel)


def _moved(f: Finding, by: int, path: str | None = None) -> Finding:
    return Finding(f.rule, path or f.path, f.line + by, f.message, f.fix, f.level, f.edit, f.also)
