"""The output side of an edit whose changed pages are known (replan.Keep.same: the others):
those pages assembled, and the pages whose backlinks they change, from the state's rows of
them alone; index.md patched where their lines changed (indexpatch.py). Where pages came or
went (a source added, a topic page new or gone) or changed their names (a source retitled:
its names go as they were and come as they are), the pages whose text names them too
(comego.py); the pages not the build's whose [[links]] those names resolve otherwise now are
read again for their links. None wherever that is not known to make what a full assembly
makes (a page moved to another slug, a row missing, a line not found): the build then
assembles in full (assemble.py).

It goes by what the last build left: the names it went by and every page's links
(state.assembled_links), with wiki/ as that build left it (Meta.WIKI_LEFT), so that no page
it wrote is edited by hand and every one is intact; but for the pages changed by hand since
(handmade.py): those not the build's (hand-made pages, saved answers) added, edited or removed,
taken as pages new, changed or gone (their names, links and index.md lines), and the build's
own edited, rendered again to be kept as they are and reported (publish.py), as the full
assembly does with them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wikic.build import compose, handmade, ownindex, write
from wikic.build.actions import resolve
from wikic.build.assemble import (
    VERSION,
    Assembled,
    Assembly,
    PageEntry,
    _Bodies,
    foreign_entry,
    page_key,
    page_text,
    went_by,
)
from wikic.build.comego import Came, Entry, Patched, came, patched_entries, touched
from wikic.build.indexpatch import listed, patched_index
from wikic.build.keptplan import claims_of
from wikic.build.linker import Linker
from wikic.build.lookups import LineCounts, Names, Prose, Rows, Sources
from wikic.build.plan import PagePlan
from wikic.build.publish import append_log, publish
from wikic.build.replan import Keep
from wikic.hashing import quick_fingerprint
from wikic.privacy import forget
from wikic.state import Links, Meta, Rendered, State
from wikic.wiki.read import resolve_target

if TYPE_CHECKING:
    from wikic.build.intake import Read
    from wikic.build.pipeline import _Build

QUICK = "assemble the edit's pages"  # --explain's line where the quick way was taken
FEW = 64  # pages an edit may change, or one in SHARE of them, for the quick way to be taken
SHARE = 4


def _index(root: Path) -> str | None:
    try:
        return (root / "wiki" / "index.md").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def quick_assemble(
    job: Assembly, edit: Quick, state: State, index: Callable[[], str | None], root: Path
) -> tuple[Assembled, str | None, bool] | None:
    """The edit's pages (`edit.changed`, ids), those whose text names a page new or gone, and
    those whose backlinks they change, assembled; index.md as it is to be (None: as it is),
    and whether its links are the same (_patched_index). `edit.names`: as the last assembly
    kept them; `index`: index.md as it left it. None where the full assembly must be made
    (the module's docstring)."""
    pages, names = job.pages, edit.names
    mine = {pages[pid].slug: pid for pid in edit.changed}  # their entries are as kept, or new (decide())
    hand = handmade.read(root, edit.hands, names.entries) if edit.hands is not None else handmade.Now()
    if hand is None:
        return None
    change = None
    if edit.added or edit.gone or edit.renamed or hand.added or hand.gone:
        got = _came(edit, state, root, mine, hand)
        if got is None:
            return None
        change, names = got
    previous = state.assembled_of(mine)
    if len(previous) != len(mine) - len(edit.added):
        return None
    previous.update(dict.fromkeys(edit.added, NEW))
    job.previous = previous
    bodies = _settled(job, names, mine)
    entries = bodies.entries
    retitled = {slug for slug, (then, now) in edit.renamed.items() if then[0] != now[0]}
    moved, need = _moved(mine, entries, previous, names, retitled)
    linking = _hand_links(edit, hand, names, state, moved, need)
    if linking is None:
        return None
    gone = state.assembled_of(edit.gone)
    for row in gone.values():  # the pages a page gone linked to lose its backlink
        need |= {t for t in row.links if names.entries.get(t, ("", "", [], ""))[3]}
    more = state.assembled_of(need - set(mine))
    if len(more) != len(need) - len(mine) or len(gone) != len(edit.gone):
        return None
    previous.update(more)
    linking.update({slug: entries[slug].links for slug in mine})
    back = _backlinks(state, need, linking, set(edit.gone) | hand.deleted)
    if isinstance(names.entries, (Rows, Patched)):  # the entries asked for below, read at once
        names.entries.load({*need, *_listed(need, back, mine, entries, previous)})
    made = _rendered(bodies, need, mine, names, back, _kept_edited(edit))
    if made is None:
        return None
    out, rendered = made
    then, now, deleted = hand.rows(edit.hands)
    patched = _index_patched(job, index, names, change, previous | then, rendered | now, gone | deleted)
    if patched is False:
        return None
    unchanged = {f"{slug}.md" for slug in need} - set(out)
    by = went_by(names.fingerprint, job.token, job.writes)
    texts = bodies.texts.items() if bodies.texts is not None else ()
    links = Links(False, moved, [*edit.gone, *sorted(hand.deleted)], texts=texts)
    edit.listing = change is not None
    edit.described = hand.described if edit.hands is not None and edit.hands.pages else None
    if change is not None:
        links.names, links.entries, links.linked_names = names.dumps(), change.added, change.changed()
    done = Assembled(out, unchanged, rendered, by, links)
    return (done, *patched) if isinstance(patched, tuple) else (done, None, False)


NEW = Rendered("", "", [], "")  # what the last assembly rendered of a page new: nothing


def _settled(job: Assembly, names: Names, mine: dict[str, str]) -> _Bodies:
    """The edit's pages (`mine`: slug -> id) keyed and settled with the names as they are now:
    their bodies' links resolved, their entries in the bodies' `entries`."""
    pages = job.pages
    linker = Linker.made(names.names, names.titles(), names.heads)
    entries = {
        slug: PageEntry(slug, pages[pid].title, pages[pid].type, pages[pid].aliases)
        for slug, pid in mine.items()
    }
    bodies = _Bodies(job, entries, linker, names.fingerprint)
    bodies.texts = {}
    for pid in mine.values():
        bodies.keys[pid] = bodies._key(pid, pages[pid], names.fingerprint)
        bodies.settle(pid)
    return bodies


def _index_patched(
    job: Assembly,
    index: Callable[[], str | None],
    names: Names,
    change: Came | None,
    previous: dict[str, Rendered],
    rendered: dict[str, Rendered],
    gone: dict[str, Rendered],
) -> tuple[str, bool] | bool | None:
    """index.md as indexpatch.patched_index makes it: the lines of the descriptions changed,
    and of the pages new and gone (`gone`: what the last assembly rendered of those)."""
    titles = _titles(names)
    listing = None
    if change is not None:
        new = {slug: (e[1], rendered[slug].description) for slug, e in change.added.items()}
        # a page renamed is not gone: its line as listed is what the last assembly rendered
        old = [
            (slug, e[0], e[1], (gone.get(slug) or previous[slug]).description)
            for slug, e in change.gone.items()
        ]
        listing = listed((job.title, job.scope), new, old, titles, job.type_order)
    return patched_index(index, titles, previous, rendered, listing)


def _titles(names: Names) -> Callable[[str], str]:
    return lambda slug: names.entries[slug][0]


def _came(
    edit: Quick, state: State, root: Path, mine: dict[str, str], hand: handmade.Now
) -> tuple[Came, Names] | None:
    """What the pages new and gone (and the pages not the build's that changed: `hand`) did to
    the names, and the names now; the pages whose text names them put in `mine`. None where
    another page the build does not make (an answer, a hand-made page) may link otherwise
    now, or where so many pages name them that the full assembly is as cheap."""
    names = edit.names
    added = {**edit.added, **{slug: now for slug, (_, now) in edit.renamed.items()}, **hand.added}
    gone = {**edit.gone, **{slug: then for slug, (then, _) in edit.renamed.items()}, **hand.gone}
    change = came(
        names.fingerprint, names.heads, names.names, names.entries, added, gone, state.kept_entries_having
    )
    foreign = [slug for slug in state.assembled_foreign() if slug not in hand.entries]
    relinked = _foreign_relinked(root, foreign, set(change.strings()))
    if relinked is None:
        return None
    for slug in touched(state, change) - set(mine) - set(change.gone) - set(hand.entries):
        pid = names.entries.get(slug, ("", "", [], ""))[3]
        if pid:
            mine[slug] = pid
            edit.named += 1
        elif slug not in relinked:  # a page the build does not make that links to a page gone
            entry = _foreign(root, slug)
            if entry is None:
                return None
            relinked[slug] = entry
    hand.relinked = relinked
    if len(mine) > max(FEW, edit.pages // SHARE):
        return None
    now = Names(
        change.fingerprint,
        change.heads,
        patched_entries(names.entries, change),
        Patched(names.names, change.changed()),
    )
    return change, now


def _moved(
    mine: dict[str, str],
    entries: dict[str, PageEntry],
    previous: dict[str, Rendered],
    names: Names,
    retitled: set[str],
) -> tuple[dict[str, list[str]], set[str]]:
    """The changed pages' links where they changed (slug -> targets), and the pages to look at:
    those, and the pages (of the build's) they link to now or linked to before, not both (both,
    for a page `retitled`: its title is in their backlinks)."""
    moved: dict[str, list[str]] = {}
    need = set(mine)
    for slug in mine:
        links, before = entries[slug].links, set(previous[slug].links)
        if links != before:
            moved[slug] = sorted(links - {slug})
        need |= _theirs(links | before if slug in retitled else links ^ before, slug, names)
    return moved, need


def _kept_edited(edit: Quick) -> set[str]:
    """The build's pages edited by hand (now, or before and kept so): rendered again, so that
    publish keeps them as they are and says so, as each build does."""
    return edit.hands.mine if edit.hands is not None else set()


def _theirs(slugs: set[str], but: str, names: Names) -> set[str]:
    """Those of the build's pages, but one."""
    return {t for t in slugs if t != but and names.entries.get(t, ("", "", [], ""))[3]}


def _hand_links(
    edit: Quick,
    hand: handmade.Now,
    names: Names,
    state: State,
    moved: dict[str, list[str]],
    need: set[str],
) -> dict[str, set[str]] | None:
    """The links of the pages not the build's that changed and are there (slug -> slugs),
    resolved with the names now; theirs that changed put in `moved`, and the build's pages
    they link to now or did before, not both (both where their names changed), in `need`,
    with the build's pages edited by hand (_kept_edited). None where they cannot be resolved
    as the full assembly resolves them."""
    redo = _kept_edited(edit)
    edit.redone = len(redo - need)
    need |= redo
    if not hand.entries and not hand.relinked:
        return {}
    known = edit.hands.known if edit.hands is not None else None
    if known is None:
        known = state.assembled_slugs()
    slugs = (known | edit.added.keys() | hand.entries.keys()) - edit.gone.keys() - hand.deleted
    now = handmade.links(hand, names.names, slugs)
    if now is None:
        return None
    before = state.links_of([*hand.entries, *hand.relinked])
    for slug in before:
        links = now.get(slug, set())
        if slug not in hand.deleted and links - {slug} != before[slug]:
            moved[slug] = sorted(links - {slug})
        need |= _theirs(links | before[slug] if slug in hand.gone else links ^ before[slug], slug, names)
    return now


def _rendered(
    bodies: _Bodies,
    need: set[str],
    mine: dict[str, str],
    names: Names,
    back: dict[str, set[str]],
    redo: set[str],
) -> tuple[dict[str, str], dict[str, Rendered]] | None:
    """The pages to write (by file name) and the rows that changed, of the pages in `need`
    (those in `redo` whether their key changed or not)."""
    pages, previous, entries = bodies.job.pages, bodies.job.previous, bodies.entries
    out: dict[str, str] = {}
    rendered: dict[str, Rendered] = {}
    for slug in sorted(need):
        pid = mine.get(slug) or names.entries[slug][3]
        page, prev = pages.get(pid), previous[slug]
        if page is None or page.slug != slug:
            return None
        links = entries[slug].links if slug in mine else set(prev.links)
        body_key = bodies.keys[pid] if slug in mine else prev.body_key
        extra = [PageEntry(s, names.entries[s][0], "") for s in sorted(back.get(slug, ())) if s not in links]
        key = page_key(body_key, [(e.slug, e.title) for e in extra])
        description = entries[slug].description if slug in mine else prev.description
        row = Rendered(body_key, key, sorted(links), description)
        if row != prev:
            rendered[slug] = row
        if key != prev.page_key or slug in redo:
            if slug not in mine:
                entries[slug] = _entry(page)
            out[f"{slug}.md"] = page_text(page, bodies.body(pid), extra)
    return out, rendered


def _listed(
    need: set[str],
    back: dict[str, set[str]],
    mine: dict[str, str],
    entries: dict[str, PageEntry],
    previous: dict[str, Rendered],
) -> set[str]:
    """The pages listed as backlinks of those in `need`: linking to one that does not link back."""
    listed: set[str] = set()
    for slug in need:
        links = entries[slug].links if slug in mine else set(previous[slug].links)
        listed |= back.get(slug, set()) - links
    return listed


def _entry(page: PagePlan) -> PageEntry:
    return PageEntry(page.slug, page.title, page.type, page.aliases)


def _backlinks(
    state: State, need: set[str], linking: dict[str, set[str]], gone: set[str]
) -> dict[str, set[str]]:
    """target slug -> the pages linking to it, for the pages in `need`: as the last assembly
    left them, with the changed pages' links as they are now (`linking`), and the pages `gone`
    gone."""
    back = state.linked_from(need)
    for links in back.values():
        links -= set(linking) | gone
    for slug, targets in linking.items():
        for target in targets:
            if target in need and target != slug:
                back.setdefault(target, set()).add(slug)
    return back


@dataclass
class Quick:
    """An edit whose pages are known: `names` as the last assembly kept them, and the pages it
    changed (ids), those of them new, and the pages gone (slug -> entry)."""

    names: Names
    changed: list[str]
    starts: dict[str, tuple[int, ...]]  # a PDF's first line of each page, by source
    added: dict[str, Entry] = field(default_factory=dict)
    gone: dict[str, Entry] = field(default_factory=dict)
    renamed: dict[str, tuple[Entry, Entry]] = field(default_factory=dict)  # slug -> its entry then and now
    pages: int = 0  # in the plan
    named: int = 0  # the pages whose text names a page new or gone (quick_assemble finds them)
    forgotten: list[str] = field(default_factory=list)  # the sources deleted (the plan dropped them)
    hands: handmade.Hands | None = None  # the pages not the build's that changed (handmade.py)
    listing: bool = False  # pages were listed in index.md or taken out of it (quick_assemble)
    described: dict[str, str] | None = None  # the pages not the build's after it, where they changed
    redone: int = 0  # the build's pages edited by hand, rendered again only to be kept (quick_assemble)


def writes_key(template: str, model: str) -> str:
    """What a topic page's text is made from besides its plan: the write template, the model,
    and how wikic writes and composes."""
    return quick_fingerprint([write.VERSION, compose.VERSION, template, model])


def decide(build: _Build, pages: Mapping[str, PagePlan], sources: list[Read]) -> Quick | None:
    """The edit's pages, where the last build left what they are assembled against: the plan
    patched from its own (Keep.same), the same settings, and wiki/ as it left it; else None."""
    opts, keep, state = build.opts, build.kept_plan, build.state
    if opts.force or opts.retry_failed or opts.dry_run or keep.every or not keep.basis:
        return None
    if build.failed_sources or build.local_only:
        return None
    by = (state.get_meta(Meta.ASSEMBLED) or "").split(" ")
    if len(by) != 4 or by[0] != str(VERSION) or by[2] != keep.basis or by[3] != build._writes():
        return None
    if state.kept("page_text") is None:
        return None
    known, hands = _by_hand(build)
    if not known:
        return None
    entries = Rows(state.kept_entries, state.kept_entries)
    names = Names.loads(state.kept("names"), entries, Rows(state.kept_names, state.kept_names))
    if names is None or names.fingerprint != by[1]:
        return None
    starts = {s.path: s.pages for s in sources if s.pages}
    as_kept = _as_kept(keep, pages, Sources(sources), build.intake.settled.recorded, starts)
    if not keep.same:  # a page moved: every page is planned anew
        return None
    changed = [pid for pid in keep.pages if pid not in as_kept]
    if starts:  # a PDF's pages are read anew: its pages' keys too (assemble._same_key)
        changed += [pid for pid in keep.same if any(s in starts for s in pages[pid].sources)]
    if len(changed) > max(FEW, len(pages) // SHARE):  # most pages: the full assembly is as cheap
        return None
    entries.load(pages[pid].slug for pid in changed)
    if any(pages[pid].type != "source" and not pages[pid].claims for pid in changed):
        return None  # a topic page without notes is not assembled (pipeline._outputs): the full way
    added: dict[str, Entry] = {}
    renamed: dict[str, tuple[Entry, Entry]] = {}
    for pid in changed:
        page, kept = pages[pid], names.entries.get(pages[pid].slug)
        if kept is None and pid not in keep.before:  # a page new, under a slug no page has
            added[page.slug] = (page.title, page.type, page.aliases, pid)
        elif kept is None or (kept[3] != pid and kept[3] not in keep.gone):
            return None  # a page moved
        elif kept != (page.title, page.type, page.aliases, pid):  # its names go, its new ones come
            # (a source moved: its page, a page of another id, takes the slug of the page gone)
            renamed[page.slug] = (kept, (page.title, page.type, page.aliases, pid))
    gone = state.kept_entries_of_pages(keep.gone) if keep.gone else {}
    if len(gone) != len(keep.gone) or gone.keys() & added.keys():
        return None
    gone = {slug: entry for slug, entry in gone.items() if slug not in renamed}
    if hands is not None and hands.pages.keys() & added.keys():
        return None  # a page made by hand under the slug of a page the build adds: the full way says so
    if hands is not None and not _kept_as_edited(hands, names, pages):
        return None
    forgotten = sorted(keep.dropped or [])
    return Quick(names, changed, starts, added, gone, renamed, len(pages), forgotten=forgotten, hands=hands)


def _by_hand(build: _Build) -> tuple[bool, handmade.Hands | None]:
    """Whether wiki/ is as the last build left it but for pages changed by hand (told to the
    lint summary: Report.hand), and what those are (handmade.py)."""
    state, found = build.state, build.found
    left = state.get_meta(Meta.WIKI_LEFT)
    try:
        if left == found.digest():
            return True, handmade.kept(state)
        hands = handmade.changed(state, found, left) if left else None
    except handmade.Unreadable:
        return False, None
    if hands is None:
        return False, None
    build.report.hand, build.report.hand_left = hands.told(), left or ""
    build.report.hand_files = hands.files
    return True, hands


def _kept_as_edited(hands: handmade.Hands, names: Names, pages: Mapping[str, PagePlan]) -> bool:
    """Whether the build's pages edited by hand (now, or before and kept so) are pages it
    still makes under their slugs (it renders them again, and publish keeps them and says so)."""
    for slug in hands.mine:
        pid = names.entries.get(slug, ("", "", [], ""))[3]
        if not pid or pid not in pages or pages[pid].slug != slug:
            return False
    return True


def _as_kept(
    keep: Keep,
    pages: Mapping[str, PagePlan],
    sources: Sources,
    recorded: Mapping[str, tuple[int, int, str]],
    starts: Mapping[str, tuple[int, ...]],
) -> set[str]:
    """The pages the plan made again exactly as the last plan kept them (row for row), whose
    body reads nothing else the edit changed: a topic page's is its row and its text; a source
    page's also its source's lines (unchanged where its bytes are) and the lines of it among its
    topics' notes (the pages planned again tell which sources' changed)."""
    rows = {pid for pid, row in keep.pages.items() if keep.before.get(pid) == row}
    moved: set[str] = set()  # the sources whose lines among a topic page's notes changed
    for pid in keep.pages:
        if pid in rows or pid.startswith("source:") or pid not in keep.before:
            continue
        was = _lines_by_source((c[1], c[2], c[3]) for c in claims_of(keep.before[pid]))
        now = _lines_by_source((c.source, c.start, c.end) for c in pages[pid].claims)
        moved |= {src for src in was.keys() | now.keys() if was.get(src) != now.get(src)}
    kept = set()
    for pid in rows:
        if pid not in pages or any(s in starts for s in pages[pid].sources):  # a PDF's pages read anew
            continue
        src = pages[pid].sources[0] if pid.startswith("source:") else ""
        if not src or (
            src not in moved and src in sources and sources[src].hash == recorded.get(src, (0, 0, ""))[2]
        ):
            kept.add(pid)
    return kept


def _lines_by_source(claims: Iterable[tuple[str, int, int]]) -> dict[str, list[tuple[int, int]]]:
    found: dict[str, list[tuple[int, int]]] = {}
    for source, start, end in claims:
        found.setdefault(source, []).append((start, end))
    return found


def outputs(
    build: _Build, sources: list[Read], pages: Mapping[str, PagePlan], prose: dict[str, Any], mark: str
) -> bool:
    """The edit's pages assembled and published, log.md told, and the build saved
    (pipeline._outputs, the quick way); False where the full assembly must be made, with
    nothing written yet."""
    edit, root, state = build.edit, build.project.root, build.state
    assert edit is not None
    job = _assembly(build, edit, sources, pages, prose)
    forgotten = edit.forgotten  # sources deleted: forgotten everywhere, as the full way does
    if forgotten and _answers_go(root, state, edit):
        return False  # the full way removes them, and lists the rest
    index_kept = edit.hands is not None and edit.hands.index  # wiki/'s edited (or deleted) by hand
    own = _own_index(build) if index_kept else None  # the build's, patched
    if index_kept and own is None:
        return False
    got = quick_assemble(job, edit, state, (lambda: own) if own else (lambda: _index(root)), root)
    if got is None:
        return False
    done, new_index, same_links = got
    listing, build.own_index = edit.listing, new_index or own
    if own is None:
        build.report.index_same_links = new_index is not None and same_links and not listing
        build.report.index_listed = new_index is not None and same_links and listing
    else:  # made again: publish keeps wiki/'s and says so, as each build does (or writes it)
        new_index = build.own_index
    written = dict(done.outputs) | ({"index.md": new_index} if new_index is not None else {})
    gone = [f"wiki/{slug}.md" for slug in edit.gone]
    records = state.files_of([*(f"wiki/{name}" for name in written), *gone])
    publish(root, written, set(), state, build.report, False, records, prune=False, remove=gone)
    state.set_assembled(done.rendered, list(edit.gone), done.by, done.links)
    if edit.described is not None:
        build.described = edit.described
    elif state.get_meta(Meta.FOREIGN_LEFT) is None:  # kept by no build yet (an older wikic's)
        build.described = _described(root, state.assembled_foreign())
    _explained(build, edit, len(done.outputs) + len(done.unchanged))
    before = int(state.get_meta(Meta.PAGES) or len(pages))  # the same pages as then, but those new or gone
    build.report.pages = before + len(edit.added) - len(edit.gone)
    scrub = forget.log_scrubber(root, forgotten) if forgotten else None
    build.logged = append_log(root, state, build.report, scrub=scrub)
    build._save(sources, pages, mark)
    # everything else that may hold their text (privacy/forget.py), as the full way does
    if forgotten and not forget.purge(build.project, state, forgotten, build.report.wiki)["compacted"]:
        build.report.warnings.append(forget.NOT_COMPACTED)
    return True


def _own_index(build: _Build) -> str | None:
    """index.md as the build made it last, where wiki/'s is edited or deleted by hand
    (ownindex.py): kept, or made again; None where neither can be had (the full way)."""
    state, schema = build.state, build.schema
    own = ownindex.kept(build.project.state_dir, state)
    if own is None:  # the first build that finds it edited: the one the last build wrote
        own = ownindex.made_again(state, schema.title, schema.scope, schema.index_order())
    return own


def _assembly(
    build: _Build, edit: Quick, sources: list[Read], pages: Mapping[str, PagePlan], prose: dict[str, Any]
) -> Assembly:
    """What the edit's pages are assembled with (quick_assemble)."""
    schema = build.schema
    return Assembly(
        pages,
        Prose(prose, build.state),
        {},
        LineCounts(Sources(sources)),
        schema.title,
        schema.scope,
        schema.index_order(),
        page_starts=edit.starts,
        prose_keys=build.prose_keys,
        token=build.kept_plan.token,
        writes=build._writes(),
        folder=build.project.state_dir,
    )


def _explained(build: _Build, edit: Quick, assembled: int) -> None:
    """--explain's lines of the quick way, the hand edits kept and the pages written again
    as the full way says them."""
    build._explain(QUICK, _why(edit, assembled))
    for rel in build.report.conflicts:
        build._explain(f"assemble {rel}", "hand edit kept (use --force to overwrite)")
    for slug, hand in edit.hands.edited.items() if edit.hands is not None else ():
        if hand.now is None:  # deleted by hand: written again, as the full way says
            build._explain(f"assemble wiki/{slug}.md", "output missing")


def _why(edit: Quick, assembled: int) -> str:
    """--explain's reason for the quick way: the pages it assembled, by why."""
    planned = len(edit.changed)
    why = f"{planned} pages the edit planned again"
    if edit.added or edit.gone or edit.renamed:
        kinds = f"{len(edit.added)} new, {len(edit.gone)} gone and {len(edit.renamed)} renamed"
        why += f" ({kinds}), {edit.named} whose text names one"
    why += f", {assembled - planned - edit.named - edit.redone} whose backlinks it changed"
    hands = edit.hands
    if hands is not None and (hands.pages or hands.edited):
        why += f", for {len(hands.pages) + len(hands.edited)} pages changed by hand"
    if hands is not None and (mine := hands.mine):
        why += f" ({len(mine)} of the build's, made again: kept where edited)"
    return why + "; the others as the last build left them"


def _foreign_relinked(root: Path, slugs: list[str], changed: set[str]) -> dict[str, PageEntry] | None:
    """The pages not the build's (an answer, a hand-made page) with a [[link]] that the names
    `changed` (casefolded: names and slugs) resolve otherwise now: by its file stem, or by its
    text (wiki.read.resolve_target); their entries, read again (None where one cannot be read).
    Their other words link nothing."""
    keys = {key: key for key in changed}  # resolve_target's tables, of these alone
    found: dict[str, PageEntry] = {}
    for slug in slugs:
        entry = _foreign(root, slug)
        if entry is None:
            return None
        if any(resolve_target(target, keys, keys) is not None for target in entry.links):
            found[slug] = entry
    return found


def _described(root: Path, slugs: list[str]) -> dict[str, str] | None:
    """The descriptions of these pages not the build's, as they are (wiki/ is as the last
    build left it: as it described them); None where one cannot be read."""
    found: dict[str, str] = {}
    for slug in slugs:
        entry = _foreign(root, slug)
        if entry is None:
            return None
        found[slug] = entry.description
    return found


def _foreign(root: Path, slug: str) -> PageEntry | None:
    try:
        return foreign_entry(slug, (root / "wiki" / f"{slug}.md").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


def _answers_go(root: Path, state: State, edit: Quick) -> bool:
    """Whether a saved answer cites only pages that go (the full way removes it): of those the
    last assembly listed, and those new in wiki/ since (handmade.py)."""
    slugs = set(state.assembled_foreign())
    if edit.hands is not None:
        slugs |= {slug for slug, hand in edit.hands.pages.items() if hand.now is not None}
    answers = [root / "wiki" / f"{slug}.md" for slug in sorted(slugs)]
    return any(True for _ in forget.answers_citing(answers, set(edit.gone)))


def prose_of_all(build: _Build, pages: Mapping[str, PagePlan]) -> dict[str, dict[str, Any]]:
    """Every topic page's text, where the quick way was given up after the edit's pages were
    composed: the others' write actions taken from the state (up to date, counted already)."""
    assert build.edit is not None
    mine = set(build.edit.changed)
    others = build._actions({pid: p for pid, p in pages.items() if pid not in mine})
    records = [r for a in others.values() if (r := build.records.get(a.id)) is not None]
    known = build.state.cached_many([r.key for r in records])
    for a in others.values():
        resolve(a, build.records.get(a.id), build.state, build.mid, False, known)
    return build._compose(pages, others | build.written, None)
