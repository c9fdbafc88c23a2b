"""What ask keeps of each page (ask/index.py): the ranking made from the kept records is the
ranking made from the pages read, page for page and sentence for sentence; only the pages
changed since the last question are read again; a record whose stat cannot be trusted, or of
another version, is read again; and forgetting a source drops every record."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from projects import make_project, run_build
from test_ask import asking, large_notes
from test_ask_select import bridge_notes

from wikic import forked, snapshot
from wikic.ask import index as ask_index
from wikic.ask.context import AskWiki, ContextBuilder, load_pages, read_index
from wikic.ask.select import Corpus, Ranking, page_scores, rank
from wikic.errors import PageError
from wikic.hashing import text_hash
from wikic.project import Project
from wikic.prompts.loader import Prompts
from wikic.state import State
from wikic.wiki.page import Page

QUESTIONS = [
    "In which town was the director of Moonfall Harbor born?",
    "Who was born in the town of Linden?",
    "How many nests did observers count along the river?",
    "Which animal lives in region 7 and what does it eat?",
    "stable population survey",
    "nothing here matches qwertyuiop",
    "What is it?",  # stop words alone: no word to find
]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = make_project(tmp_path, {**bridge_notes(), **large_notes()})
    report, _ = run_build(project)
    assert report.ok, report.errors
    return settled(project)


def settled(project: Project) -> Project:
    """Its pages not written in the tick of a question's reading (see the test of that), and
    the wiki current again for ask (a build that finds them as it left them)."""
    for page in project.wiki_dir.glob("*.md"):
        past(page)
    report, backend = run_build(project)
    assert report.ok and backend.requests == []
    return project


OPEN: list[State] = []  # the states the indexes read their bodies from, closed after each test


@pytest.fixture(autouse=True)
def _closed() -> Iterator[None]:
    yield
    while OPEN:
        OPEN.pop().close()


def indexed(project: Project) -> ask_index.Indexed:
    state = State.open(project.state_path)
    OPEN.append(state)
    return ask_index.indexed(project.wiki_dir, state)


def rows(project: Project) -> dict[str, tuple[int, int, bytes, bytes, str]]:
    state = State.open(project.state_path)
    try:
        bodies, terms = dict(state.ask_bodies()), dict(state.ask_terms())
        heads = state.ask_heads()
        return {rel: (size, mtime, head, bodies[rel], terms[rel]) for rel, size, mtime, head in heads}
    finally:
        state.close()


def seen(ranking: Ranking) -> list[object]:
    """A ranking as what it shows: each sentence with its page and all it carries."""
    units = [
        (s.page.slug, s.page.title, s.page.aliases, s.section, s.text, s.block, s.order, s.cites, s.links)
        for s in [*ranking.ranked, None, *ranking.bridge_sentences]
        if s is not None
    ]
    return [units, [p.slug for p in ranking.bridges]]


def same_as_read(project: Project, got: ask_index.Indexed) -> None:
    """The kept records give what the pages read give: the same pages in the same order, the
    same corpus, the same ranking of every question."""
    pages = load_pages(project.wiki_dir)
    kept = got.corpus(got.pages)  # the bodies read: the plain text with them
    assert [(p.rel, p.title, p.type, p.aliases, p.plain) for p in got.pages] == [
        (p.rel, p.title, p.type, p.aliases, p.plain) for p in pages
    ]
    fresh = Corpus(pages)
    for mine, theirs in ((kept.unit_bm25, fresh.unit_bm25), (kept.ranker.bm25, fresh.ranker.bm25)):
        assert mine.postings == theirs.postings and mine.counts == theirs.counts
        assert mine.idf == theirs.idf and mine.norm == theirs.norm
    assert kept.inbound == fresh.inbound
    for question in QUESTIONS:
        assert page_scores(question, got.pages, kept) == page_scores(question, pages, fresh)
        for floor in (0.0, 0.3):
            assert seen(rank(question, got.pages, kept, floor)) == seen(rank(question, pages, fresh, floor))
    same_when_scanned(project, pages)


def same_when_scanned(project: Project, pages: list[Page], where: str = "") -> None:
    """A corpus for one question (ask/scan.py), of the terms kept and the bodies of the pages it
    shows alone, ranks it as the corpus of the pages read does: to the bit."""
    pages = [p for p in pages if where in p.slug]
    for question in QUESTIONS:
        got = indexed(project)
        mine = [p for p in got.pages if where in p.slug]
        scanned = got.corpus(mine, question)
        fresh = Corpus(pages)
        assert page_scores(question, mine, scanned) == page_scores(question, pages, fresh)
        assert scanned.unit_bm25.scores(question) == fresh.unit_bm25.scores(question)
        for floor in (0.0, 0.3):
            assert seen(rank(question, mine, scanned, floor)) == seen(rank(question, pages, fresh, floor))
        slugs = [p.slug for p in pages]
        assert [scanned.inbound_of(slug) for slug in slugs] == [fresh.inbound_of(slug) for slug in slugs]


def test_the_records_rank_as_the_pages_read(project: Project) -> None:
    first = indexed(project)
    assert first.read == len(load_pages(project.wiki_dir)) > 40
    same_as_read(project, first)
    again = indexed(project)
    assert again.read == 0  # every page from its record
    same_as_read(project, again)


def test_pages_read_by_forked_children_are_recorded_as_those_read_here(
    project: Project, monkeypatch: pytest.MonkeyPatch, forks: list[int]
) -> None:
    """A first question over a large wiki reads and records its pages on every CPU, a round
    at a time (wikic/forked.py): the records are byte for byte those one process makes."""
    first = indexed(project)
    here = rows(project)
    assert first.read == len(here) > 40
    for page in project.wiki_dir.glob("*.md"):  # every page changed since: read again
        os.utime(page, ns=(page.stat().st_atime_ns, page.stat().st_mtime_ns - 10**9))
    monkeypatch.setattr(forked, "EACH", 5)
    monkeypatch.setattr(ask_index, "ROUND", 17)  # in rounds, each shared
    if forked.shares(17) < 2:
        pytest.skip("forks only on Linux with two CPUs")
    got = indexed(project)
    assert got.read == len(here) and forks
    assert {rel: row[2:] for rel, row in rows(project).items()} == {rel: row[2:] for rel, row in here.items()}
    same_as_read(project, got)


def test_some_of_the_pages_rank_as_those_pages_read(project: Project) -> None:
    """A remote model is shown no page of a local-only source: the corpus of the others."""
    got = indexed(project)
    some = [p for p in got.pages if "o" in p.slug]
    fresh = [p for p in load_pages(project.wiki_dir) if "o" in p.slug]
    assert 0 < len(some) < len(got.pages)
    for question in QUESTIONS:
        kept = rank(question, some, got.corpus(some), 0.3)
        assert seen(kept) == seen(rank(question, fresh, Corpus(fresh), 0.3))
    same_when_scanned(project, load_pages(project.wiki_dir), "o")


def past(path: Path, seconds: float = 10.0) -> None:
    when = time.time_ns() - int(seconds * 1e9)
    os.utime(path, ns=(when, when))


def test_only_the_pages_changed_since_are_read_again(project: Project) -> None:
    indexed(project)
    otter = project.wiki_dir / "otter.md"
    text = otter.read_text()
    otter.write_text(text.replace("nests", "dens"))
    past(otter, 5)
    (project.wiki_dir / "badger.md").unlink()
    new = project.wiki_dir / "zz-hand-made.md"  # its title from its heading
    new.write_text("# Hand made\n\nThe heron nests in region 99 near the dens of the otter.\n")
    aliased = project.wiki_dir / "heron.md"
    aliased.write_text(
        "---\ntitle: Grey Heron\naliases: [Ardea, heron]\nsources: [sources/otter.md, 7]\n---\n"
        "# Grey Heron\n\nThe [[otter|Otter]] and the heron share the river. It nests high.\n"
    )
    for page in (new, aliased):
        past(page, 5)
    got = indexed(project)
    assert got.read == 3  # the edited page and the new ones
    assert "wiki/badger.md" not in rows(project)  # a page gone: its record too
    same_as_read(project, got)
    assert indexed(project).read == 0


def test_a_page_written_in_the_tick_of_its_reading_is_read_again(project: Project) -> None:
    indexed(project)
    otter = project.wiki_dir / "otter.md"
    otter.write_text(otter.read_text().replace("nests", "dens"))
    future = time.time_ns() + 10**9  # not before the listing by RACY_NS: a later write may hide
    os.utime(otter, ns=(future, future))
    assert indexed(project).read == 1
    assert rows(project)["wiki/otter.md"][1] == -1  # kept unmatched
    assert indexed(project).read == 1  # and so read again
    past(otter)
    assert indexed(project).read == 1  # trusted now: kept with its mtime
    assert indexed(project).read == 0


def test_a_record_of_another_version_or_damaged_is_read_again(project: Project) -> None:
    indexed(project)
    kept = rows(project)
    size, mtime, head, body, terms = kept["wiki/otter.md"]
    other = b"ask0\n" + head[len(ask_index.MARK) :]  # its head of another version: read with the heads
    size2, mtime2, head2, body2, terms2 = kept["wiki/badger.md"]
    cut = body2[: len(body2) // 2]  # its body damaged: read again where the bodies are read
    state = State.open(project.state_path)
    try:
        damaged = {
            "wiki/otter.md": (size, mtime, other, body, terms),
            "wiki/badger.md": (size2, mtime2, head2, cut, terms2),
        }
        state.save_ask_rows(damaged, [])
    finally:
        state.close()
    got = indexed(project)
    assert got.read == 1
    same_as_read(project, got)
    assert got.read == 2


def test_terms_damaged_or_missing_are_read_again(project: Project) -> None:
    """A page's terms cut short, of another record, of another count of sentences, or not kept at
    all: its page is read again where a question is ranked, and the question ranks as over the
    pages read."""
    indexed(project)
    kept = rows(project)
    state = State.open(project.state_path)
    try:
        size, mtime, head, body, terms = kept["wiki/otter.md"]
        cut = terms[: terms.index("\n", terms.index("nest")) - 3]  # a word's line cut short
        size2, mtime2, head2, body2, _ = kept["wiki/badger.md"]
        other = kept["wiki/beaver.md"][4]  # another page's
        size3, mtime3, head3, body3, terms3 = kept["wiki/moose.md"]
        lens = terms3.index("\n#")
        short = terms3[:lens] + terms3[lens:].replace(" ", "", 1)  # a sentence fewer (two lengths as one)
        damaged = {
            "wiki/otter.md": (size, mtime, head, body, cut),
            "wiki/badger.md": (size2, mtime2, head2, body2, other),
            "wiki/moose.md": (size3, mtime3, head3, body3, short),
        }
        state.save_ask_rows(damaged, [])
        state.db.execute("DELETE FROM ask_terms WHERE rel = 'wiki/camel.md'")
    finally:
        state.close()
    pages = load_pages(project.wiki_dir)
    fresh = Corpus(pages)
    read = []
    for question in [*QUESTIONS, "How big is a moose?"]:
        got = indexed(project)
        scanned = got.corpus(got.pages, question)
        read.append(got.read)
        for floor in (0.0, 0.3):
            mine = rank(question, got.pages, scanned, floor)
            assert seen(mine) == seen(rank(question, pages, fresh, floor))
    # each read once, and kept anew: a count of sentences not its head's where a word asked is in it
    assert read[0] == 3 and sum(read) == 4 and read[-1] <= 1


def test_a_page_changed_while_ask_reads_it_is_a_clear_error(project: Project) -> None:
    """Its record damaged, so read again, and the page not what its head was: no ranking of a
    page half old, half new; the work failed (exit 1), ask again."""
    indexed(project)
    got = indexed(project)  # every page from its head
    otter = next(p for p in got.pages if p.slug == "otter")
    size, mtime, head, body, terms = rows(project)["wiki/otter.md"]
    state = State.open(project.state_path)
    try:
        state.save_ask_rows({"wiki/otter.md": (size, mtime, head, body[:20], terms)}, [])
    finally:
        state.close()
    page = project.wiki_dir / "otter.md"
    page.write_text(page.read_text().replace("nests", "dens"))
    with pytest.raises(PageError, match="otter.md changed while ask read it") as raised:
        got.plain([otter])
    assert raised.value.exit_code == 1
    assert indexed(project).corpus(got.pages, "Where are the dens?")  # the next ask reads it anew


def test_records_the_database_cannot_take_rank_from_memory(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process writing: the records are not kept, and the question ranks from the
    pages read this time, as over the pages read."""
    monkeypatch.setattr(State, "save_ask_rows", lambda self, rows, gone: False)
    pages = load_pages(project.wiki_dir)
    fresh = Corpus(pages)
    for question in QUESTIONS:
        got = indexed(project)
        assert got.read == len(pages) and rows(project) == {}
        mine = rank(question, got.pages, got.corpus(got.pages, question), 0.3)
        assert seen(mine) == seen(rank(question, pages, fresh, 0.3))


