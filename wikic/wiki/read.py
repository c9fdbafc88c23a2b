"""Reading wiki/ into pages: front matter, headings, paragraphs, [[links]],
citations and bold terms, each with its line number in the file, and the link
graph between pages. Read-only; lint's view of the wiki.

Block structure comes from blocks.py (markdown-it-py, with an exact shortcut for
the plain Markdown wikic writes); the inline text of each block is then scanned
for wikilinks and citations with code spans blanked out, so code blocks and
`code` never produce links.
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import yaml

from wikic.fsutil import TMP_MARK, bytes_hash
from wikic.wiki.blocks import blocks
from wikic.wiki.page import CITATION, WIKILINK, Citation

INDEX = "index.md"
LOG = "log.md"
BOOKKEEPING_SECTIONS = {"sources", "topics", "linked from"}
CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
BOLD = re.compile(r"\*\*(?!\s)([^*\n]{2,80}?)(?<!\s)\*\*")
ATTACHMENT = re.compile(
    r"\.(png|jpe?g|gif|svg|webp|bmp|pdf|mp3|mp4|webm|ogg|wav|m4a|mov|canvas|excalidraw|csv|json|txt)$", re.I
)
SUPPRESS = re.compile(r"<!--\s*wikic-lint:\s*disable=([\w\s,-]+?)\s*-->")
LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Front matter as wikic writes it (plain keys, plain scalars that start with a letter,
# lists of such) reads the same without a YAML parser; anything else goes to PyYAML.
SIMPLE_KEY = re.compile(r"([A-Za-z_][\w-]*):(?: (.*))?")
SIMPLE_VALUE = re.compile(r"[A-Za-z][\w .,/()'+&-]*")
NOT_STRINGS = frozenset(["yes", "no", "true", "false", "on", "off", "null"])


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
    hash: str = ""  # of the file's bytes, as fsutil.bytes_hash (what state.files() records)
    _links: list[LinkRef] | None = field(default=None, repr=False)

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
    def links(self) -> list[LinkRef]:
        if self._links is None:
            self._links = [link for block in self.blocks for link in block.links]
        return self._links

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


def _plain(value: str) -> bool:
    return (
        bool(SIMPLE_VALUE.fullmatch(value))
        and value.casefold() not in NOT_STRINGS
        and ": " not in value
        and " #" not in value
        and value == value.rstrip()
    )


def simple_yaml(text: str) -> dict[str, Any] | None:
    """The mapping, when the text is in the simple subset; None means: ask PyYAML."""
    meta: dict[str, Any] = {}
    items: list[str] | None = None
    for line in text.split("\n"):
        if line.startswith("- ") and items is not None:
            if not _plain(line[2:]):
                return None
            items.append(line[2:])
            continue
        m = SIMPLE_KEY.fullmatch(line)
        if m is None or m.group(1) in meta:
            return None
        value = m.group(2)
        if value is None:
            items = meta[m.group(1)] = []
        elif _plain(value):
            meta[m.group(1)], items = value, None
        else:
            return None
    return {k: (v if v != [] else None) for k, v in meta.items()}


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
        meta = simple_yaml(text[4:end])
        if meta is None:
            meta = yaml.load(text[4:end], Loader=LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 2}: " if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        return {}, f"{where}invalid YAML in the front matter: {problem}", True, text[body_start:], body_line
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        return (
            {},
            "the front matter is not a mapping of keys (title:, type:, ...)",
            True,
            text[body_start:],
            body_line,
        )
    return meta, None, True, text[body_start:], body_line


def _blank_code(text: str) -> str:
    """Code spans replaced by spaces (newlines kept), so offsets and lines still match."""
    if "`" not in text:
        return text
    return CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _scan_inline(block: Block) -> None:
    text = block.text
    if "[" not in text:
        return
    for m in WIKILINK.finditer(text) if "[[" in text else ():
        line = block.line + text.count("\n", 0, m.start())
        anchor = m.group(2)[1:] if m.group(2) else None
        block.links.append(LinkRef(m.group(1).strip(), anchor, m.group(3), m.group(0), line))
    for m in CITATION.finditer(text) if "](../" in text else ():
        line = block.line + text.count("\n", 0, m.start())
        start, end = int(m.group(5)), int(m.group(6) or m.group(5))
        source = unquote(m.group(4))
        label_end = int(m.group(3) or m.group(2))
        consistent = f"sources/{m.group(1)}" == source and int(m.group(2)) == start and label_end == end
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
    for raw in blocks(body):
        if raw.kind == "html":
            _suppressions(page, raw.content)
            page.has_content = True
        elif raw.kind == "code":
            page.has_content = True
        else:
            block = Block(
                raw.kind,
                _blank_code(raw.content),
                body_line + raw.start,
                body_line + raw.end,
                section,
                raw.top_level,
            )
            _scan_inline(block)
            if raw.kind == "heading":
                block.text = _heading_text(block.text)
                section = block.text.casefold()
            else:
                page.has_content = True
                if "<!--" in block.text:
                    _suppressions(page, block.text)
                for m in BOLD.finditer(block.text) if "**" in block.text else ():
                    page.bold.append((m.group(1).strip(), block.line + block.text.count("\n", 0, m.start())))
            page.blocks.append(block)
    return page


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
    files: set[str] = field(default_factory=set)  # casefolded names of the other files (attachments)
    names: dict[str, str] = field(default_factory=dict)  # casefolded title or alias -> slug
    _slugs: dict[str, str] = field(default_factory=dict)  # casefolded slug -> slug
    _resolved: dict[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._slugs = {slug.casefold(): slug for slug in self.pages}
        ordered = sorted(self.pages.values(), key=lambda p: (p.type == "source", p.slug))
        for page in ordered:  # topic pages win a shared name over source pages, as in assemble
            for name in [page.title, *page.aliases]:
                self.names.setdefault(name.casefold().strip(), page.slug)

    def resolve(self, target: str) -> str | None:
        """A link target to a page slug: file stem first (as Obsidian does), then title or alias."""
        if target in self._resolved:
            return self._resolved[target]
        key = target.strip().removesuffix(".md").rsplit("/", 1)[-1].casefold()
        slug = self._slugs[key] if key in self._slugs else self.names.get(target.strip().casefold())
        self._resolved[target] = slug
        return slug

    def is_file(self, target: str) -> bool:
        """A link to an attachment that exists, like ![[diagram.png]] (not a page)."""
        name = target.strip().rsplit("/", 1)[-1].casefold()
        return not name.endswith(".md") and name in self.files

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
    """The .md files directly in wiki/, by name (no hidden or temporary files)."""
    try:
        entries = list(os.scandir(wiki_dir))
    except (FileNotFoundError, NotADirectoryError):
        return []
    names = sorted(
        e.name
        for e in entries
        if e.name.endswith(".md") and not e.name.startswith((".", TMP_MARK)) and e.is_file()
    )
    return [wiki_dir / name for name in names]


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside: reading a wiki makes many objects and no cycles,
    and the collector's passes over the growing heap cost a fifth of the time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_wiki(root: Path, wiki_dir: Path | None = None) -> Wiki:
    """Read every page under wiki/ (not recursive: the build writes a flat folder)."""
    with gc_paused():
        return _read_wiki(root, wiki_dir or root / "wiki")


def _read_wiki(root: Path, wiki_dir: Path) -> Wiki:
    pages: dict[str, Page] = {}
    index: Page | None = None
    prefix = wiki_dir.relative_to(root).as_posix() if wiki_dir.is_relative_to(root) else "wiki"
    for path in page_files(wiki_dir):
        rel = f"{prefix}/{path.name}"
        if path.name == LOG:
            continue
        try:
            raw = path.read_bytes()
        except OSError as exc:
            pages[path.stem] = unreadable_page(rel, f"cannot be read: {exc.strerror or exc}")
            continue
        try:
            page = read_page(rel, raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            page = unreadable_page(rel, f"is not valid UTF-8 (byte offset {exc.start})")
        page.hash = bytes_hash(raw)
        if path.name == INDEX:
            index = page
        else:
            pages[page.slug] = page
    return Wiki(root, pages, index, _attachments(wiki_dir))


def _attachments(wiki_dir: Path) -> set[str]:
    """Names of the files other than pages anywhere under wiki/ (images, PDFs, ...)."""
    found: set[str] = set()
    for _, dirnames, filenames in os.walk(wiki_dir):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        found.update(n.casefold() for n in filenames if not n.endswith(".md") and not n.startswith("."))
    return found
