"""Forgetting a source everywhere wikic keeps something of it, when it is deleted or
`wikic forget` removes it: saved answers that cite only its pages, its extracted
text, every saved prefix state, its cached model answers, the deleted bytes of
state.db and its WAL, and its page names and path in log.md's entries (earlier
ones too).

The build calls these (build/pipeline.py), so a plain delete followed by a build
forgets the source's text as thoroughly as `wikic forget`: its pages and its
notes on shared pages go the way any build removes or rewrites them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Container, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wikic.backends.prefix_cache import PrefixCache
from wikic.build.report import Report
from wikic.project import Project
from wikic.state import State
from wikic.wiki.page import sealed_intact, split_page

if TYPE_CHECKING:
    from wikic.snapshot import Tree

ANSWER = "answer"  # the page type `wikic ask --save` files (ask/answers.py)
# Cached answers of these stages are referred to by an action record; those of every other stage
# (ask, lint --llm) are found by a key over the wiki's text, and no record refers to them.
MODEL_STAGES = ("digest", "write")
NOT_COMPACTED = (
    ".wikic/state.db: another process was reading it, so deleted bytes may remain in it or its WAL "
    "until it is compacted; run `wikic gc` when no other wikic command runs"
)
LIST_LINE = re.compile(r"^(- (?:written|removed|conflicts kept): )(.*)$")
MORE = re.compile(r"^(.*?)(?: and (\d+) more)?$")

# Stores of text derived from sources that forgetting must also reach, each called with the
# project and the forgotten paths (sources/x.pdf). Extracted text of converted formats
# (issue 15) registers its own here, or is added to `_forget_extracted` below.
STORES: list[Callable[[Project, list[str]], None]] = []


def drop_answers(root: Path, gone: set[str], report: Report) -> None:
    """Saved answers whose cited pages all went: removed, unless edited by hand (then kept,
    and the report says so). Run before the index is made, which lists them."""
    wiki = root / "wiki"
    for path, text in answers_citing(sorted(wiki.glob("*.md")) if wiki.is_dir() else [], gone):
        rel = f"wiki/{path.name}"
        if sealed_intact(text):
            path.unlink(missing_ok=True)
            report.removed.append(rel)
        else:
            report.warnings.append(
                f"{rel}: a saved answer that cites only pages of a forgotten source was edited by hand "
                "(or saved by an older wikic), so it is kept; delete it if it must go"
            )


def answers_citing(paths: Iterable[Path], gone: set[str]) -> Iterator[tuple[Path, str]]:
    """The saved answers among these pages whose cited pages all went (in `gone`), with their
    text."""
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        meta = split_page(text).meta
        cites = meta.get("cites")
        if meta.get("type") != ANSWER or not isinstance(cites, list) or not cites:
            continue
        if {str(c) for c in cites} <= gone:
            yield path, text


def log_scrubber(root: Path, forgotten: list[str]) -> Callable[[str], str]:
    """What takes the forgotten sources' paths out of log.md, earlier entries included, and
    the names of pages that no longer exist (any page of theirs, of this version or an older
    one, is among them: page names come from titles, which may be what must go). Called
    after publishing, so that the pages on disk are the new wiki's."""

    def scrub(text: str) -> str:
        current = _Pages(root / "wiki")
        lines = (_scrub(line, current, forgotten) for line in text.split("\n"))
        return "\n".join(line for line in lines if line is not None)

    return scrub