def test_the_walk_of_the_wiki_lists_the_pages_as_ask_lists_them(tmp_path: Path) -> None:
    """ask takes its listing of wiki/ from the walk its clean mark makes: the same pages with the
    same stats (a link's of the file it points at), not index.md or log.md, nothing below a
    folder; a folder named like a page is no page either way (ask cannot read it)."""
    wiki = tmp_path / "wiki"
    (wiki / "sub").mkdir(parents=True)
    for name in ("a.md", "b c.md", "index.md", "log.md", ".hidden.md", "notes.txt", "c.md.tmp", "sub/d.md"):
        (wiki / name).write_text(f"# {name}\n")
    (wiki / "folder.md").mkdir()
    (wiki / "link.md").symlink_to(wiki / "a.md")
    (wiki / "dangling.md").symlink_to(wiki / "nowhere.md")
    os.utime(wiki / "a.md", ns=(1, 10**18))
    _, pages = ask_index.listing(snapshot.wiki(Project(tmp_path)), 0)
    listed = {f"wiki/{name}": st for name, st in ask_index._listing(wiki) if name != "folder.md"}
    assert pages == listed
    assert set(pages) == {"wiki/a.md", "wiki/b c.md", "wiki/.hidden.md", "wiki/link.md"}
    assert pages["wiki/link.md"] == pages["wiki/a.md"] == ((wiki / "a.md").stat().st_size, 10**18)


