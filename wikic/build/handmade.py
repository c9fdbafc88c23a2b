"""The pages in wiki/ changed by hand since the last build left wiki/: those the build does
not make (hand-made pages, saved answers), found by their walk lines, as that build kept them
(Meta.FOREIGN_LEFT) with each one's description (its line in index.md), against wiki/ as
walked now; and the build's own pages edited by hand (a conflict: kept, and reported by every
build until they are as the build writes them or --force), found by the records of what wikic
wrote, or by their lines as the last build found them edited (Meta.CONFLICTS); and the files
in wiki/ that are not pages (attachments: images, PDFs; files in folders), which no page the
build makes depends on, by their lines as it left them (Meta.OTHERS_LEFT). Such a change is
known only where wiki/ is otherwise as that build left it: its lines, those of the pages and
files changed taken back to what they were, give Meta.WIKI_LEFT's digest again. An edit then
assembles the pages they change (quick.py), not every page."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wikic.build.assemble import PageEntry, foreign_entry
from wikic.build.comego import Entry
from wikic.snapshot import Tree, digest
from wikic.state import Meta, Rendered, State
from wikic.wiki.read import resolve_target

INDEX, LOG = "index", "log"
SKIP = {INDEX, LOG}  # wiki/'s own files: never a page of this kind


@dataclass(frozen=True)
class Hand:
    """A page of wiki/ changed by hand since the last build: its walk line then (None: new)
    and now (None: deleted), and (a page not the build's) the description index.md listed it
    with."""

    then: str | None
    now: str | None
    description: str = ""

    @property
    def kind(self) -> str:
        """What the lint summary is told (lint/totals.py)."""
        return "new" if self.then is None else "gone" if self.now is None else "changed"


def left(tree: Tree, described: Mapping[str, str]) -> str:
    """What Meta.FOREIGN_LEFT keeps of wiki/ as a build left it (`tree`): each page not the
    build's (`described`: slug -> its description) with its walk line."""
    lines = lines_of(tree, described)
    return json.dumps({slug: [line, described[slug]] for slug, line in lines.items()}, ensure_ascii=False)


def is_page(rel: str) -> bool:
    """Whether a path of wiki/'s walk is a page's: a .md file directly in wiki/."""
    return rel.startswith("wiki/") and rel.endswith(".md") and rel.count("/") == 1


def others(tree: Tree) -> list[str]:
    """What Meta.OTHERS_LEFT keeps of wiki/ as a build left it: the walk lines of its files
    not pages, in order."""
    return sorted(line for line in tree.lines if not is_page(line.partition("\t")[0]))


def lines_of(tree: Tree, slugs: Iterable[str]) -> dict[str, str]:
    """slug -> its page's walk line in `tree`, of these pages (Meta.CONFLICTS keeps them of the
    build's pages edited by hand)."""
    rels = {f"wiki/{slug}.md": slug for slug in slugs}
    found: dict[str, str] = {}
    if rels:
        for line in tree.lines:
            slug = rels.get(line.partition("\t")[0])
            if slug is not None:
                found[slug] = line
    return found


@dataclass
class Hands:
    """The pages not the build's that changed (slug -> Hand), the description of each such
    page as the last build left them, and the slugs of every page its assembly listed; the
    build's own pages edited by hand since (`edited`), and those it found so before and kept
    as they were (`conflicts`: slug -> its line then)."""

    pages: dict[str, Hand]
    described: dict[str, str]
    known: set[str] | None  # None: not read (no page changed by hand)
    edited: dict[str, Hand] = field(default_factory=dict)
    conflicts: dict[str, str] = field(default_factory=dict)
    others: tuple[list[str], list[str]] | None = None  # the files not pages then and now, if changed

    @property
    def files(self) -> bool:
        """Whether the files not pages changed: the lint summary reads the attachments' names
        again (wiki.read.attachments: what a link to one resolves to)."""
        return self.others is not None

    @property
    def mine(self) -> set[str]:
        """The build's pages edited by hand, now or before and kept so (index.md apart:
        ownindex.py): rendered again, so that publish keeps them and says so."""
        return (self.edited.keys() | self.conflicts.keys()) - SKIP

    @property
    def index(self) -> bool:
        """Whether index.md is edited by hand, now or before and kept so, or deleted now: the
        build's made from what it kept (ownindex.py), kept beside wiki/'s, or written again."""
        return INDEX in self.edited or INDEX in self.conflicts

    def told(self) -> dict[str, str]:
        """What the lint summary is told (Report.hand): rel -> "new", "changed" or "gone"."""
        pages = {f"wiki/{slug}.md": hand.kind for slug, hand in self.pages.items()}
        return pages | {f"wiki/{slug}.md": "changed" for slug in self.edited if slug != LOG}


class Unreadable(Exception):
    """What a build kept of wiki/'s pages does not read as it wrote it (the full way then,
    which writes it anew)."""


def _stored(state: State, meta: Meta) -> dict[str, Any]:
    """A JSON object a build kept in state.db ({}: none)."""
    try:
        value = json.loads(state.get_meta(meta) or "{}")
    except ValueError as exc:
        raise Unreadable(meta.value) from exc
    if not isinstance(value, dict):
        raise Unreadable(meta.value)
    return value


def kept(state: State) -> Hands | None:
    """Where wiki/ is as the last build left it: the build's pages it kept as edited by hand
    (None: none), to be rendered again and kept and reported again."""
    conflicts: dict[str, str] = _stored(state, Meta.CONFLICTS)
    return Hands({}, {}, None, {}, conflicts) if conflicts else None


def changed(state: State, found: Tree, digest_left: str) -> Hands | None:
    """How the pages in wiki/ changed by hand since the last build left it (`digest_left`);
    None where it cannot be told (that build kept no lines; a page new under a slug the build
    wrote once; anything else changed)."""
    if state.get_meta(Meta.FOREIGN_LEFT) is None or not found.complete:
        return None
    kept: dict[str, list[str]] = _stored(state, Meta.FOREIGN_LEFT)
    conflicts: dict[str, str] = _stored(state, Meta.CONFLICTS)
    others_then = _stored_lines(state)
    if others_then is None:
        return None
    known = state.assembled_slugs()  # every page the last assembly listed, the build's or not
    if not kept.keys() <= known:
        return None
    pages = {}  # wiki/'s pages: rel -> walk line
    others_now = []
    for line in found.lines:
        rel = line.partition("\t")[0]
        if is_page(rel):
            pages[rel] = line
        else:
            others_now.append(line)
    others_now.sort()
    moved = (others_then, others_now) if others_now != others_then else None
    hands: dict[str, Hand] = {}
    for slug, (then, description) in kept.items():
        if (now := pages.get(f"wiki/{slug}.md")) != then:
            hands[slug] = Hand(then, now, description)
    for rel, line in pages.items():
        if (stem := rel[5:-3]) not in known and stem not in SKIP:
            hands[stem] = Hand(None, line)
    edited = {slug: Hand(then, pages.get(f"wiki/{slug}.md")) for slug, then in conflicts.items()}
    edited = {slug: hand for slug, hand in edited.items() if hand.now != hand.then}
    new = [f"wiki/{slug}.md" for slug, hand in hands.items() if hand.then is None]
    if new and state.files_of(new):
        return None
    lines = list(pages.values()) + others_then  # wiki/'s, the files not pages as they were
    if not _as_left(lines, {**hands, **edited}, digest_left):  # the build's pages edited too?
        more = _edited(state, pages, kept.keys() | conflicts.keys())
        if not _as_left(lines, {**hands, **edited, **more}, digest_left):
            return None
        edited |= more
    if not hands and not edited and moved is None:
        return None
    described = {slug: d for slug, (_, d) in kept.items()}
    return Hands(hands, described, known, edited, conflicts, moved)


def _stored_lines(state: State) -> list[str] | None:
    """Meta.OTHERS_LEFT (None: none kept, by a build of an older wikic)."""
    raw = state.get_meta(Meta.OTHERS_LEFT)
    if raw is None:
        return None
    try:
        lines = json.loads(raw)
    except ValueError as exc:
        raise Unreadable(Meta.OTHERS_LEFT.value) from exc
    if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
        raise Unreadable(Meta.OTHERS_LEFT.value)
    return lines


def _as_left(lines: list[str], hands: Mapping[str, Hand], digest_left: str) -> bool:
    """Whether wiki/ as these lines, these pages taken back to what they were, is as it was left."""
    touched = {f"wiki/{slug}.md" for slug in hands}
    then = [line for line in lines if line.partition("\t")[0] not in touched]
    then += [hand.then for hand in hands.values() if hand.then is not None]
    return digest(then) == digest_left


def _edited(state: State, pages: Mapping[str, str], skip: Iterable[str]) -> dict[str, Hand]:
    """The build's pages whose file is not as wikic last wrote it (its record), index.md's and
    log.md's too (its next entry makes it read and written whole), but those in `skip`."""
    edited: dict[str, Hand] = {}
    skipped = set(skip)
    for rel, size, mtime in state.file_stats():
        slug = rel[5:-3]
        if slug in skipped or not rel.endswith(".md"):
            continue
        then, now = f"{rel}\t{size}\t{mtime}", pages.get(rel)
        if now != then:
            edited[slug] = Hand(then, now)
    return edited


@dataclass
class Now:
    """The pages not the build's that changed, as they are now: each one's entry (None:
    deleted), and what they do to the names (comego.came): those new or whose names changed
    as they are (`added`), those deleted or whose names changed as they were (`gone`)."""

    entries: dict[str, PageEntry | None] = field(default_factory=dict)
    added: dict[str, Entry] = field(default_factory=dict)
    gone: dict[str, Entry] = field(default_factory=dict)
    described: dict[str, str] = field(default_factory=dict)  # every such page's, after the build
    # the others whose [[links]] the names changed resolve otherwise (quick.py), read again
    relinked: dict[str, PageEntry] = field(default_factory=dict)

    @property
    def deleted(self) -> set[str]:
        return {slug for slug, entry in self.entries.items() if entry is None}

    def rows(
        self, hands: Hands | None
    ) -> tuple[dict[str, Rendered], dict[str, Rendered], dict[str, Rendered]]:
        """Their descriptions then and now, and those deleted, as the index's patch reads the
        build's pages' (indexpatch.py: what the last assembly rendered, and what this one did)."""
        pages = hands.pages if hands is not None else {}
        then = {s: Rendered("", "", [], h.description) for s, h in pages.items() if h.then is not None}
        now = {s: Rendered("", "", [], e.description) for s, e in self.entries.items() if e is not None}
        return then, now, {slug: row for slug, row in then.items() if slug in self.deleted}


def read(root: Path, hands: Hands, entries: Mapping[str, Entry]) -> Now | None:
    """The pages changed as they are now (`entries`: every page's, as the last assembly kept
    them); None where one cannot be read (the full assembly leaves such a page out), or one
    was the build's (a hand edit of its page: the full assembly keeps it and says so)."""
    now = Now()
    for slug, hand in hands.pages.items():
        entry = None
        if hand.now is not None:
            try:
                entry = foreign_entry(slug, (root / "wiki" / f"{slug}.md").read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                return None
        kept = entries.get(slug)
        if (kept is None) != (hand.then is None) or (kept is not None and kept[3]):
            return None
        names = None if entry is None else (entry.title, entry.type, entry.aliases, "")
        if names != kept:
            if kept is not None:
                now.gone[slug] = kept
            if names is not None:
                now.added[slug] = names
        now.entries[slug] = entry
    now.described = {slug: d for slug, d in hands.described.items() if slug not in now.entries}
    now.described.update({slug: e.description for slug, e in now.entries.items() if e is not None})
    return now


def links(now: Now, names: Mapping[str, str], slugs: set[str]) -> dict[str, set[str]] | None:
    """slug -> the slugs its [[links]] go to, of each page changed that is there, resolved as
    the full assembly resolves them (`names`: the linker's now; `slugs`: every page's now);
    None where two slugs are one casefolded (which one a link goes to is the full way's)."""
    folded = {slug.casefold(): slug for slug in slugs}
    if len(folded) != len(slugs):
        return None
    pages = {**now.relinked, **{slug: entry for slug, entry in now.entries.items() if entry is not None}}
    return {
        slug: {s for target in entry.links if (s := resolve_target(target, folded, names)) is not None}
        for slug, entry in pages.items()
    }