class _Pages(Container[str]):
    """The names of the pages in wiki/ (*.md), each one the log names looked up once: not
    wiki/ listed whole (100,000 pages: 0.14 s, for the few a log entry names)."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.known = folder, dict[str, bool]()

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str) or not name.endswith(".md") or "/" in name or "\0" in name:
            return False
        if name not in self.known:
            self.known[name] = os.path.lexists(self.folder / name)
        return self.known[name]


def _scrub(line: str, current: Container[str], forgotten: list[str]) -> str | None:
    """One log line with only the pages of `current`, without the forgotten paths; None to drop it."""
    if any(src in line for src in forgotten):
        return None  # an error line about the source, which names it
    m = LIST_LINE.match(line)
    if not m:
        return line
    listed = MORE.match(m.group(2))
    assert listed is not None  # MORE matches any text
    items = [item for item in listed.group(1).split(", ") if item]
    kept = [item for item in items if item in current]
    if len(kept) == len(items):
        return line
    more = f" and {listed.group(2)} more" if listed.group(2) else ""
    return f"{m.group(1)}{', '.join(kept)}{more}" if kept or more else None


def purge(project: Project, state: State, forgotten: list[str], wiki: Tree | None = None) -> dict[str, Any]:
    """After the build that dropped the forgotten sources from the wiki: everything else
    that may hold their text. Returns what went, and whether state.db could be compacted.
    `wiki`: the build's walk of wiki/ as it left it (report.wiki), if it has one."""
    _forget_extracted(project, forgotten)
    for store in STORES:
        store(project, forgotten)
    prefixes = PrefixCache(project.state_dir / "prefix", 0).clear()  # each holds the old index
    with state.transaction():
        loose = state.drop_cache(MODEL_STAGES, other=True)  # keyed by the old wiki: never asked again
        unreferenced = state.drop_cache(MODEL_STAGES, unreferenced=True)
        asked = state.drop_ask_rows(_asked_changed(project, state, wiki))  # as they were before the build
    compacted = state.compact(shrink=False)  # every byte deleted is zeroed: no rewrite of the rest
    return {
        "prefix_files": prefixes,
        "cached_answers": loose + unreferenced,
        "ask_pages": asked,
        "compacted": compacted,
    }


def _asked_changed(project: Project, state: State, wiki: Tree | None = None) -> list[str]:
    """The pages whose record ask keeps (ask/index.py) that are gone or not as it read them (by
    stat): the build that dropped the forgotten sources rewrote or removed every page holding
    their text, so what ask keeps after is only what wiki/ holds. The stats are `wiki`'s (a
    walk of wiki/ as the build left it: a page changed since holds no forgotten text either)
    where it took every entry's, else each page's own (100,000 of them: 0.3-0.4 s). Against
    the walk, each record's stat is made into the line the walk has for a page as it read it,
    and looked for among the walk's lines (0.25 s at 100,000 pages, not 0.37 with the walk's
    stats made and compared a page at a time); a line the walk has for no plain file (a
    link's, another kind's) is found by no record, which goes: read again, never kept wrong."""
    if wiki is not None and wiki.complete:
        lines = set(wiki.lines)
        return [rel for rel, line in state.ask_stat_lines() if line not in lines]
    changed = []
    root = os.path.join(project.root, "")  # a string joined per page, no Path made: 100,000 of them
    for rel, size, mtime in state.ask_stats():
        try:
            st = os.stat(root + rel)
        except OSError:
            changed.append(rel)
            continue
        if (st.st_size, st.st_mtime_ns) != (size, mtime):
            changed.append(rel)
    return changed


def _forget_extracted(project: Project, forgotten: Iterable[str]) -> None:
    """Text extracted from converted sources (PDF, Office, HTML) under .wikic/extracted/:
    the build that dropped the forgotten sources read the others first and kept only
    their texts there (sources/extract.prune), so none of the forgotten ones is left."""
    return None


def sources_to_forget(project: Project, paths: list[Path], known: Iterable[str], base: Path) -> list[str]:
    """The sources (sources/x.md) that PATHs (relative to `base`, as given with -C) name: files,
    or every file under a folder, on disk or known to the last build (already deleted)."""
    from wikic.errors import UsageError

    sources = project.sources_dir.resolve()
    known = sorted(known)
    found: dict[str, None] = {}
    for given in paths:
        path = (base / given).resolve()
        if path != sources and not path.is_relative_to(sources):
            raise UsageError(f"{given}: not under {project.sources_dir}; forget takes sources")
        rel = "sources/" + path.relative_to(sources).as_posix() if path != sources else "sources"
        named = [k for k in known if k == rel or k.startswith(rel.rstrip("/") + "/")]
        if path.is_dir():
            named += ["sources/" + p.relative_to(sources).as_posix() for p in path.rglob("*") if p.is_file()]
        elif path.is_file():
            named.append(rel)
        if not named:
            raise UsageError(f"{given}: no such source (neither on disk nor in the last build)")
        found.update(dict.fromkeys(sorted(named)))
    return list(found)


def delete_sources(project: Project, rels: list[str]) -> None:
    """Delete the files; the build that follows forgets what was made from them."""
    for rel in rels:
        (project.root / rel).unlink(missing_ok=True)
