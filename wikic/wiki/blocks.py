"""The block structure of a Markdown page body: headings, paragraphs (top level
or inside lists and quotes), HTML and code blocks, with their lines.

markdown-it-py (block rules only) reads every page. Pages in the plain subset
that wikic itself writes (ATX headings, paragraphs, one-level `- ` lists; no
indentation, code, HTML, quotes or other list markers) are read by a line
scanner that gives the same blocks about ten times faster; anything outside
that subset goes to markdown-it. tests/test_lint_reader.py holds the two to
the same answers.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from markdown_it import MarkdownIt

_MD = MarkdownIt("commonmark")
_MD.core.ruler.disable(["inline", "text_join"])
_MD.block.ruler.disable(["reference"])  # link reference definitions: wikis do not use them

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


def markdown_blocks(body: str) -> list[RawBlock]:
    out: list[RawBlock] = []
    nesting = 0
    tokens = _MD.parse(body)
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