def test_the_opening_pages_begin_the_system_message_as_every_page_does(project: Project) -> None:
    """Whether the whole wiki fits is told from the opening of the system message with every
    page: with wikic's own template, the first pages' render is that opening (no other page's
    text read); with the project's own, every page is rendered."""
    pages = load_pages(project.wiki_dir)
    index = read_index(project.wiki_dir, frozenset())
    wiki = AskWiki(Prompts(project.root), "Animals", "notes", index, pages)
    builder = ContextBuilder(wiki, len, 100)
    whole = builder.render("Where?", pages, [])[0]
    assert len(whole) > 5000
    for chars in (10, 2000, 5000, len(whole) - 1, len(whole), len(whole) + 10):
        opening = builder._opening("Where?", chars)
        assert whole.startswith(opening) and (len(opening) >= chars or opening == whole)
        assert opening == whole or len(opening) < len(whole)
    own = project.root / "prompts" / "ask.system.j2"
    own.parent.mkdir()
    own.write_text("{{ pages | length }} pages.\n{% for page in pages %}{{ page.text }}\n{% endfor %}")
    builder = ContextBuilder(AskWiki(Prompts(project.root), "Animals", "notes", index, pages), len, 100)
    assert builder._opening("Where?", 10) == builder.render("Where?", pages, [])[0]


