"""The assemble stage (no model): resolve and add links, add front matter,
citations, Sources and backlinks, and write index.md. Bookkeeping is code."""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from wikic import forked
from wikic.build.linker import Linker, resolve_links
from wikic.build.linker import PageEntry as PageEntry
from wikic.build.lookups import Cites, Names, SourceSlugs, TopicSlugs
from wikic.build.outputs import Outputs
from wikic.build.plan import PagePlan
from wikic.hashing import quick_fingerprint
from wikic.spill import Spilled
from wikic.state import Links, Rendered
from wikic.wiki.frontmatter import render_front_matter
from wikic.wiki.page import (
    WIKILINK,
    Citation,
    plain_links,
    seal,
    sealed_pieces,
    split_page,
    wikilink,
    with_pages,
)
from wikic.wiki.read import gc_paused, resolve_target

TYPE_HEADINGS = {"source": "Sources", "answer": "Answers"}
VERSION = 2  # of the rendering: bump when a page's text changes for the same inputs
INDEX_PIECE = 1 << 12  # index.md's lines made and joined at a time (index_pieces)
ROUND = 5000  # pages settled together, rendered by every CPU (_Bodies.settle_all)
MD_LINK = re.compile(r"\[[^\]]*\]\([^)]*\)")
SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def first_sentence(text: str, limit: int = 120) -> str:
    plain = WIKILINK.sub(lambda m: m.group(3) or m.group(1), text)
    plain = MD_LINK.sub("", plain).strip()
    sentence = SENTENCE_END.split(plain, maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def _line_ranges(cites: list[Citation]) -> str:
    return ", ".join(c.markdown() for c in cites)


def topic_body(
    page: PagePlan, text: dict[str, Any], linker: Linker, source_slugs: SourceSlugs
) -> tuple[str, set[str]]:
    """The page from its composed text (compose.py): each sentence followed by the citation
    of the lines it draws on; notes beyond write.max_notes listed after it."""
    linked: set[str] = set()
    # each note's citation made once: it is cited in the text or under More notes, and again
    # under Sources (a topic page of a 100,000-source wiki has thousands)
    marks = [Citation(c.source, c.start, c.end).markdown() for c in page.claims]

    def cites(notes: list[int]) -> str:
        return " ".join([marks[n - 1] for n in sorted(set(notes)) if 1 <= n <= len(marks)])

    parts = [f"# {page.title}", ""]
    linker.prefetch(sentence["text"] for para in text["paragraphs"] for sentence in para)
    for para in text["paragraphs"]:
        said = []
        for sentence in para:
            prose = linker.autolink(resolve_links(sentence["text"], linker, linked), page.slug, linked)
            said.append(f"{prose} {cites(sentence['notes'])}".rstrip())
        parts += [" ".join(said), ""]
    if text.get("more"):
        parts += [f"## More notes ({len(text['more'])}, listed as they are, not written into the text)", ""]
        for n in text["more"]:
            parts.append(f"- {page.claims[n - 1].text} {cites([n])}")
        parts.append("")
    parts += ["## Sources", ""]
    by_source: dict[str, list[str]] = defaultdict(list)
    for c, mark in zip(page.claims, marks, strict=True):
        by_source[c.source].append(mark)
    for source in page.sources:
        slug = source_slugs.get(source)
        name = wikilink(slug, source_slugs.title(source)) if slug else source
        if slug:
            linked.add(slug)
        parts.append(f"- {name}: {', '.join(by_source[source])}")
    return "\n".join(parts) + "\n", linked


def source_body(
    page: PagePlan,
    n_lines: int,
    topic_slugs: Mapping[str, str],
    pages: Mapping[str, PagePlan],
    linker: Linker,
    cites: Mapping[tuple[str, str], list[list[int]]],
) -> tuple[str, set[str]]:
    """`cites`: (topic page id, source) -> the source's line ranges among the topic's notes,
    grouped once per build (scanning each topic's notes per source page is quadratic: 100,000
    sources)."""
    linked: set[str] = set()
    said = []
    linker.prefetch(text for text, _ in page.summary_lines)
    for text, ranges in page.summary_lines:  # each sentence cited to the lines that say it
        cited = " ".join(Citation(page.sources[0], a, b).markdown() for a, b in ranges if b <= n_lines)
        said.append(f"{linker.autolink(text, page.slug, linked)} {cited}".rstrip())
    summary = " ".join(said) or "No summary was produced for this source."
    parts = [f"# {plain_links(page.title)}", "", summary, ""]  # a title's [[...]] is no link of ours
    if page.claims:  # the source's lines no topic page carries: listed, so that no fact is lost
        parts += ["## Also in this source", ""]
        for c in page.claims:  # as they are, unlinked: a source feeds topic pages only through its digest
            parts.append(f"- {c.text} {Citation(c.source, c.start, c.end).markdown()}")
        parts.append("")
    parts += ["## Topics", ""]
    for tid in page.topics:
        slug = topic_slugs.get(tid)
        if slug is None:
            continue
        found = [Citation(page.sources[0], a, b) for a, b in cites.get((tid, page.sources[0]), [])]
        tail = f": {_line_ranges(found)}" if found else ""
        parts.append(f"- {wikilink(slug, pages[tid].title)}{tail}")
        linked.add(slug)
    if not page.topics:
        parts.append("- (no topics were found in this source)")
    return "\n".join(parts) + "\n", linked


def front_matter(page: PagePlan) -> str:
    meta: dict[str, Any] = {"title": page.title, "type": page.type}
    if page.aliases:
        meta["aliases"] = page.aliases
    meta["sources"] = page.sources
    return render_front_matter(meta)


def with_backlinks(body: str, backlinks: list[PageEntry]) -> str:
    if not backlinks:
        return body
    lines = ["", "## Linked from", ""] + [f"- {wikilink(e.slug, e.title)}" for e in backlinks]
    return body + "\n".join(lines) + "\n"


def foreign_entry(slug: str, text: str) -> PageEntry:
    page = split_page(text)
    title = str(page.meta.get("title") or slug)
    aliases = page.meta.get("aliases") or []
    entry = PageEntry(
        slug,
        title,
        str(page.meta.get("type") or "page"),
        [str(a) for a in aliases] if isinstance(aliases, list) else [],
    )
    entry.links = set(page.link_targets())  # as lint and the viewer read them: none inside code
    body_lines = [ln for ln in page.body.splitlines() if ln.strip() and not ln.startswith("#")]
    entry.description = first_sentence(body_lines[0]) if body_lines else ""
    return entry


def plural(word: str) -> str:
    if word.endswith("y") and word[-2:-1] not in ("a", "e", "i", "o", "u"):
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


def type_heading(kind: str) -> str:
    """The heading of a type's pages in index.md."""
    return TYPE_HEADINGS.get(kind, plural(kind.replace("-", " ").replace("_", " ").capitalize()))


def index_head(title: str, scope: str) -> str:
    """index.md's text before its count of pages."""
    return f"# {title}\n\n" + (f"{scope}\n\n" if scope else "")


def index_line(slug: str, title: str, description: str) -> str:
    return f"- {wikilink(slug, title)}" + (f" — {description}" if description else "")


def render_index(title: str, scope: str, entries: list[PageEntry], type_order: list[str]) -> str:
    return "".join(index_pieces(title, scope, entries, type_order))


def index_pieces(title: str, scope: str, entries: list[PageEntry], type_order: list[str]) -> list[str]:
    """index.md's text in pieces of INDEX_PIECE lines at most, each line ended by a newline, the
    text's end stripped (render_index joins them): made, hashed and sealed a piece at a time
    (page.sealed_pieces), its lines never all held at once (100,000 strings, 20 MB, were a full
    build's peak at 100,000 pages) nor the text copied to be stripped and sealed."""
    groups: dict[str, list[PageEntry]] = defaultdict(list)
    for e in entries:
        groups[e.type].append(e)
    order = [t for t in type_order if t in groups] + sorted(t for t in groups if t not in type_order)
    pieces: list[str] = []
    lines = [index_head(title, scope) + f"{len(entries)} pages."]
    for kind in order:
        lines += ["", f"## {type_heading(kind)}", ""]
        for e in sorted(groups[kind], key=lambda e: (e.title.casefold(), e.slug)):
            if len(lines) >= INDEX_PIECE:
                pieces.append("\n".join(lines) + "\n")
                lines = []
            lines.append(index_line(e.slug, e.title, e.description))
    lines[-1] = lines[-1].rstrip()  # the text's end: every group ends in a page's line
    pieces.append("\n".join(lines) + "\n")
    return pieces


@dataclass
class Assembly:
    """What assemble renders: `pages` (topic pages need their `prose`); `foreign`, the
    slugs of pages the build does not own (answers, hand-made) with their text; `kept`,
    planned pages left as they are this time (their write failed): their files are among
    `foreign`, and source pages still list them; the index's title, scope and type order.
    `previous`: what the last assembly rendered of each page, by key; `intact`: the slugs
    whose files are as wikic last wrote them (by stat), which need not be rendered again;
    `prose_keys`: each topic page's Composer key (compose.py), over all its text and notes
    are made of, so that its key here need not read them again."""

    pages: Mapping[str, PagePlan]
    prose: Mapping[str, dict[str, Any]]
    foreign: dict[str, str]
    line_counts: Mapping[str, int]
    title: str
    scope: str
    type_order: list[str]
    kept: Mapping[str, PagePlan] = field(default_factory=dict)
    previous: dict[str, Rendered] = field(default_factory=dict)
    intact: set[str] = field(default_factory=set)
    page_starts: dict[str, tuple[int, ...]] = field(default_factory=dict)  # a PDF's pages, by source
    prose_keys: dict[str, str] = field(default_factory=dict)
    # The pages planned as the plan `basis` planned them (replan.Keep.same); `assembled_by`: what
    # the last assembly went by (Meta.ASSEMBLED). Where it went by that plan, these names and
    # this VERSION, a source page among `same` has the body key it had then, unread.
    same: set[str] = field(default_factory=set)
    basis: str = ""
    token: str = ""  # this build's plan's (replan.Keep.token)
    assembled_by: str = ""
    writes: str = ""  # what else a page's text is made from: template, model (pipeline.py)
    folder: Path | None = None  # where the rendered bodies wait for publish (wikic/spill.py)


@dataclass
class Assembled:
    """The files to write (by name in wiki/: Outputs, where the full assembly makes them), the
    pages left as they are (their inputs and backlinks unchanged), and what each page was
    rendered from, for the next build."""

    outputs: Mapping[str, str]
    unchanged: set[str]
    rendered: dict[str, Rendered]
    by: str = ""  # what its keys went by (Assembly.assembled_by, for the next)
    links: Links | None = None  # what its pages link to, and its names (quick.py)
    described: dict[str, str] | None = None  # the pages not the build's: slug -> description (handmade.py)


def assemble(job: Assembly) -> Assembled:
    """Every planned page whose inputs changed, and index.md; the others are named unchanged."""
    # No collection while it runs: the lists it makes would set off full ones, each scanning
    # the plan's million objects again (two, 0.3 s, at 10,000 sources), for no cycle to free.
    with gc_paused():
        return _assemble(job)


def _assemble(job: Assembly) -> Assembled:
    entries = {p.slug: PageEntry(p.slug, p.title, p.type, p.aliases) for p in job.pages.values()}
    for slug, text in job.foreign.items():
        entries[slug] = foreign_entry(slug, text)
    linker = Linker(list(entries.values()))
    bodies = _Bodies(job, entries, linker, linker.fingerprint())
    bodies.key_all()
    slugs = {slug.casefold(): slug for slug in entries}
    for slug in job.foreign:  # [[HNSW]], [[vector databases]]: to slugs, as lint and the viewer do
        found = (resolve_target(target, slugs, bodies.linker.names) for target in entries[slug].links)
        entries[slug].links = {s for s in found if s is not None}
    bodies.settle_all(_spread(sorted(job.pages)))
    back: dict[str, list[PageEntry]] = defaultdict(list)
    for e in entries.values():
        for target in e.links:
            if target != e.slug:
                back[target].append(e)
    out = Outputs()  # each page's text made as publish writes it: its body alone held till then
    unchanged: set[str] = set()
    rendered: dict[str, Rendered] = {}
    for pid, page in job.pages.items():
        mine = entries[page.slug].links
        extra = sorted((e for e in back[page.slug] if e.slug not in mine), key=lambda e: e.slug)
        key = page_key(bodies.keys[pid], [(e.slug, e.title) for e in extra])
        entry, prev = entries[page.slug], job.previous.get(page.slug)
        links = sorted(entry.links)
        if prev is not None and prev.links == links:  # held once, not twice (100,000 pages: 27 MB)
            links = prev.links
        rendered[page.slug] = Rendered(bodies.keys[pid], key, links, entry.description)
        if prev is not None and prev.page_key == key and page.slug in job.intact:
            unchanged.add(f"{page.slug}.md")
            continue
        bodies.render(pid)
        out.put(f"{page.slug}.md", partial(_spilled_text, page, bodies.bodies, pid, extra))
    index = index_pieces(job.title, job.scope, list(entries.values()), job.type_order)
    out.put("index.md", sealed_pieces(index))
    del index
    by = went_by(bodies.names, job.token, job.writes)
    described = {slug: entries[slug].description for slug in job.foreign}
    kept = _links(job, entries, linker, bodies.names, rendered)
    return Assembled(out, unchanged, rendered, by, kept, described)


def _spread(pids: list[str]) -> list[str]:
    """The topic pages spread evenly among the source pages, each kind in its order: by name
    they came last, at 10,000 sources 297 pages of half the weight in a last round too small
    to share (settle_all: this process rendered them alone), and first, at 100,000 sources
    one round's child sent back 1,500 topic pages' bodies at once (the build's peak, 63 MB
    over)."""
    topics = [pid for pid in pids if not pid.startswith("source:")]
    sources = [pid for pid in pids if pid.startswith("source:")]
    at = [((i + 0.5) / len(topics), pid) for i, pid in enumerate(topics)]
    at += [((i + 0.5) / len(sources), pid) for i, pid in enumerate(sources)]
    return [pid for _, pid in sorted(at)]


def page_key(body_key: str, extra: list[tuple[str, str]]) -> str:
    """The whole page's key: its body's, and the backlinks it lists beyond its own links (most
    pages have none: their body's key is the page's)."""
    return quick_fingerprint([body_key, [list(e) for e in extra]]) if extra else body_key


def page_text(page: PagePlan, body: str, extra: list[PageEntry]) -> str:
    return seal(front_matter(page) + "\n" + with_backlinks(body, extra))


def _spilled_text(page: PagePlan, bodies: Spilled, pid: str, extra: list[PageEntry]) -> str:
    return page_text(page, bodies[pid], extra)


def _links(
    job: Assembly,
    entries: dict[str, PageEntry],
    linker: Linker,
    fingerprint: str,
    rendered: dict[str, Rendered],
) -> Links:
    """Every page's links, names and text the linker read (`fingerprint`: the linker's), kept
    whole for the next assembly (quick.py, comego.py); a page's links its row's list where it
    does not link to itself (`rendered`)."""
    ids = {p.slug: pid for pid, p in job.pages.items()}
    kept = {e.slug: (e.title, e.type, e.aliases, ids.get(e.slug, "")) for e in entries.values()}
    names = Names(fingerprint, linker.heads, kept, linker.names)
    edges = {
        e.slug: rendered[e.slug].links
        if e.slug in rendered and e.slug not in e.links
        else sorted(e.links - {e.slug})
        for e in entries.values()
        if e.links - {e.slug}
    }
    texts = ((p.slug, linked_text(p, job.prose.get(pid))) for pid, p in job.pages.items())
    return Links(True, edges, [], names.dumps(), kept, dict(linker.names), texts)


def linked_text(page: PagePlan, prose: Mapping[str, Any] | None) -> str:
    """The text of a page's body that the linker reads (autolink, resolve_links), casefolded:
    where an edit whose pages come or go looks for their names (comego.py)."""
    if page.type == "source":
        texts = [text for text, _ in page.summary_lines]
    else:
        texts = [sentence["text"] for para in prose["paragraphs"] for sentence in para] if prose else []
    return "\n".join(texts).casefold()


def went_by(names: str, plan: str, writes: str) -> str:
    """What an assembly's keys went by: this VERSION, the names, the plan and the writes."""
    return f"{VERSION} {names} {plan} {writes}"


class _Bodies:
    """Each page's body with its links resolved, rendered only when its inputs changed
    since the last assembly (or when its backlinks did, which need the whole page again).
    Every body is rendered before any page is made (a page lists the pages linking to it), and
    waits for publish in a temporary file, not in memory: 200 MB at 100,000 pages."""

    def __init__(self, job: Assembly, entries: dict[str, PageEntry], linker: Linker, names: str) -> None:
        self.job, self.entries, self.linker, self.names = job, entries, linker, names
        pages = job.pages
        self.source_slugs = SourceSlugs(pages)
        kept = {pid: p for pid, p in job.kept.items() if p.slug in job.foreign}
        self.planned = {**kept, **pages} if kept else pages
        self.topic_slugs = TopicSlugs(self.planned)
        self.cites = Cites(self.planned)  # (topic, source) -> lines
        self.keys: dict[str, str] = {}
        self.bodies = Spilled(job.folder)
        # slug -> linked_text, of the pages rendered, where asked for (quick.py; a full assembly
        # keeps every page's from the plan: _links)
        self.texts: dict[str, str] | None = None

    def key_all(self) -> None:
        """Every page's body key: the one its last assembly had, where it went by this plan."""
        job, pages, names = self.job, self.job.pages, self.names
        went = bool(job.basis) and job.assembled_by == went_by(names, job.basis, job.writes) and not job.kept
        same = job.same if went else set()
        self.keys = {pid: self._same_key(page) if pid in same else "" for pid, page in pages.items()}
        self.keys = {pid: key or self._key(pid, pages[pid], names) for pid, key in self.keys.items()}

    def _same_key(self, page: PagePlan) -> str:
        """A page planned as its last assembly's plan planned it (a topic page's text composed
        as it was, too: the pipeline leaves out those it composed anew): its body key then.
        A source page's topics' titles, slugs and notes of it are the same (else the plan made
        it again: its topics' pages were made again), and so are its lines; the slugs of a
        topic page's sources are (no page moved); a PDF's pages are read anew."""
        prev = self.job.previous.get(page.slug)
        if prev is None or any(s in self.job.page_starts for s in page.sources):
            return ""
        return prev.body_key

    def settle(self, pid: str) -> None:
        """The page's links and index line: remembered when its body's inputs are unchanged."""
        page = self.job.pages[pid]
        prev = self.job.previous.get(page.slug)
        if prev is not None and prev.body_key == self.keys[pid]:
            self.entries[page.slug].links = set(prev.links)
            self.entries[page.slug].description = prev.description
        else:
            self.render(pid)

    def settle_all(self, pids: list[str]) -> None:
        """settle() each page; the bodies of each ROUND of pages but a first share rendered by
        forked children (forked.py), which send back what rendering one gives: the same in every
        case (what a child sends of 2,500 bodies is held at once: 5 MB)."""
        for at, end in itertools.pairwise(forked.rounds(len(pids), ROUND)):
            some = pids[at:end]
            with forked.Ahead(self._apart, some, weight=self._weight) as ahead:
                for i, pid in enumerate(some):
                    made = ahead.done(i)
                    if made is None:
                        self.settle(pid)
                        continue
                    body, links, description, text = made
                    entry = self.entries[self.job.pages[pid].slug]
                    entry.links, entry.description = set(links), description
                    if self.texts is not None and text is not None:
                        self.texts[entry.slug] = text
                    self.bodies.add(pid, body)

    def _apart(self, pid: str) -> tuple[str, list[str], str, str | None] | None:
        """What settle() renders of a page, in a forked child: its body, links, description and
        linked text (where asked for); None where it renders nothing."""
        page = self.job.pages[pid]
        prev = self.job.previous.get(page.slug)
        if (prev is not None and prev.body_key == self.keys[pid]) or pid in self.bodies:
            return None
        body = self._render(pid)
        entry = self.entries[page.slug]
        text = self.texts.get(page.slug) if self.texts is not None else None
        return body, sorted(entry.links), entry.description, text

    def _weight(self, pid: str) -> int:
        page = self.job.pages[pid]
        return len(page.claims) + 2 * len(page.sources) + 10

    def render(self, pid: str) -> None:
        if pid not in self.bodies:
            self.bodies.add(pid, self._render(pid))

    def body(self, pid: str) -> str:
        self.render(pid)
        return self.bodies[pid]

    def _render(self, pid: str) -> str:
        page, job, entry = self.job.pages[pid], self.job, self.entries[self.job.pages[pid].slug]
        if page.type == "source":
            lines = job.line_counts.get(page.sources[0], 1)
            body, links = source_body(page, lines, self.topic_slugs, self.planned, self.linker, self.cites)
            entry.description = first_sentence(page.summary)
        else:
            body, links = topic_body(page, job.prose[pid], self.linker, self.source_slugs)
            entry.description = first_sentence(job.prose[pid]["paragraphs"][0][0]["text"])
        entry.links = links
        if self.texts is not None:
            self.texts[page.slug] = linked_text(page, None if page.type == "source" else job.prose[pid])
        return with_pages(body, job.page_starts)  # a PDF's citations also name its page

    def _key(self, pid: str, page: PagePlan, names: str) -> str:
        """Everything the page's body and front matter are made from."""
        starts = [self.job.page_starts.get(s) for s in page.sources]  # a PDF's pages, cited in links
        if page.type != "source":
            feeds = [[s, self.source_slugs.get(s)] for s in page.sources]
            composed = self.job.prose_keys.get(pid)
            if composed is not None:  # its title, type, aliases, notes, in_text and composed text
                return quick_fingerprint([VERSION, names, page.slug, page.sources, starts, composed, feeds])
        claims = [[c.text, c.source, c.start, c.end] for c in page.claims]
        head = [VERSION, names, page.title, page.type, page.slug, page.aliases, page.sources, claims, starts]
        if page.type != "source":
            return quick_fingerprint([*head, page.in_text, self.job.prose[pid], feeds])
        topics = []
        for tid in page.topics:
            topic = self.planned.get(tid)
            if topic is not None and topic.type != "source":
                cites = self.cites.get((tid, page.sources[0]), [])
                topics.append([self.topic_slugs[tid], topic.title, cites])
        lines = self.job.line_counts.get(page.sources[0], 1)
        return quick_fingerprint([*head, page.summary, page.summary_lines, lines, topics])
