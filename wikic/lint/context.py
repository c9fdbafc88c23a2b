"""What lint rules share: a finding, the context they read (the wiki, the
schema, the build state, the sources), and reading sources once per run."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from wikic.errors import OUT_OF_FILES, SourceError
from wikic.hashing import bytes_hash, text_hash
from wikic.lint.names import Names
from wikic.privacy.redact import NONE, Redactor
from wikic.project import Project
from wikic.sources.extract import store_dir
from wikic.sources.read import source_text
from wikic.state import State
from wikic.wiki.overlap import content_words
from wikic.wiki.page import Citation
from wikic.wiki.read import Wiki

if TYPE_CHECKING:
    from wikic.config import Schema


@dataclass(frozen=True)
class Finding:
    """One problem: the rule that found it, where, what, and what `--fix` would do."""

    rule: str
    path: str
    line: int
    message: str
    fix: str | None = None
    level: str = "warning"
    edit: tuple[str, str] | None = None  # (text on that line, its replacement) for --fix
    also: tuple[str, ...] = ()  # other pages involved: a suppression in any of them applies

    def to_json(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "level": self.level,
            "path": self.path,
            "line": self.line,
            "message": self.message,
            "fix": self.fix,
        }


@dataclass(frozen=True)
class SourceText:
    lines: list[str]
    hash: str
    raw_hash: str


class SourceCache:
    """Each source read and normalised at most once, as the build reads it."""

    def __init__(self, root: Path, redactor: Redactor = NONE) -> None:
        self.root = root
        self.redactor = redactor  # the build's privacy.redact: pages cite the redacted lines
        self._texts: dict[str, SourceText | str] = {}
        self._words: dict[Citation, frozenset[str]] = {}
        self._sizes: dict[str, int] = {}  # characters of each source read, in the order read
        self._held = 0  # their sum
        self._base = os.path.join(str(root), "")  # a string join per source, not a Path made
        self._store: Path | None = None  # the extracted texts' folder, found once

    def get(self, rel: str) -> SourceText | str:
        """The source's lines and hash, or why it cannot be read."""
        if rel not in self._texts:
            text = self._texts[rel] = self._read(rel)
            self._sizes[rel] = sum(map(len, text.lines)) if isinstance(text, SourceText) else 0
            self._held += self._sizes[rel]
        return self._texts[rel]

    def cited_words(self, cite: Citation) -> frozenset[str]:
        """The content words of a (valid) citation's lines, computed once per citation."""
        if cite not in self._words:
            text = self.get(cite.source)
            lines = text.lines[cite.start - 1 : cite.end] if isinstance(text, SourceText) else []
            self._words[cite] = content_words("\n".join(lines))
        return self._words[cite]

    def trim(self, chars: int) -> None:
        """Only the sources read last kept, `chars` of their text at most: a first lint of
        100,000 pages reads them all."""
        for rel in list(self._sizes):
            if self._held <= chars:
                break
            self._held -= self._sizes.pop(rel)
            del self._texts[rel]
        if len(self._words) > len(self._texts) * 8:
            self._words.clear()

    def _read(self, rel: str) -> SourceText | str:
        if not rel.startswith("sources/") or ".." in rel.split("/") or rel.startswith("/"):
            return "is not a path under sources/"
        try:
            with open(self._base + rel, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            return "does not exist"
        except OSError as exc:
            if exc.errno in OUT_OF_FILES:
                raise
            return f"cannot be read: {exc.strerror or exc}"
        if self._store is None:
            self._store = store_dir(self.root)
        try:  # a PDF, DOCX, ... as its extracted text, the one the build digested
            text = source_text(rel, raw, self._store).text
        except SourceError as exc:
            return exc.reason
        lines = self.redactor.lines(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"))
        return SourceText(lines, text_hash(text), bytes_hash(raw))


@dataclass
class Context:
    project: Project
    schema: Schema
    wiki: Wiki
    files: dict[str, str] | None  # path -> hash of what wikic wrote; None without a build state
    source_stats: dict[str, tuple[int, int, str]] | None  # what the last build read
    sources: SourceCache = field(init=False)
    # sources stat'ed already (path -> (size, mtime_ns), None: none or no file), and which of
    # those have no file: the cached lint's, for stale-page
    statted: tuple[dict[str, tuple[int, int] | None], set[str]] = field(init=False)

    def __post_init__(self) -> None:
        self.sources = SourceCache(self.project.root, Redactor.from_config(self.schema.privacy.redact))
        self.statted = ({}, set())

    @classmethod
    def load(cls, project: Project, schema: Schema, wiki: Wiki) -> Context:
        """Read the build state if there is one; never create it."""
        if not project.state_path.exists():
            return cls(project, schema, wiki, None, None)
        state = State.open(project.state_path)
        try:
            return cls(project, schema, wiki, state.file_hashes(), state.source_stats())
        finally:
            state.close()

    @cached_property
    def names(self) -> Names:
        """The wiki's names, as the rules across pages resolve links."""
        return Names.of(self.wiki)

    def topic_types(self) -> set[str]:
        return set(self.schema.type_names())

    def known_types(self) -> set[str]:
        return self.topic_types() | {"source", "answer"}
