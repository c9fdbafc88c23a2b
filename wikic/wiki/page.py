"""What a wiki page is: safe slugs, seals, wikilinks and citations, its plain
text, and the one page model (Page) that the build, lint and ask read pages into."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import quote, unquote

from wikic.hashing import CONTENT, digest, pieces_digest
from wikic.wiki.frontmatter import split_front_matter

if TYPE_CHECKING:
    from wikic.wiki.blocks import Block, Body, CiteRef, LinkRef

RESERVED = {"index", "log", "con", "prn", "aux", "nul", "readme"} | {
    f"{d}{i}" for d in ("com", "lpt") for i in range(10)
}
MAX_SLUG = 80
WIKILINK = re.compile(r"\[\[([^\[\]|#\n]*)(#[^\[\]|\n]*)?(?:\|([^\[\]\n]*))?\]\]")
# a PDF's citation also names the page its lines are on: (../sources/r.pdf#page=7&L120-L122)
CITATION = re.compile(
    r"\[([^\[\]\n]+?):(\d+)(?:-(\d+))?\]\(\.\./(sources/[^)\s#]+)#(?:page=\d+&)?L(\d+)(?:-L(\d+))?\)"
)


SEAL = re.compile(r"\n<!-- wikic:([0-9a-f]{20}) -->\n\Z")


def seal(text: str) -> str:
    """Mark a file as written by wikic: a last line holding the hash of what precedes it.

    A page that still matches its seal is wikic's output, not a person's edit, even
    where .wikic/ is missing (a fresh clone) or older than the page (a git pull).
    """
    return f"{text}\n<!-- wikic:{digest(text, CONTENT)} -->\n"


def sealed_pieces(pieces: list[str]) -> str:
    """seal("".join(pieces)), hashed a piece at a time and joined once: a long text (index.md,
    18 MB at 100,000 pages) not copied whole to be sealed."""
    return "".join([*pieces, f"\n<!-- wikic:{pieces_digest(pieces, CONTENT)} -->\n"])


def seal_at(text: str) -> int:
    """Where the seal of a text wikic wrote starts (what it sealed: text[:seal_at(text)]); -1
    where it has none, or one not of its text (edited). Found from the end, and hashed where
    it is (index.md: 18 MB at 100,000 pages, not copied to be checked)."""
    at = text.rfind("\n<!-- wikic:")
    if at < 0 or text[at:] != f"\n<!-- wikic:{digest(text, CONTENT, end=at)} -->\n":
        return -1
    return at


def sealed_intact(text: str) -> bool:
    return seal_at(text) >= 0


def slugify(title: str) -> str:
    """A safe file stem: ascii letters, digits and dashes; never a path, never reserved."""
    text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:MAX_SLUG].strip("-")
    if not slug:
        slug = "page"
    if slug in RESERVED:
        slug += "-page"
    return slug


SAFE_FILE_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,200}\.md")


def is_safe_file_name(name: str) -> bool:
    """A page file name wikic may write or remove: one plain component of wiki/,
    no path, no hidden file, no `..`; whatever state.db or a model says."""
    return bool(SAFE_FILE_NAME.fullmatch(name)) and ".." not in name


def unique_slug(wanted: str, taken: set[str]) -> str:
    slug, n = wanted, 2
    while slug in taken:
        suffix = f"-{n}"
        slug = wanted[: MAX_SLUG - len(suffix)] + suffix
        n += 1
    return slug


TITLE_MARKS = re.compile(r"[\[\]#*_`<>|{}]")


def clean_title(text: str, limit: int = 120) -> str:
    """A title as shown to readers: one line, no Markdown or link syntax."""
    text = TITLE_MARKS.sub(" ", text)
    text = " ".join(text.split())
    return text[:limit].strip(" .:;,-")


class Citation(NamedTuple):  # a tuple, not a frozen dataclass: lint makes one per citation, 3x quicker
    source: str  # project-relative path, e.g. sources/a.md
    start: int
    end: int

    def markdown(self) -> str:
        label = self.source.removeprefix("sources/")
        lines = f"{self.start}" if self.start == self.end else f"{self.start}-{self.end}"
        anchor = f"L{self.start}" if self.start == self.end else f"L{self.start}-L{self.end}"
        return f"[{label}:{lines}](../{_quoted(self.source)}#{anchor})"


@lru_cache(maxsize=1 << 16)  # a source is cited by every page that draws on it, and again by lint
def _quoted(path: str) -> str:
    return quote(path)


def with_pages(text: str, page_starts: dict[str, tuple[int, ...]]) -> str:
    """Citations of paged sources (PDF) link to the page their first line is on, which a
    PDF viewer opens (#page=N); `page_starts`: each such source's first line of each page."""

    def repl(m: re.Match[str]) -> str:
        starts = page_starts.get(unquote(m.group(4)))
        if not starts or "#page=" in m.group(0):
            return m.group(0)
        page = max(bisect_right(starts, int(m.group(5))), 1)
        return m.group(0).replace("#L", f"#page={page}&L", 1)

    return CITATION.sub(repl, text) if page_starts else text


def parse_citations(text: str) -> list[tuple[Citation, int]]:
    """Citations in page text, with the character offset of each."""
    found = []
    for m in CITATION.finditer(text):
        start = int(m.group(5))
        end = int(m.group(6) or start)
        found.append((Citation(unquote(m.group(4)), start, end), m.start()))
    return found


UNLABELABLE = re.compile(r"[\[\]`\n]+")  # would end a [[link|label]] or hide it in code


def link_label(title: str, slug: str) -> str:
    """A page's title as the label of a wikilink that wikic writes (index.md, source lists,
    backlinks): brackets end the link, and a backtick can pair with one after it into code that
    hides it, so each run of them is a space; lint reads index.md's labels against the same."""
    if not UNLABELABLE.search(title):
        return title
    return " ".join(UNLABELABLE.sub(" ", title).split()) or slug


# a description that can make, hide or end no link, nor change the block it is in: no brackets,
# code spans, HTML or escapes (lint's index findings read only the index's links and blocks)
PLAIN = re.compile(r"[^\[\]`<>\\&\n\r\t\0]*")


def wikilink(slug: str, title: str) -> str:
    return f"[[{slug}|{link_label(title, slug)}]]"


@dataclass(frozen=True)
class Link:
    target: str
    label: str | None


def parse_links(text: str) -> list[Link]:
    return [Link(m.group(1).strip(), m.group(3)) for m in WIKILINK.finditer(text)]


BOOKKEEPING_SECTIONS = {"sources", "topics", "linked from"}
# Where the block reader and the wikilink pattern may differ: code spans and fences, indented
# code, raw HTML and comments (whose links lint reads in some places and not in others).
CODE_OR_HTML = re.compile(r"[`~<\t]|^ {4}", re.M)
CITATION_MD = re.compile(r"\s*\[[^\[\]\n]+?:\d+(?:-\d+)?\]\([^)\s]*\)")
LINKED_FROM = re.compile(r"^## Linked from\n.*?(?=^## |\Z)", re.S | re.M)
COMMENT = re.compile(r"<!--.*?-->", re.S)  # e.g. the seal line the build ends its pages with


def plain_links(text: str) -> str:
    """[[slug|Shown]] -> Shown, [[Name]] -> Name."""
    return WIKILINK.sub(lambda m: (m.group(3) or m.group(1)).strip(), text)


def plain_text(body: str) -> str:
    """A page body as a reader (or a model) needs it: no comments, citations, backlinks,
    link markup or title line."""
    body = LINKED_FROM.sub("", COMMENT.sub("", body))
    body = CITATION_MD.sub("", body)
    lines = body.strip().splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    text = plain_links("\n".join(lines))
    text = re.sub(r"^(- .*?):,?\s*$", r"\1", text, flags=re.M)  # "- Source:" once its citations are gone
    return re.sub(r"\n{3,}", "\n\n", text).strip()


@dataclass
class Page:
    """A page file: its front matter and body, read by the one parser. What lint needs
    besides (blocks with their links and citations, bold terms, suppressed rules) is
    read from the body on first use, so the build and ask do not pay for it."""

    rel: str  # project-relative posix path, wiki/x.md
    text: str  # the whole file, \n line ends
    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    body_line: int = 1  # line number in the file where the body starts
    meta_error: str | None = None  # why the front matter is unusable, with its line
    has_front_matter: bool = False
    read_error: str | None = None  # why the file could not be read at all
    hash: str = ""  # of the file's bytes, as hashing.bytes_hash (what state.files() records)

    @property
    def slug(self) -> str:
        return self.rel.rsplit("/", 1)[-1].removesuffix(".md")

    @property
    def title(self) -> str:
        title = self.meta.get("title")
        if isinstance(title, str) and title.strip():
            return title.strip()
        h1 = next((b.text for b in self.blocks if b.kind == "heading"), "")
        return h1.strip() or self.slug

    @property
    def type(self) -> str:
        kind = self.meta.get("type")
        return kind if isinstance(kind, str) else ""

    @property
    def aliases(self) -> list[str]:
        return _strings(self.meta.get("aliases"))

    @property
    def sources(self) -> list[str]:
        return _strings(self.meta.get("sources"))

    @cached_property
    def plain(self) -> str:
        """The body as ask shows it to the model (see plain_text)."""
        return plain_text(self.body)

    @cached_property
    def _read_body(self) -> Body:
        from wikic.wiki.blocks import read_body  # markdown-it: only when blocks are asked for

        return read_body(self.body, self.body_line)

    @property
    def blocks(self) -> list[Block]:
        return self._read_body.blocks

    @property
    def bold(self) -> list[tuple[str, int]]:
        return self._read_body.bold

    @property
    def disabled(self) -> set[str]:
        """Lint rules the page turns off with <!-- wikic-lint: disable=... -->."""
        return self._read_body.disabled

    @property
    def has_content(self) -> bool:
        """Any block besides headings."""
        return self._read_body.has_content

    @cached_property
    def links(self) -> list[LinkRef]:
        return [link for block in self.blocks for link in block.links]

    @property
    def citations(self) -> Iterator[CiteRef]:
        for block in self.blocks:
            yield from block.citations

    def link_targets(self) -> list[str]:
        """The targets of the page's [[links]] as lint reads them (lint/rules.py, the link
        graph of `wikic lint`), and so as the viewer and the build's backlinks do: none inside
        code or raw HTML. The wikilink pattern over the text gives the same where there is
        neither (every page wikic writes, once its seal is off), many times faster than the
        block reader, which reads the others."""
        body = SEAL.sub("\n", self.body)
        links = self.links if CODE_OR_HTML.search(body) else parse_links(body)
        return sorted({link.target for link in links if link.target})

    def prose(self) -> Iterator[Block]:
        """Top-level paragraphs outside the bookkeeping sections (Sources, Topics, Linked from)."""
        for block in self.blocks:
            if block.kind == "paragraph" and block.top_level and block.section not in BOOKKEEPING_SECTIONS:
                yield block


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, (str, int, float)) and str(v).strip()]
    return []


def split_page(text: str, rel: str = "") -> Page:
    """A page's text read by the one front-matter parser (frontmatter.split_front_matter);
    `rel` names the file (wiki/x.md), which gives the page its slug."""
    text = text.replace("\r\n", "\n") if "\r" in text else text
    fm = split_front_matter(text)
    return Page(rel, text, fm.meta, fm.body, fm.body_line, fm.error, fm.present)


def unreadable_page(rel: str, reason: str) -> Page:
    return Page(rel, "", read_error=reason)
