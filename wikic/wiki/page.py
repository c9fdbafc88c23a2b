"""What a wiki page is on disk: safe slugs, front matter, wikilinks and
citations, and splitting a page file back into its parts."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

import yaml

from wikic.hashing import CONTENT, digest

RESERVED = {"index", "log", "con", "prn", "aux", "nul", "readme"} | {
    f"{d}{i}" for d in ("com", "lpt") for i in range(10)
}
MAX_SLUG = 80
WIKILINK = re.compile(r"\[\[([^\[\]|#\n]*)(#[^\[\]|\n]*)?(?:\|([^\[\]\n]*))?\]\]")
CITATION = re.compile(r"\[([^\[\]\n]+?):(\d+)(?:-(\d+))?\]\(\.\./(sources/[^)\s#]+)#L(\d+)(?:-L(\d+))?\)")


SEAL = re.compile(r"\n<!-- wikic:([0-9a-f]{20}) -->\n\Z")


def seal(text: str) -> str:
    """Mark a file as written by wikic: a last line holding the hash of what precedes it.

    A page that still matches its seal is wikic's output, not a person's edit, even
    where .wikic/ is missing (a fresh clone) or older than the page (a git pull).
    """
    return f"{text}\n<!-- wikic:{digest(text, CONTENT)} -->\n"


def sealed_intact(text: str) -> bool:
    m = SEAL.search(text)
    return m is not None and digest(text[: m.start()], CONTENT) == m.group(1)


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


def clean_title(text: str, limit: int = 120) -> str:
    """A title as shown to readers: one line, no Markdown or link syntax."""
    text = re.sub(r"[\[\]#*_`<>|{}]", " ", text)
    text = " ".join(text.split())
    return text[:limit].strip(" .:;,-")


@dataclass(frozen=True)
class Citation:
    source: str  # project-relative path, e.g. sources/a.md
    start: int
    end: int

    def markdown(self) -> str:
        label = self.source.removeprefix("sources/")
        lines = f"{self.start}" if self.start == self.end else f"{self.start}-{self.end}"
        anchor = f"L{self.start}" if self.start == self.end else f"L{self.start}-L{self.end}"
        return f"[{label}:{lines}](../{quote(self.source)}#{anchor})"


def parse_citations(text: str) -> list[tuple[Citation, int]]:
    """Citations in page text, with the character offset of each."""
    found = []
    for m in CITATION.finditer(text):
        start = int(m.group(5))
        end = int(m.group(6) or start)
        found.append((Citation(unquote(m.group(4)), start, end), m.start()))
    return found


@dataclass(frozen=True)
class Link:
    target: str
    label: str | None


def parse_links(text: str) -> list[Link]:
    return [Link(m.group(1).strip(), m.group(3)) for m in WIKILINK.finditer(text)]


@dataclass
class PageFile:
    """A page split into its front matter and body."""

    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    body_line: int = 1  # line number in the file where the body starts


_CDUMPER = getattr(yaml, "CSafeDumper", None)  # libyaml's emitter, when PyYAML was built with it


def _plain(value: Any) -> bool:
    """Text that libyaml's emitter writes byte for byte as PyYAML's own: printable and in the
    Basic Multilingual Plane (they escape other characters differently); or lists of it."""
    if isinstance(value, str):
        return value.isprintable() and (not value or max(value) < "\U00010000")
    return isinstance(value, list) and all(_plain(v) for v in value)


def render_front_matter(meta: dict[str, Any]) -> str:
    fast = _CDUMPER is not None and all(_plain(k) and _plain(v) for k, v in meta.items())
    dumper = _CDUMPER if fast else yaml.SafeDumper  # the same bytes; C is ~20x faster
    dumped = yaml.dump(meta, Dumper=dumper, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{dumped}---\n"


def split_page(text: str) -> PageFile:
    """Front matter and body; a page without valid front matter has meta {} (lint reports it)."""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end != -1:
            try:
                meta = yaml.safe_load(text[4:end]) or {}
            except yaml.YAMLError:
                meta = None
            if isinstance(meta, dict):
                body = text[end + 5 :]
                return PageFile(meta, body, text[: end + 5].count("\n") + 1)
    return PageFile({}, text, 1)
