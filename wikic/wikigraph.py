"""Reading wiki/ into pages: front matter, headings, paragraphs, [[links]],
citations and bold terms, each with its line number in the file, and the link
graph between pages. Read-only; shared by lint and ask.

Markdown structure comes from markdown-it-py (block rules only, for speed); the
inline text of each block is then scanned for wikilinks and citations with code
spans blanked out, so code blocks and `code` never produce links.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token

from wikic.fsutil import TMP_MARK
from wikic.pages import CITATION, WIKILINK, Citation

INDEX = "index.md"
LOG = "log.md"
BOOKKEEPING_SECTIONS = {"sources", "topics", "linked from"}
CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
BOLD = re.compile(r"\*\*(?!\s)([^*\n]{2,80}?)(?<!\s)\*\*")
SUPPRESS = re.compile(r"<!--\s*wikic-lint:\s*disable=([\w\s,-]+?)\s*-->")
LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_MD = MarkdownIt("commonmark")
_MD.core.ruler.disable(["inline", "text_join"])


@dataclass(frozen=True)
class LinkRef:
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


@dataclass(frozen=True)
class CiteRef:
    citation: Citation
    raw: str
    line: int
    consistent: bool  # the label names the same file and lines as the link


@dataclass
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
class Page:
    rel: str  # project-relative posix path, wiki/x.md
    slug: str
    text: str
    meta: dict[str, Any]
    meta_error: str | None = None  # why the front matter is unusable, with its line
    has_front_matter: bool = False
    body_line: int = 1
    read_error: str | None = None
    blocks: list[Block] = field(default_factory=list)
    bold: list[tuple[str, int]] = field(default_factory=list)
    disabled: set[str] = field(default_factory=set)
    has_content: bool = False  # any block besides headings

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

    @property
    def links(self) -> Iterator[LinkRef]:
        for block in self.blocks:
            yield from block.links

    @property
    def citations(self) -> Iterator[CiteRef]:
        for block in self.blocks:
            yield from block.citations

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


def split_front_matter(text: str) -> tuple[dict[str, Any], str | None, bool, str, int]:
    """(meta, error, has_front_matter, body, body_line); error names the file line."""
    if not text.startswith("---\n"):
        return {}, None, False, text, 1
    if text.startswith("---\n---\n"):
        return {}, None, True, text[8:], 3
    end = text.find("\n---\n", 3)
    if end == -1:
        if text.endswith("\n---"):
            end = len(text) - 4
        else:
            return {}, "the front matter is not closed by a line of ---", True, text, 1
    body_start = min(end + 5, len(text))
    body_line = text.count("\n", 0, body_start) + 1 if body_start < len(text) else text.count("\n") + 1
    try:
        meta = yaml.load(text[4:end], Loader=LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 2}: " if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        return {}, f"{where}invalid YAML in the front matter: {problem}", True, text[body_start:], body_line
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        return {}, "the front matter is not a mapping of keys (title:, type:, ...)", True, text[body_start:], body_line
    return meta, None, True, text[body_start:], body_line


def _blank_code(text: str) -> str:
    """Code spans replaced by spaces (newlines kept), so offsets and lines still match."""
    return CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _scan_inline(block: Block) -> None:
    text = block.text
    for m in WIKILINK.finditer(text):
        line = block.line + text.count("\n", 0, m.start())
        anchor = m.group(2)[1:] if m.group(2) else None
        block.links.append(LinkRef(m.group(1).strip(), anchor, m.group(3), m.group(0), line))
    for m in CITATION.finditer(text):
        line = block.line + text.count("\n", 0, m.start())
        start, end = int(m.group(5)), int(m.group(6) or m.group(5))
        source = unquote(m.group(4))
        label_end = int(m.group(3) or m.group(2))
        consistent = (f"sources/{m.group(1)}" == source and int(m.group(2)) == start and label_end == end)
        block.citations.append(CiteRef(Citation(source, start, end), m.group(0), line, consistent))


def _heading_text(text: str) -> str:
    plain = WIKILINK.sub(lambda m: m.group(3) or m.group(1), text)
    return " ".join(plain.replace("*", "").replace("`", "").split())


def read_page(rel: str, text: str) -> Page:
    text = text.replace("\r\n", "\n")
    slug = Path(rel).stem
    meta, error, has_fm, body, body_line = split_front_matter(text)
    page = Page(rel, slug, text, meta, error, has_fm, body_line)
    section = ""
    nesting = 0  # lists and blockquotes we are inside
    tokens = _MD.parse(body)
    for i, tok in enumerate(tokens):
        if tok.type in ("bullet_list_open", "ordered_list_open", "blockquote_open"):
            nesting += 1
        elif tok.type in ("bullet_list_close", "ordered_list_close", "blockquote_close"):
            nesting -= 1
        elif tok.type == "html_block":
            _suppressions(page, tok.content)
            page.has_content = True
        elif tok.type in ("fence", "code_block"):
            page.has_content = True
        elif tok.type == "inline" and tok.map:
            opener = tokens[i - 1]
            kind = "heading" if opener.type == "heading_open" else "paragraph"
            block = _block(tok, kind, body_line, section, nesting == 0)
            if kind == "heading":
                section = _heading_text(block.text).casefold()
                block.text = _heading_text(block.text)
            else:
                page.has_content = True
                _suppressions(page, block.text)
                for m in BOLD.finditer(block.text):
                    page.bold.append((m.group(1).strip(), block.line + block.text.count("\n", 0, m.start())))
            page.blocks.append(block)
    return page


def _block(tok: Token, kind: str, body_line: int, section: str, top_level: bool) -> Block:
    assert tok.map is not None
    block = Block(kind, _blank_code(tok.content), body_line + tok.map[0], body_line + tok.map[1] - 1,
                  section, top_level)
    _scan_inline(block)
    return block


def _suppressions(page: Page, text: str) -> None:
    for m in SUPPRESS.finditer(text):
        page.disabled |= {rule.strip() for rule in m.group(1).split(",") if rule.strip()}


def unreadable_page(rel: str, reason: str) -> Page:
    return Page(rel, Path(rel).stem, "", {}, read_error=reason)


@dataclass
class Wiki:
    """Every page of wiki/ (index.md and log.md apart) and how names resolve to pages."""

    root: Path
    pages: dict[str, Page]  # slug -> page
    index: Page | None = None
    names: dict[str, str] = field(default_factory=dict)  # casefolded title or alias -> slug
    _slugs: dict[str, str] = field(default_factory=dict)  # casefolded slug -> slug

    def __post_init__(self) -> None:
        self._slugs = {slug.casefold(): slug for slug in self.pages}
        ordered = sorted(self.pages.values(), key=lambda p: (p.type == "source", p.slug))
        for page in ordered:  # topic pages win a shared name over source pages, as in assemble
            for name in [page.title, *page.aliases]:
                self.names.setdefault(name.casefold().strip(), page.slug)

    def resolve(self, target: str) -> str | None:
        """A link target to a page slug: file stem first (as Obsidian does), then title or alias."""
        key = target.strip().removesuffix(".md").rsplit("/", 1)[-1].casefold()
        if key in self._slugs:
            return self._slugs[key]
        return self.names.get(target.strip().casefold())

    def outlinks(self, page: Page) -> set[str]:
        found = {self.resolve(link.target) for link in page.links if link.target}
        return {slug for slug in found if slug is not None}

    def inbound(self) -> dict[str, set[str]]:
        """slug -> the slugs of the other pages that link to it (index.md does not count)."""
        back: dict[str, set[str]] = {slug: set() for slug in self.pages}
        for page in self.pages.values():
            for target in self.outlinks(page):
                if target != page.slug:
                    back[target].add(page.slug)
        return back


def page_files(wiki_dir: Path) -> list[Path]:
    if not wiki_dir.is_dir():
        return []
    return sorted(p for p in wiki_dir.glob("*.md")
                  if not p.name.startswith(".") and not p.name.startswith(TMP_MARK) and p.is_file())


def read_wiki(root: Path, wiki_dir: Path | None = None) -> Wiki:
    """Read every page under wiki/ (not recursive: the build writes a flat folder)."""
    wiki_dir = wiki_dir or root / "wiki"
    pages: dict[str, Page] = {}
    index: Page | None = None
    for path in page_files(wiki_dir):
        rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else f"wiki/{path.name}"
        if path.name == LOG:
            continue
        try:
            page = read_page(rel, path.read_bytes().decode("utf-8"))
        except UnicodeDecodeError as exc:
            page = unreadable_page(rel, f"is not valid UTF-8 (byte offset {exc.start})")
        except OSError as exc:
            page = unreadable_page(rel, f"cannot be read: {exc.strerror or exc}")
        if path.name == INDEX:
            index = page
        else:
            pages[page.slug] = page
    return Wiki(root, pages, index)
