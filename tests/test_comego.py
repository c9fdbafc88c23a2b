"""Pages that come or go in an edit (build/comego.py, build/indexpatch.py): the names, their
fingerprint and index.md brought up to date from those pages alone equal what the linker and
render_index make from every page; the pages whose text can name them are found."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from wikic.build.assemble import PageEntry, render_index
from wikic.build.comego import Came, Entry, came, names_of, patched_entries, touched
from wikic.build.indexpatch import Listed, listed, patched_index
from wikic.build.linker import Linker
from wikic.lint.came import listed_alone
from wikic.lint.names import Named
from wikic.state import Links, Rendered, State
from wikic.state.schema import LINKS_INDEX
from wikic.wiki.page import seal

WORDS = ["Raft", "raft", "Paxos", "log", "Log", "consensus", "Zoë", "ZOË", "ß", "SS", "b-tree", "B tree"]
TYPES = ["source", "concept", "source", "entity"]


def _entries(rng: random.Random, n: int) -> dict[str, Entry]:
    """n pages, many of them sharing names (a title of one the alias of another), some foreign."""
    found: dict[str, Entry] = {}
    while len(found) < n:
        slug = f"p{rng.randrange(10_000):04d}"
        title = " ".join(rng.sample(WORDS, rng.randint(1, 2)))
        aliases = [rng.choice(WORDS) for _ in range(rng.randint(0, 2))]
        found[slug] = (title, rng.choice(TYPES), aliases, "" if rng.random() < 0.1 else f"id:{slug}")
    return found


def _having(entries: dict[str, Entry]) -> Callable[[set[str]], dict[str, Entry]]:
    """State.kept_entries_having over these entries."""
    return lambda names: {slug: e for slug, e in entries.items() if names_of(e) & names}


def _linker(entries: dict[str, Entry]) -> Linker:
    return Linker([PageEntry(slug, e[0], e[1], e[2]) for slug, e in entries.items()])


def _change(rng: random.Random, before: dict[str, Entry]) -> tuple[dict[str, Entry], dict[str, Entry]]:
    gone = {s: e for s, e in before.items() if e[3] and rng.random() < 0.15}
    added = {s: e for s, e in _entries(rng, rng.randint(0, 4)).items() if s not in before and e[3]}
    return added, gone


def test_the_names_and_their_fingerprint_after_pages_come_and_go_are_the_linkers_of_every_page() -> None:
    rng = random.Random(17)
    for _ in range(300):
        before = _entries(rng, rng.randint(1, 30))
        added, gone = _change(rng, before)
        after = {s: e for s, e in {**before, **added}.items() if s not in gone}
        old, new = _linker(before), _linker(after)
        got = came(old.fingerprint(), set(old.heads), old.names, before, added, gone, _having(before))
        assert got.fingerprint == new.fingerprint()
        for name, slug in got.now.items():
            assert new.names.get(name) == slug, name
        assert {k: s for k, s in new.names.items() if old.names.get(k) != s}.items() <= got.changed().items()
        assert got.heads >= new.heads
        # the names as the quick way reads them: the kept ones with the change over them
        entries = patched_entries(before, got)
        assert dict(entries) == after


def test_the_fingerprint_does_not_hang_on_the_order_of_the_names() -> None:
    rng = random.Random(3)
    entries = [PageEntry(slug, e[0], e[1], e[2]) for slug, e in _entries(rng, 40).items()]
    one = Linker(entries)
    other = Linker.made(
        dict(reversed(list(one.names.items()))), dict(reversed(list(one.titles.items()))), one.heads
    )
    assert one.fingerprint() == other.fingerprint()
    assert Linker(entries[1:]).fingerprint() != one.fingerprint()


def test_a_target_matched_by_likeness_resolves_alike_whatever_the_order_of_the_names() -> None:
    entries = [PageEntry("b", "Raft log entries", "concept"), PageEntry("a", "Raft lag entries", "concept")]
    one = Linker(entries)
    other = Linker.made(dict(reversed(list(one.names.items()))), one.titles, one.heads)
    assert one.resolve("raft lug entries") == other.resolve("raft lug entries") == "a"  # as alike: the first


def _titles(entries: dict[str, Entry]) -> Callable[[str], str]:
    return lambda slug: entries[slug][0]


ORDER = ["concept", "entity", "source", "answer"]  # Schema.index_order


def _index(entries: dict[str, Entry], descriptions: dict[str, str], order: list[str] = ORDER) -> str:
    pages = [PageEntry(s, e[0], e[1], e[2], descriptions.get(s, "")) for s, e in entries.items()]
    return seal(render_index("Test wiki", "notes\nfor tests", pages, order))


def _typed(rng: random.Random, entries: dict[str, Entry], types: list[str]) -> dict[str, Entry]:
    return {s: (e[0], rng.choice(types), e[2], e[3]) for s, e in entries.items()}


def test_index_md_patched_for_pages_new_and_gone_is_render_indexs_of_every_page() -> None:
    rng = random.Random(5)
    parts = 0
    for _ in range(400):
        before = _typed(rng, _entries(rng, rng.randint(0, 12)), ORDER)
        added, gone = _change(rng, before)
        added = _typed(rng, added, ORDER)
        after = {s: e for s, e in {**before, **added}.items() if s not in gone}
        said = {s: rng.choice(["", "A page.", "Ends — here"]) for s in {**before, **added}}
        listing = listed(
            ("Test wiki", "notes\nfor tests"),
            {s: (e[1], said[s]) for s, e in added.items()},
            [(s, e[0], e[1], said[s]) for s, e in gone.items()],
            _titles({**before, **added}),
            ORDER,
        )
        old = _index(before, said)
        got = patched_index(old.__str__, _titles(after), {}, {}, listing)
        assert isinstance(got, tuple) and got[0] == _index(after, said)
        # a type's first page come, or its last gone: its part made or taken out
        parts += {e[1] for e in after.values()} != {e[1] for e in before.values()}
    assert parts > 100


def test_index_md_patched_in_one_string_is_what_a_line_at_a_time_makes(monkeypatch) -> None:
    """Pages new, gone and renamed or moved (gone and new under one slug) into parts there already, and
    descriptions changed: found by bisection in the text (Listed.apply), the index is what the
    line-at-a-time patch (_by_lines) makes, and render_index's of every page; the line at a
    time taken only where a part is made or taken out."""
    rng = random.Random(11)
    by_lines = Listed._by_lines
    fell: list[bool] = []
    monkeypatch.setattr(Listed, "_by_lines", lambda self, *a: fell.append(True) or by_lines(self, *a))
    fast = 0
    for _ in range(300):
        before = _typed(rng, _entries(rng, rng.randint(1, 60)), ORDER[:2])
        added, gone = _change(rng, before)
        added = _typed(rng, added, ORDER[:2])
        renamed = {  # a page retitled, or moved (its source's file: the same line listed again)
            s: (e[0] + rng.choice([" II", ""]), e[1], e[2], e[3])
            for s, e in before.items()
            if s not in gone and rng.random() < 0.1
        }
        after = {s: e for s, e in {**before, **added, **renamed}.items() if s not in gone}
        said = {s: rng.choice(["", "A page.", "Ends — here", "a | b"]) for s in {**before, **added}}
        now = {s: (rng.choice(["Said again.", ""]) if rng.random() < 0.2 else d) for s, d in said.items()}
        kept = [s for s in after if s in before and s not in renamed and now[s] != said[s]]
        listing = listed(
            ("Test wiki", "notes\nfor tests"),
            {s: (e[1], now[s]) for s, e in {**added, **renamed}.items()},
            [(s, before[s][0], before[s][1], said[s]) for s in [*gone, *renamed]],
            _titles({**before, **added, **renamed}),
            ORDER,
        )
        previous = {s: Rendered("", "", [], said[s]) for s in kept}
        rendered = {s: Rendered("", "", [], now[s]) for s in kept}
        fell.clear()
        got = patched_index(_index(before, said).__str__, _titles(after), previous, rendered, listing)
        assert isinstance(got, tuple) and got[0] == _index(after, now)
        fast += not fell
        if not fell:  # the same as a line at a time
            index = _index(before, said)
            index = index[: index.rfind("\n<!-- wikic:")]
            assert listing.apply(index) == by_lines(listing, index, [])
    assert fast > 150


def test_a_part_of_a_type_outside_the_schema_is_placed_by_name_or_left_to_the_full_way() -> None:
    """Types the schema does not name (a hand-made page's) come after its own, by name; a part
    new beside one of them whose type the change does not tell: the index made in full."""
    before = {"a": ("Alpha", "concept", [], "id:a"), "r": ("Rice", "recipe", [], "")}
    for kind, made in (("entity", True), ("zine", False), ("recipe", True)):
        new = {"n": ("New", kind, [], "")}
        listing = listed(
            ("Test wiki", "notes\nfor tests"), {"n": (kind, "")}, [], _titles({**before, **new}), ORDER
        )
        got = patched_index(_index(before, {}).__str__, _titles({**before, **new}), {}, {}, listing)
        if made:  # its part there already, or one of the schema's types: before the others
            assert isinstance(got, tuple) and got[0] == _index({**before, **new}, {}), kind
        else:
            assert got is False, kind
    gone = [("r", "Rice", "recipe", "")]
    new = {"z": ("Zed", "zine", [], "")}
    listing = listed(
        ("Test wiki", "notes\nfor tests"), {"z": ("zine", "")}, gone, _titles({**before, **new}), ORDER
    )
    after = {"a": before["a"], **new}
    got = patched_index(_index(before, {}).__str__, _titles(after), {}, {}, listing)
    assert isinstance(got, tuple) and got[0] == _index(
        after, {}
    )  # the recipe part's type: told by its page gone


def test_an_index_not_as_render_index_made_it_is_made_in_full() -> None:
    before = {"a": ("Alpha", "concept", [], "id:a"), "b": ("Beta", "concept", [], "id:b")}
    new = {"c": ("Gamma", "concept", [], "id:c")}
    listing = listed(
        ("Test wiki", "notes\nfor tests"),
        {"c": ("concept", "")},
        [],
        lambda s: {**before, **new}[s][0],
        ORDER,
    )
    text = _index(before, {})
    edited = seal(text[: text.rfind("\n<!--")].replace("- [[b|Beta]]", "- [[b|Beta]]\nmy line"))
    assert patched_index(lambda: edited, lambda s: "", {}, {}, listing) is False
    assert patched_index(lambda: text + "x", lambda s: "", {}, {}, listing) is False  # its seal broken
    assert isinstance(patched_index(lambda: text, lambda s: "", {}, {}, listing), tuple)
    # a page gone whose line is not as the index lists it (another description): not taken out
    titles = {**before, **new}
    for said in ("Not what it says", ""):
        gone = [("a", "Alpha", "concept", said)]
        wrong = listed(("Test wiki", "notes\nfor tests"), {}, gone, lambda s: titles[s][0], ORDER)
        assert (
            patched_index(lambda: _index(before, {"a": "It says this."}), lambda s: "", {}, {}, wrong)
            is False
        )


def _state(tmp_path: Path, texts: dict[str, str], links: dict[str, list[str]]) -> State:
    state = State.open(tmp_path / "state.db")
    state.set_assembled({}, [], "", Links(True, links, [], texts=texts.items()))
    return state


def _came(added: dict[str, Entry], gone: dict[str, Entry], before: dict[str, Entry]) -> Came:
    old = _linker(before)
    return came(old.fingerprint(), set(old.heads), old.names, before, added, gone, _having(before))


def test_the_pages_a_change_touches_are_those_whose_text_names_it_or_links_to_what_it_moved(
    tmp_path: Path,
) -> None:
    before: dict[str, Entry] = {
        "raft": ("Raft", "concept", [], "id:raft"),
        "paxos": ("Paxos", "concept", [], "id:paxos"),
        "notes": ("Notes", "source", [], "id:notes"),
        "other": ("Other", "source", [], "id:other"),
        "like": ("Like", "source", [], "id:like"),
        "linking": ("Linking", "source", [], "id:linking"),
    }
    texts = {
        "notes": "raft and multi-paxos agree on a log.",  # names "Multi-Paxos" (casefolded)
        "other": "nothing of the kind.",
        "like": "see [[multi paxos]] for more.",  # a target like the new name (ratio 91)
        "linking": "raft again.",
    }
    with _state(tmp_path, texts, {"linking": ["paxos"]}) as state:
        new = {"multi-paxos": ("Multi-Paxos", "concept", [], "id:multi")}
        assert touched(state, _came(new, {}, before)) == {"notes", "like"}
        gone = {"paxos": before["paxos"]}
        assert touched(state, _came({}, gone, before)) == {"notes", "like", "linking"}  # by text, or a link
        unrelated = {"zab": ("Zab", "concept", [], "id:zab")}
        assert touched(state, _came(unrelated, {}, before)) == set()


def test_a_page_renamed_under_its_slug_touches_the_pages_linking_to_it_only_where_its_title_changed(
    tmp_path: Path,
) -> None:
    """A topic page that takes an alias (among the pages gone and new, under one slug): the
    pages whose text names the alias are touched, not those linking to it or naming its slug
    (they find it as before); where its title changed, those linking to it show it anew."""
    before: dict[str, Entry] = {
        "raft": ("Raft", "concept", [], "id:raft"),
        "notes": ("Notes", "source", [], "id:notes"),
        "linking": ("Linking", "source", [], "id:linking"),
        "slugged": ("Slugged", "source", [], "id:slugged"),
    }
    texts = {
        "notes": "the raft consensus protocol.",  # names the alias
        "linking": "raft again.",  # links to it by its title
        "slugged": "see [[raft]].",  # by its slug
    }
    links = {"linking": ["raft"], "slugged": ["raft"]}
    with _state(tmp_path, texts, links) as state:
        aliased = {"raft": ("Raft", "concept", ["Raft consensus"], "id:raft")}
        assert touched(state, _came(aliased, {"raft": before["raft"]}, before)) == {"notes"}
        retitled = {"raft": ("Raft consensus", "concept", [], "id:raft")}
        touching = touched(state, _came(retitled, {"raft": before["raft"]}, before))
        assert touching == {"notes", "linking", "slugged"}
    # the alias let go: of the pages linking to it, those with a [[target]] like the alias
    # (which may resolve elsewhere now) are touched too
    before["raft"] = aliased["raft"]
    texts["fuzzy"], links["fuzzy"] = "see [[raft-consensus]].", ["raft"]
    with _state(tmp_path / "next", texts, links) as state:
        let_go = {"raft": ("Raft", "concept", [], "id:raft")}
        assert touched(state, _came(let_go, {"raft": before["raft"]}, before)) == {"notes", "fuzzy"}


def test_an_index_that_only_listed_the_pages_added_is_checked_on_their_lines_alone() -> None:
    """lint/came.listed_alone: True only where index.md has no finding, given it had none."""
    pages = {
        "a": Named("wiki/a.md", "Alpha", "Alpha"),
        "b": Named("wiki/b.md", "Beta", "Beta"),
        "new": Named("wiki/new.md", "New one", "New one"),
    }
    good = (
        "# Test wiki\n\n3 pages.\n\n## Concepts\n\n- [[a|Alpha]]\n- [[new|New one]] — A page.\n- [[b|Beta]]\n"
    )
    assert listed_alone(good, pages, ["new"])
    bad = {
        "its title otherwise": good.replace("[[new|New one]]", "[[new|New]]"),
        "not listed": good.replace("- [[new|New one]] — A page.\n", ""),
        "listed twice": good + "- [[new|New one]]\n",
        "a link more": good.replace("- [[a|Alpha]]", "- [[a|Alpha]] — see [[b]]"),
        "a description not plain": good.replace("A page.", "A `page`."),
        "the count wrong": good.replace("3 pages.", "2 pages."),
        "a count before the count": good.replace("# Test wiki", "# 5 pages."),
    }
    for what, text in bad.items():
        assert not listed_alone(text, pages, ["new"]), what
    # pages gone: none of them linked, however the count of links stands
    left = {slug: named for slug, named in pages.items() if slug != "b"}
    without = good.replace("3 pages.", "2 pages.").replace("- [[b|Beta]]\n", "")
    assert listed_alone(without, left, [], ["b"])
    another_gone = without.replace("[[a|Alpha]]", "[[b|Beta]]")
    assert not listed_alone(another_gone, left, [], ["b"]), "another's line gone"


def test_the_entries_having_names_are_those_whose_names_hold_them(tmp_path: Path) -> None:
    """State.kept_entries_having: the entries whose title or an alias, casefolded and
    stripped, is one of the names asked for, as comego.names_of reads them; every other one
    left undecoded."""
    rng = random.Random(7)
    entries = _entries(rng, 200)
    entries["pad"] = (" Raft ", "concept", [], "id:pad")
    entries["fold"] = ("Straße", "source", ["ZOË"], "id:fold")
    with State.open(tmp_path / "state.db") as state:
        state.set_assembled({}, [], "", Links(True, {}, [], names=b"", entries=entries))
        for asked in [{"raft"}, {"strasse", "zoë"}, {"b tree", "log"}, {"nothing"}, set(WORDS)]:
            names = {n.casefold().strip() for n in asked}
            expected = {slug: e for slug, e in entries.items() if names_of(e) & names}
            assert state.kept_entries_having(names) == expected, asked


def test_every_pages_links_written_anew_are_read_back_by_either_end_with_their_index(tmp_path: Path) -> None:
    """An assembly that writes every page's links makes the table anew, its index by page
    dropped while it writes (state/incremental.py): the links read back from either end, the
    index there after, and an edit's links written over them as before."""
    links = {"a": ["b", "c"], "b": ["a"], "c": ["a", "b"]}
    with State.open(tmp_path / "state.db") as state:
        for _ in range(2):  # into an empty table, then over a full one
            state.set_assembled({}, [], "", Links(True, links, []))
            assert state.links_of(["a", "b", "c", "d"]) == {k: set(v) for k, v in links.items()} | {
                "d": set()
            }
            assert state.linked_from(["a"]) == {"a": {"b", "c"}}
            indexes = {row[1] for row in state.db.execute("PRAGMA index_list(assembled_links)")}
            assert LINKS_INDEX in indexes
            plan = " ".join(
                str(r)
                for r in state.db.execute(
                    "EXPLAIN QUERY PLAN SELECT target FROM assembled_links WHERE slug = 'a'"
                )
            )
            assert f"COVERING INDEX {LINKS_INDEX}" in plan
        state.set_assembled({}, ["c"], "", Links(False, {"a": ["b"]}, ["c"]))
        assert state.links_of(["a", "b", "c"]) == {"a": {"b"}, "b": {"a"}, "c": set()}
        state.db.execute("CREATE INDEX assembled_links_slug ON assembled_links (slug)")  # an older wikic's
    with State.open(
        tmp_path / "state.db"
    ) as state:  # opened again: the older index gone for the covering one
        indexes = {row[1] for row in state.db.execute("PRAGMA index_list(assembled_links)")}
        assert LINKS_INDEX in indexes and "assembled_links_slug" not in indexes
