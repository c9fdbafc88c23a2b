"""The pages in wiki/ the build does not make (hand-made pages, saved answers) that changed
since the last build left wiki/: found by their walk lines, as that build kept them
(Meta.FOREIGN_LEFT) with each one's description (its line in index.md), against wiki/ as
walked now. Such a change is known only where wiki/ is otherwise as that build left it: its
lines, those of the pages changed taken back to what they were, give Meta.WIKI_LEFT's digest
again. An edit then assembles the pages they change (quick.py), not every page."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from wikic.build.assemble import PageEntry, foreign_entry
from wikic.build.comego import Entry
from wikic.snapshot import Tree, digest
from wikic.state import Meta, Rendered, State
from wikic.wiki.read import resolve_target

SKIP = {"index", "log"}  # wiki/'s own files: never a page of this kind


@dataclass(frozen=True)
class Hand:
    """A page of wiki/ not the build's, changed since the last build: its walk line then
    (None: new) and now (None: deleted), and the description index.md listed it with."""

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
    rels = {f"wiki/{slug}.md": slug for slug in described}
    kept: dict[str, list[str]] = {}
    if rels:
        for line in tree.lines:
            slug = rels.get(line.partition("\t")[0])
            if slug is not None:
                kept[slug] = [line, described[slug]]
    return json.dumps(kept, ensure_ascii=False, sort_keys=True)


@dataclass
class Hands:
    """The pages not the build's that changed (slug -> Hand), the description of each such
    page as the last build left them, and the slugs of every page its assembly listed."""

    pages: dict[str, Hand]
    described: dict[str, str]
    known: set[str]


def changed(state: State, found: Tree, digest_left: str) -> Hands | None:
    """How the pages not the build's changed since the last build left wiki/ (`digest_left`);
    None where anything else in wiki/ changed, or it cannot be told (that build kept no lines;
    a page new under a slug the build wrote once)."""
    raw = state.get_meta(Meta.FOREIGN_LEFT)
    if raw is None or not found.complete:
        return None
    kept: dict[str, list[str]] = json.loads(raw)
    known = state.assembled_slugs()  # every page the last assembly listed, the build's or not
    if not kept.keys() <= known:
        return None
    rels = {f"wiki/{slug}.md": slug for slug in kept}
    hands: dict[str, Hand] = {}
    seen: set[str] = set()
    for line in found.lines:
        rel = line.partition("\t")[0]
        slug = rels.get(rel)
        if slug is not None:
            seen.add(slug)
            if line != kept[slug][0]:
                hands[slug] = Hand(kept[slug][0], line, kept[slug][1])
        elif rel.startswith("wiki/") and rel.endswith(".md") and rel.count("/") == 1:
            stem = rel[5:-3]
            if stem not in known and stem not in SKIP:
                hands[stem] = Hand(None, line)
    for slug in kept.keys() - seen:
        hands[slug] = Hand(kept[slug][0], None, kept[slug][1])
    new = [f"wiki/{slug}.md" for slug, hand in hands.items() if hand.then is None]
    if not hands or (new and state.files_of(new)):
        return None
    touched = {f"wiki/{slug}.md" for slug in hands}
    lines = [line for line in found.lines if line.partition("\t")[0] not in touched]
    lines += [hand.then for hand in hands.values() if hand.then is not None]
    if digest(lines) != digest_left:
        return None
    return Hands(hands, {slug: d for slug, (_, d) in kept.items()}, known)


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

    def rows(self, hands: Hands) -> tuple[dict[str, Rendered], dict[str, Rendered]]:
        """Their descriptions then and now, as the index's patch reads the build's pages'
        (indexpatch.py: what the last assembly rendered, and what this one did)."""
        then = {s: Rendered("", "", [], h.description) for s, h in hands.pages.items() if h.then is not None}
        now = {s: Rendered("", "", [], e.description) for s, e in self.entries.items() if e is not None}
        return then, now


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
