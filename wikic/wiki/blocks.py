"""The block structure of a Markdown page body: headings, paragraphs (top level
or inside lists and quotes), HTML and code blocks, with their lines; and what
lint reads in each block: [[links]], citations, bold terms and rule suppressions.

markdown-it-py (block rules only) reads every page. Pages in the plain subset
that wikic itself writes (ATX headings, paragraphs, one-level `- ` lists; no
indentation, code, HTML, quotes or other list markers) are read by a line
scanner that gives the same blocks about ten times faster; anything outside
that subset goes to markdown-it. tests/test_lint_reader.py holds the two to
the same answers. The inline text of each block is then scanned for wikilinks
and citations with code spans blanked out, so code blocks and `code` never
produce links.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import unquote

from wikic.wiki.page import CITATION, WIKILINK, Citation

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

HEADING = re.compile(r"(#{1,6}) (.*)")
# A line the scanner may take as paragraph text: it cannot start any other block.
PLAIN_START = re.compile(r"(?![-+*_=#>|<~`]|\d{1,9}[.)](?:\s|$))\S|\*\*[^*\s]")
NESTING_OPEN = {"bullet_list_open", "ordered_list_open", "blockquote_open"}
NESTING_CLOSE = {"bullet_list_close", "ordered_list_close", "blockquote_close"}


class RawBlock(NamedTuple):
    kind: str  # heading | paragraph | html | code
    content: str
    start: int  # first line, 0-based within the body
    end: int  # last line, inclusive
    top_level: bool  # not inside a list or a blockquote


def blocks(body: str) -> list[RawBlock]:
    """The body's blocks in order; the scanner's answer when it can give one."""
    quick = simple_blocks(body)
    return quick if quick is not None else markdown_blocks(body)


@cache
def _parser() -> MarkdownIt:
    """The CommonMark parser, made (and markdown_it imported) on the first body that the
    scanner cannot split: a build whose pages all scan never pays for it."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    md.core.ruler.disable(["inline", "text_join"])
    md.block.ruler.disable(["reference"])  # link reference definitions: wikis do not use them
    return md


def markdown_blocks(body: str) -> list[RawBlock]:
    out: list[RawBlock] = []
    nesting = 0
    tokens = _parser().parse(body)
    for i, tok in enumerate(tokens):
        if tok.type in NESTING_OPEN:
            nesting += 1
        elif tok.type in NESTING_CLOSE:
            nesting -= 1
        elif tok.map is None:
            continue
        elif tok.type == "html_block":
            out.append(RawBlock("html", tok.content, tok.map[0], tok.map[1] - 1, nesting == 0))
        elif tok.type in ("fence", "code_block"):
            out.append(RawBlock("code", tok.content, tok.map[0], tok.map[1] - 1, nesting == 0))
        elif tok.type == "inline":
            kind = "heading" if tokens[i - 1].type == "heading_open" else "paragraph"
            out.append(RawBlock(kind, tok.content, tok.map[0], tok.map[1] - 1, nesting == 0))
    return out


def _plain_line(line: str) -> bool:
    return PLAIN_START.match(line) is not None


SEAL_LINE = re.compile(r"<!-- wikic:[0-9a-f]{20} -->")


def simple_blocks(body: str) -> list[RawBlock] | None:
    """Blocks of a body in the plain subset, or None when markdown-it must read it."""
    if "\t" in body or "\0" in body or "\r" in body:
        return None
    out: list[RawBlock] = []
    para: list[str] = []  # the open paragraph's lines
    start = 0
    in_list = False  # inside a `- ` list (which a blank line and then a non-item line ends)
    after_blank = False

    def close(end: int) -> None:
        if para:
            out.append(RawBlock("paragraph", "\n".join(para).strip(), start, end, not in_list))
            para.clear()

    lines = body.split("\n")
    for n, line in enumerate(lines):
        if not line.strip(" "):  # markdown-it's blank: spaces only (a no-break space is text)
            close(n - 1)
            after_blank = True
            continue
        heading = HEADING.fullmatch(line) if line.startswith("#") else None
        if heading:
            if heading.group(2).rstrip().endswith("#"):
                return None  # a closing sequence: leave it to markdown-it
            close(n - 1)
            in_list = False
            out.append(RawBlock("heading", heading.group(2).strip(), n, n, True))
        elif after_blank and SEAL_LINE.fullmatch(line):  # the seal wikic ends its files with
            close(n - 1)
            in_list = False
            out.append(RawBlock("html", line + "\n", n, n, True))
        elif line.startswith("- "):
            item = line[2:]
            if not _plain_line(item):
                return None
            close(n - 1)
            in_list, para[:], start = True, [item], n
        elif _plain_line(line):
            if para and not after_blank:
                para.append(line)  # a paragraph's next line (in a list item: a lazy continuation)
            else:
                close(n - 1)
                in_list = False
                para[:], start = [line], n
        else:
            return None
        after_blank = False
    close(len(lines) - 1)
    return out


CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
BOLD = re.compile(r"\*\*(?!\s)([^*\n]{2,80}?)(?<!\s)\*\*")
SUPPRESS = re.compile(r"<!--\s*wikic-lint:\s*disable=([\w\s,-]+?)\s*-->")


class LinkRef(NamedTuple):  # NamedTuples, not frozen dataclasses: made for every link and citation read
    """One [[target#anchor|label]] as written, and where."""

    target: str
    anchor: str | None
    label: str | None
    raw: str
    line: int

    @property
    def text(self) -> str:
        """What a reader sees."""
        return (self.label if self.label is not None else self.target).strip()


class CiteRef(NamedTuple):
    citation: Citation
    raw: str
    line: int
    consistent: bool  # the label names the same file and lines as the link
    at: int = 0  # where `raw` starts in its block's text (cited_sentences splits the text there)


_tuple = tuple.__new__  # a NamedTuple made without its Python __new__: one per link and citation read


@dataclass(slots=True)  # one per paragraph and heading of every page lint reads
class Block:
    """A run of inline text: a paragraph, a list item's paragraph or a heading."""

    kind: str  # paragraph | heading
    text: str  # the inline source, code spans blanked
    line: int
    end_line: int
    section: str  # the nearest heading above it, casefolded ("" before any)
    top_level: bool  # not inside a list or a blockquote
    links: list[LinkRef] = field(default_factory=list)
    citations: list[CiteRef] = field(default_factory=list)


@dataclass
class Body:
    """What lint reads in a page body, with file line numbers."""

    blocks: list[Block] = field(default_factory=list)
    bold: list[tuple[str, int]] = field(default_factory=list)
    disabled: set[str] = field(default_factory=set)
    has_content: bool = False  # any block besides headings


def _blank_code(text: str) -> str:
    """Code spans replaced by spaces (newlines kept), so offsets and lines still match."""
    if "`" not in text:
        return text
    return CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _scan_inline(block: Block) -> None:
    text = block.text
    if "[" not in text:
        return
    first = block.line
    lines = "\n" in text  # else every match is on the block's first line: no counting
    for m in WIKILINK.finditer(text) if "[[" in text else ():
        line = first + text.count("\n", 0, m.start()) if lines else first
        target, anchor, label = m.groups()
        link = (target.strip(), anchor[1:] if anchor else None, label, m.group(0), line)
        block.links.append(_tuple(LinkRef, link))
    for m in CITATION.finditer(text) if "](../" in text else ():
        at = m.start()
        line = first + text.count("\n", 0, at) if lines else first
        name, first_label, last_label, linked, start_at, end_at = m.groups()
        start = int(start_at)
        end = int(end_at) if end_at else start
        source = unquote(linked) if "%" in linked else linked
        consistent = (
            name == source[8:]
            and source.startswith("sources/")
            and int(first_label) == start
            and (int(last_label) if last_label else start) == end
        )
        cite = _tuple(Citation, (source, start, end))
        block.citations.append(_tuple(CiteRef, (cite, m.group(0), line, consistent, at)))


def _heading_text(text: str) -> str:
    plain = WIKILINK.sub(lambda m: m.group(3) or m.group(1), text)
    return " ".join(plain.replace("*", "").replace("`", "").split())


def read_body(body: str, body_line: int) -> Body:
    """The body's blocks, links, citations, bold terms and suppressions; `body_line` is
    the file line the body starts on."""
    out = Body()
    section = ""
    for raw in blocks(body):
        if raw.kind in ("html", "code"):
            if raw.kind == "html":
                _suppressions(out, raw.content)
            out.has_content = True
            continue
        text = _blank_code(raw.content)
        block = Block(raw.kind, text, body_line + raw.start, body_line + raw.end, section, raw.top_level)
        _scan_inline(block)
        if raw.kind == "heading":
            block.text = _heading_text(block.text)
            section = block.text.casefold()
        else:
            out.has_content = True
            if "<!--" in block.text:
                _suppressions(out, block.text)
            for m in BOLD.finditer(block.text) if "**" in block.text else ():
                out.bold.append((m.group(1).strip(), block.line + block.text.count("\n", 0, m.start())))
        out.blocks.append(block)
    return out


def _suppressions(out: Body, text: str) -> None:
    for m in SUPPRESS.finditer(text):
        out.disabled |= {rule.strip() for rule in m.group(1).split(",") if rule.strip()}