def test_an_index_too_long_for_its_share_is_seen_so_from_its_opening(project: Project) -> None:
    """The index's titles go into the prefix while they take at most INDEX_SHARE of the budget; one
    many times longer is told from its first CHARS_PER_TOKEN characters a token of that share,
    not counted whole (the embedded model's tokenizer: 0.9 s a question over 10,000 pages'
    titles); one that fits is counted whole and kept, as before."""
    from wikic.ask.context import CHARS_PER_TOKEN, INDEX_SHARE, compact_index

    pages = load_pages(project.wiki_dir)
    index = read_index(project.wiki_dir, frozenset())
    titles = compact_index(index)
    counted: list[int] = []

    def count(text: str) -> int:
        counted.append(len(text))
        return -(-len(text) // 4)

    def prefix(limit: int, index: str = index) -> str:
        counted.clear()
        wiki = AskWiki(Prompts(project.root), "Animals", "notes", index, pages)
        return ContextBuilder(wiki, count, limit).index_prefix("Where?")[1]

    fits = -(-len(titles) // 4) / INDEX_SHARE
    assert prefix(int(fits) + 1) == titles and len(titles) in counted  # kept, counted whole
    assert prefix(int(fits) - 8) == ""  # a little over: counted whole, left out
    long_index = "\n".join([index] * 50)
    assert prefix(int(fits) + 1, long_index) == ""
    assert counted and max(counted) <= int((int(fits) + 1) * INDEX_SHARE * CHARS_PER_TOKEN)  # its opening


def test_an_indexs_opening_titles_begin_its_titles() -> None:
    """opening_titles: the titles of an index's first lines, a beginning of its compact_index
    longer than the characters asked for (or all of it): sections with titles and without,
    a section met again, lines before any section, CRLF line ends, a title cut at " — "."""
    import random

    from wikic.ask.context import compact_index, opening_titles

    rng = random.Random(5)
    for _ in range(200):
        lines = []
        for _ in range(rng.randint(0, 60)):
            kind = rng.random()
            if kind < 0.15:
                lines.append(f"## {rng.choice(['Concepts', 'Entities', 'Sources', ''])}")
            elif kind < 0.9:
                title = " ".join(rng.choice(["Graph", "Index", "HNSW", "Straße", "x"]) for _ in range(3))
                lines.append(f"- {title}" + (f" — about {title}" if rng.random() < 0.5 else ""))
            else:
                lines.append(rng.choice(["", "text", "-", "# Index"]))
        index = rng.choice(["\n", "\r\n"]).join(lines) + rng.choice(["", "\n"])
        whole = compact_index(index)
        for chars in (0, 1, 5, 40, 200, len(whole), len(whole) + 3):
            opening = opening_titles(index, chars)
            assert whole.startswith(opening)
            assert len(opening) > chars or opening == whole


def test_a_ranked_question_reads_the_bodies_of_the_pages_it_shows(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    asking(project, "warm the records", use_cache=False)
    wanted: list[str] = []
    real = State.ask_bodies

    def counted(self: State, rels: Iterable[str] | None = None) -> Iterator[tuple[str, bytes]]:
        assert rels is not None  # never every body
        wanted.extend(rels)
        return real(self, rels)

    monkeypatch.setattr(State, "ask_bodies", counted)
    project.schema_path.write_text(project.schema_path.read_text() + "ask:\n  budget: 600\n")
    result, _ = asking(project, "Who was born in the town of Linden?", use_cache=False, stale_ok=True)
    listed = len(list(project.wiki_dir.glob("*.md"))) - 2
    assert result.mode == "selected" and result.context_pages > 0 and 0 < len(set(wanted)) < listed / 2
    assert set(result.pages) <= set(wanted)


def test_the_answer_key_reads_each_page_from_its_head_as_the_page_read_gives_it(project: Project) -> None:
    """What the answer key reads of each page (its slug, title, type, aliases and plain text's
    digest) comes from the heads, the same as from the pages read."""
    edited = project.wiki_dir / "otter.md"
    edited.write_text(edited.read_text().replace("title: ", "aliases: [River otter, 7]\ntitle:   ", 1))
    past(edited)
    pages = load_pages(project.wiki_dir)
    assert any(p.aliases == ["River otter", "7"] for p in pages)
    expected = [[p.slug, p.title, p.type, p.aliases, text_hash(p.plain)] for p in pages]
    first, again = indexed(project), indexed(project)  # the pages read, then from their heads
    assert again.read == 0 and first.keyed(first.pages) == again.keyed(again.pages) == expected


def test_an_answer_asked_before_reads_no_body(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its key is of the heads: the bodies (what ranking needs, most of a record) stay unread."""
    question = "Who was born in the town of Linden?"
    asking(project, question)
    got = indexed(project)
    assert got.read == 0 and got.rows == {}  # read where a corpus is asked for
    bodies: list[int] = []
    real = State.ask_bodies

    def counted(self: State, rels: Iterable[str] | None = None) -> Iterator[tuple[str, bytes]]:
        bodies.append(1)
        return real(self, rels)

    monkeypatch.setattr(State, "ask_bodies", counted)
    stored, backend = asking(project, question)
    assert stored.answer_cached and backend.requests == [] and bodies == []
    fresh, _ = asking(project, question, use_cache=False)
    assert not fresh.answer_cached and bodies and fresh.answer == stored.answer


def test_ask_reads_each_page_once_and_answers_the_same(project: Project) -> None:
    notes: list[str] = []
    question = "Who was born in the town of Linden?"
    first, backend = asking(project, question, use_cache=False)
    again, backend2 = asking(project, question, use_cache=False, on_progress=notes.append)
    assert first.pages_read > 40 and again.pages_read == 0 and notes == []
    assert backend.requests[0].messages == backend2.requests[0].messages
    assert first.to_json()["pages_read"] == first.pages_read


def test_a_first_question_over_many_pages_says_so(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ask_index, "READ_NOTE", 10)
    notes: list[str] = []
    asking(project, "Who was born in the town of Linden?", on_progress=notes.append)
    (note,) = notes
    assert note.startswith("ask: reading ") and "pages new or changed" in note


def test_forgetting_a_source_drops_the_records_of_the_pages_it_changed(project: Project) -> None:
    """The build that forgets a source rewrites or removes every page holding its text: their
    records go, and what is kept after is only what wiki/ holds (each record's page as read)."""
    asking(project, "Who was born in the town of Linden?")
    before = rows(project)
    assert len(before) > 40 and any(b"otter" in head + body for _, _, head, body, _ in before.values())
    assert any("otter" in terms for *_, terms in before.values())
    state = State.open(project.state_path)
    try:  # terms whose record an older wikic dropped alone
        state.db.execute("INSERT INTO ask_terms VALUES ('wiki/gone.md', 'otter 1 0')")
    finally:
        state.close()
    (project.root / "sources" / "otter.md").unlink()
    report, _ = run_build(project)
    assert report.ok, report.errors
    state = State.open(project.state_path)
    try:
        assert not [rel for rel, terms in state.ask_terms() if "otter" in terms]
    finally:
        state.close()
    after = rows(project)
    dropped = before.keys() - after.keys()
    assert "wiki/otter.md" in dropped and len(after) > 40
    for rel, (size, mtime, head, body, terms) in after.items():
        st = (project.root / rel).stat()
        assert (st.st_size, st.st_mtime_ns) == (size, mtime)  # as its page is now
        assert b"otter" not in head + body and "otter" not in terms  # nothing of the forgotten source
    result, _ = asking(project, "How many nests did observers count along the river?")
    listed = {f"wiki/{p.name}" for p in project.wiki_dir.glob("*.md")} - {"wiki/index.md", "wiki/log.md"}
    assert result.pages_read == len(listed - after.keys())  # only the pages the build changed
