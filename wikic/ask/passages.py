"""Pages cut into the units `ask` selects when the wiki is larger than the room:
sentences, each with its page, its section, the source lines it cites and the
pages it links to. A sentence is never cut; a sentence without a citation of its
own takes the next citation of its paragraph (the build cites a paragraph once,
at its end)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from wikic.wiki import support
from wikic.wiki.page import (
    BOOKKEEPING_SECTIONS,
    CITATION,
    CITATION_MD,
    COMMENT,
    LINKED_FROM,
    Citation,
    Page,
    parse_citations,
    parse_links,
    plain_links,
)

HIDDEN = re.compile(r"\x00(\d+)\x00")  # a citation held out of the way while a paragraph is split
LEADING_HIDDEN = re.compile(r"(?:\x00\d+\x00\s*)+")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+")


@dataclass
class Sentence:
    """One sentence of a page as the model is shown it, with where it stands and what it cites."""

    page: Page
    section: str  # the heading above it, "" before the first
    text: str  # plain: no citations or link markup
    block: int  # the paragraph or list item it belongs to, in page order
    order: int  # its position in the page
    cites: list[Citation] = field(default_factory=list)
    links: list[str] = field(default_factory=list)  # link targets in the sentence

    @property
    def key(self) -> tuple[str, int]:
        return (self.page.slug, self.order)


def sentences(page: Page) -> list[Sentence]:
    """The page's prose and list items as sentences, bookkeeping sections (Sources,
    Topics, Linked from) left out: they name files and pages, not facts."""
    body = LINKED_FROM.sub("", COMMENT.sub("", page.body))
    out: list[Sentence] = []
    section, skip, block = "", False, 0
    for para in _blocks(body):
        if para.startswith("#"):
            level, _, heading = para.partition(" ")
            if level == "#":
                continue  # the title line: the page's title goes with every sentence anyway
            section = plain_links(heading).strip()
            skip = section.casefold() in BOOKKEEPING_SECTIONS
            continue
        if skip:
            continue
        block += 1
        out += _split(page, section, para, block, len(out))
    return out


def _blocks(body: str) -> list[str]:
    """Headings, paragraphs (lines joined) and list items, in order."""
    out: list[str] = []
    current: list[str] = []

    def close() -> None:
        if current:
            out.append(" ".join(current))
            current.clear()

    for line in body.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or LIST_ITEM.match(line):
            close()
        if stripped.startswith("#"):
            out.append(stripped)
        elif LIST_ITEM.match(line):
            current.append(LIST_ITEM.sub("", line).strip())
        elif stripped:
            current.append(stripped)
    close()
    return out


def split_cited(para: str) -> list[str]:
    """A paragraph's sentences, each with the citations written after it: in "One. [a.md:3](..)
    Two." the citation ends the first sentence, not starts the second."""
    cites: list[str] = []

    def hide(m: re.Match[str]) -> str:
        cites.append(m.group(0))
        return f"\x00{len(cites) - 1}\x00"

    pieces: list[str] = []
    for piece in support.sentences(CITATION.sub(hide, para)):
        lead = LEADING_HIDDEN.match(piece)
        if lead and pieces:
            pieces[-1] += " " + lead.group(0).strip()
            piece = piece[lead.end() :]
        if piece.strip():
            pieces.append(piece)
    return [HIDDEN.sub(lambda m: cites[int(m.group(1))], p) for p in pieces]


def _split(page: Page, section: str, para: str, block: int, start: int) -> list[Sentence]:
    out: list[Sentence] = []
    for raw in split_cited(para):
        text = " ".join(plain_links(CITATION_MD.sub("", raw)).replace("**", "").split())
        if not re.search(r"\w", text):
            continue
        cites = [c for c, _ in parse_citations(raw)]
        links = [link.target for link in parse_links(raw)]
        out.append(Sentence(page, section, text, block, start + len(out), cites, links))
    following: list[Citation] = []
    for s in reversed(out):  # an uncited sentence takes the next citation of its paragraph
        if s.cites:
            following = s.cites
        else:
            s.cites = list(following)
    return out


def line_ref(cite: Citation) -> str:
    """A citation as "sources/x.md:3" or "sources/x.md:3-4"."""
    lines = f"{cite.start}" if cite.end == cite.start else f"{cite.start}-{cite.end}"
    return f"{cite.source}:{lines}"
