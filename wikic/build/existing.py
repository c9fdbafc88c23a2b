"""What wiki/ already holds that a build must respect: pages it does not own (answers
filed by `ask --save`, hand-made pages), its pages kept while their source fails, and its
pages as it last wrote them (by stat)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from wikic.build.plan import PagePlan
from wikic.snapshot import Stat
from wikic.state import FileRecord, State
from wikic.wiki.page import split_page

Records = dict[str, FileRecord]  # state.files(): what wikic wrote, with its stat


def foreign(
    root: Path, records: Records, pages: Mapping[str, PagePlan], keep: set[str], seen: dict[str, Stat]
) -> dict[str, str]:
    """Pages in wiki/ the build does not own: answers filed by `ask --save`, hand-made pages;
    and its own pages kept as they are (their source failed this time): still indexed.
    `records`: what wikic wrote (state.files()); `seen`: wiki/ as walked before the build."""
    ours = {p.slug for p in pages.values()} | {"index", "log"}
    recorded = {stem(rel) for rel in records}
    found = {}
    wiki = root / "wiki"
    names = sorted(rel[5:] for rel in seen if rel.endswith(".md") and rel.count("/") == 1)
    for name in names:  # strings, not 10,000 Paths: the common case is that none is foreign
        bare = name[:-3]
        if bare in ours or (bare in recorded and f"wiki/{name}" not in keep):
            continue
        path = wiki / name
        if path.is_file():
            try:
                found[path.stem] = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
    return found


def kept_for_failed_sources(root: Path, state: State, failed: set[str]) -> set[str]:
    """Pages fed by a source that failed this time are kept as they are, neither removed nor
    written without its notes (a page it shares with other sources too: "Avoid repeated work"),
    until it reads again."""
    if not failed:
        return set()
    keep = set()
    for rel in state.files():
        try:
            meta = split_page((root / rel).read_text(encoding="utf-8")).meta
        except (OSError, UnicodeDecodeError):
            continue
        if set(meta.get("sources") or []) & failed:
            keep.add(rel)
    return keep


def missing(root: Path, state: State, outputs: Mapping[str, str]) -> list[str]:
    """The files wikic wrote, to be written again, that are no longer there (for --explain)."""
    return [
        rel for rel in state.files() if rel.removeprefix("wiki/") in outputs and not (root / rel).exists()
    ]


def intact(root: Path, records: Records, seen: dict[str, Stat]) -> set[str]:
    """The slugs of the pages in wiki/ as wikic last wrote them, by stat: `seen`, the walk of
    wiki/ before the build (none of the build's own writes come before assemble's)."""
    found = set()
    base = str(root)
    for rel, rec in records.items():
        stat = seen.get(rel)
        if stat is None:  # not there when walked: as it is now
            try:
                st = os.stat(f"{base}/{rel}")
            except OSError:
                continue
            stat = (st.st_size, st.st_mtime_ns)
        if stat == (rec.size, rec.mtime_ns):
            found.add(stem(rel))
    return found


def stem(rel: str) -> str:
    """wiki/x.md -> x"""
    return rel.rsplit("/", 1)[-1].removesuffix(".md")
