"""The plan patched by an edit (build/replan.py) equals the full plan of the same sources,
edit after edit, with the sources the build trusts by stat given to it unread."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from tests.test_incremental import (
    NOTES,
    NOTES_MODE,
    PINNED,
    PLAN_EDITS,
    PROSE,
    REPEATED,
    _digest,
    _replace,
    _Rows,
)
from wikic.build.keptplan import Kept, RowsOf, Unreadable
from wikic.build.plan import PagePlan, SourceInfo, memo_for, plan
from wikic.build.replan import patched, plan_kept, settings_of
from wikic.config import Schema


class _Project:
    """A plan's state between builds: the planned rows, the kept merge and the kept plan; with
    `sticky`, the slugs of the last plan's pages, which it is given as a build gives them (else
    none)."""

    def __init__(self, schema: Schema, sticky: bool = False) -> None:
        self.schema, self.rows = schema, _Rows()
        self.sticky = sticky
        self.slugs: dict[str, str] = {}  # the last plan's
        self.merge: bytes | None = None
        self.merge_since: bytes | None = None
        self.kept: bytes | None = None
        self.since: bytes | None = None  # the kept plan's entries changed since `kept`
        self.pages: dict[str, bytes] = {}  # the kept pages' rows
        self.last: dict[str, str] = {}
        self.bases = 0  # how many times the kept plan was written whole

    def infos(self, notes: dict[str, str]) -> list[SourceInfo]:
        """As a build gives them: a source unchanged since the last plan settled (unread)."""
        out = []
        for name, text in sorted(notes.items()):
            path, lines = f"sources/{name}", text.split("\n")
            if self.last.get(path) == text:
                out.append(SourceInfo(path, "", None, None, lambda lines=lines: lines))
            else:
                out.append(SourceInfo(path, lines[0].lstrip("# "), lines, _digest(lines)))
        return out

    def plan(self, notes: dict[str, str]) -> tuple[dict[str, PagePlan], bool]:
        """The plan of `notes`, and whether it was patched."""
        infos, slugs = self.infos(notes), self.slugs
        memo = memo_for(self.schema, _Rows(self.rows), None, self.merge, self.merge_since)  # a trial
        kept = Kept.loads(self.kept, settings_of(self.schema), self.since) if self.kept else None
        rows = RowsOf(self.pages)
        try:
            was_patched = (
                kept is not None and patched(infos, self.schema, slugs, memo, kept, rows) is not None
            )
        except Unreadable:
            was_patched = False
        memo = memo_for(self.schema, self.rows, self.rows.save, self.merge, self.merge_since)
        pages, keep = plan_kept(
            self.infos(notes), self.schema, slugs, memo, self.kept, rows, None, self.since
        )
        if self.sticky:
            self.slugs = {pid: page.slug for pid, page in pages.items()}
        self.kept, self.since = (self.kept, keep.since) if keep.since is not None else (keep.blob, None)
        self.bases += keep.since is None
        self.pages = {} if keep.every else {p: r for p, r in self.pages.items() if p not in keep.gone}
        self.pages |= keep.pages
        for path in memo.gone(i.path for i in infos):
            del self.rows[path]
        merged = memo.merge_kept()
        assert merged is not None
        base, self.merge_since = merged
        self.merge = base or self.merge
        self.last = {f"sources/{name}": text for name, text in notes.items()}
        return pages, was_patched


def _full(notes: dict[str, str], schema: Schema, sticky: dict[str, str] | None = None) -> dict[str, PagePlan]:
    infos = []
    for name, text in sorted(notes.items()):
        lines = text.split("\n")
        infos.append(SourceInfo(f"sources/{name}", lines[0].lstrip("# "), lines, _digest(lines)))
    return plan(infos, schema, sticky or {})


EDITS = {
    **PLAN_EDITS,
    # solo.md, unchanged, names Quentin Blake too: a name from structure now, its page fed by both
    "a name a second source now writes": lambda n: {
        **n,
        "rag.md": n["rag.md"] + "\nQuentin Blake drew the diagrams for the retrieval talk.\n",
    },
    # a topic's page is titled as the first source titled so writes it
    "a source titled like a topic added": lambda n: {**n, "b.md": "# Hnsw\n\nA graph, they say.\n"},
    "a source titled like a topic retitled": lambda n: _replace(n, "a.md", "# Faiss", "# Vector library"),
}
FAISS = "# Faiss\n\nA library, they say.\n"
TITLES = {
    "a line's text": ("HNSW", "Faiss"),
    "a source titled like a topic added": ("Hnsw", "Faiss"),
    "a source titled like a topic retitled": ("HNSW", "FAISS"),
}
SOLO = "# Fair\n\nWe met Quentin Blake at the book fair in the spring.\n"


@pytest.mark.parametrize("schema", [PROSE, PINNED, NOTES_MODE], ids=["prose", "pinned", "notes"])
@pytest.mark.parametrize("kind", list(EDITS))
def test_a_plan_patched_by_an_edit_equals_the_full_plan(kind: str, schema: Schema) -> None:
    notes = {
        **NOTES,
        "tools.md": NOTES["tools.md"] + f"\n## HNSW\n\n{REPEATED}\n",
        "solo.md": SOLO,
        "a.md": FAISS,
    }
    project = _Project(schema)
    assert project.plan(notes)[0] == _full(notes, schema)
    for step in range(2):  # an edit, then nothing more
        notes = EDITS[kind](notes) if step == 0 else notes
        pages, was_patched = project.plan(notes)
        assert pages == _full(notes, schema)
        assert was_patched
    if kind == "a name a second source now writes":
        assert "topic:quentin blake" in pages["source:sources/solo.md"].topics
    if kind in TITLES:  # the pages titled by a source's title, as the full plan titles them
        assert (pages["topic:hnsw"].title, pages["topic:faiss"].title) == TITLES[kind]


TOPICS = ["Bazel", "Ninja", "Early cutoff", "Content hashing", "Alice Moreau", "Build graph", "Make", "Shake"]
WORDS = [
    "the",
    "build",
    "ran",
    "slow",
    "fast",
    "graph",
    "tests",
    "cluster",
    "night",
    "notes",
    "cache",
    "hash",
]


def _note(rng: random.Random, n: int) -> str:
    """A note: a title, a lead, and sections named after topics, some sentences naming others."""
    title = rng.choice([*TOPICS, f"Notes {n}", f"Retro {n}"])
    lines = [f"# {title}", "", f"Note {n} on {rng.choice(TOPICS)} and {' '.join(rng.sample(WORDS, 3))}."]
    for _ in range(rng.randint(1, 4)):
        text = " ".join(rng.sample(WORDS, rng.randint(3, 6)))
        if rng.random() < 0.5:
            text = f"{text} with {rng.choice(TOPICS)}"
        lines += ["", f"## {rng.choice(TOPICS)}", "", f"{text[0].upper()}{text[1:]} in note {n}."]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(6))
def test_a_plan_patched_edit_after_edit_equals_the_full_plan(seed: int) -> None:
    """With the sticky slugs given (seeds 4 and 5) and without: a topic's cluster keeps the id
    of its page as the full plan given them names it (_Clusters.named_by)."""
    rng = random.Random(seed)
    schema = PINNED if seed % 2 else PROSE
    notes = {f"n{i:02d}.md": _note(rng, i) for i in range(24)}
    project = _Project(schema, sticky=seed >= 4)
    project.plan(notes)
    patched_count = 0
    for step in range(30):
        slugs = project.slugs
        name = rng.choice(sorted(notes))
        kind = rng.random()
        if kind < 0.7:
            notes[name] = _note(rng, 100 + step)
        elif kind < 0.85:
            notes[f"new{step}.md"] = _note(rng, 200 + step)
        else:
            del notes[name]
        pages, was_patched = project.plan(notes)
        assert pages == _full(notes, schema, slugs), f"step {step}"
        assert _kept_as_loaded(project) == _kept_in_full(notes, schema, slugs), f"step {step}"
        patched_count += was_patched
    assert patched_count >= 20
    assert 1 < project.bases < 15  # kept whole at times, else only what changed since


def _kept_as_loaded(project: _Project) -> list[object]:
    assert project.kept is not None
    kept = Kept.loads(project.kept, settings_of(project.schema), project.since)
    assert kept is not None
    fields = [kept.keys, kept.meta, kept.names, kept.gives, kept.kinds, kept.by_key, kept.structural]
    return [*fields, kept.title_keys, kept.sums]


def _kept_in_full(notes: dict[str, str], schema: Schema, slugs: dict[str, str]) -> list[object]:
    """What the full plan of `notes` keeps (every field but its own token), given these slugs."""
    project = _Project(schema)
    project.slugs = slugs
    project.plan(notes)
    return _kept_as_loaded(project)


def test_a_kept_plan_not_of_the_planned_rows_is_not_patched() -> None:
    """Another wikic planning in between changes the rows and leaves the kept plan: the rows'
    keys tell, and the plan is made in full."""
    project = _Project(PROSE)
    project.plan(NOTES)
    row = project.rows["sources/rag.md"]
    project.rows["sources/rag.md"] = replace(row, key="planned by another wikic")
    memo = memo_for(PROSE, project.rows, project.rows.save, project.merge)
    keys = {path: r.key for path, r in project.rows.items() if r.key}
    rows = RowsOf(project.pages)
    pages, keep = plan_kept(project.infos(NOTES), PROSE, {}, memo, project.kept, rows, lambda: keys)
    assert keep.every and pages == _full(NOTES, PROSE)
    memo = memo_for(PROSE, project.rows, None, project.merge)
    assert not plan_kept(project.infos(NOTES), PROSE, {}, memo, project.kept, rows)[1].every  # unchecked


@pytest.mark.parametrize("row", [b"not a page", b"a\tslug\n" + b"x", "sl\u00e9g\n".encode() + b"x"])
def test_a_kept_page_that_does_not_read_means_the_full_plan(row: bytes) -> None:
    project = _Project(PROSE)
    project.plan(NOTES)
    project.pages["source:sources/rag.md"] = row
    notes = {**NOTES, "rag.md": NOTES["rag.md"].replace("a few hundred tokens", "some tokens")}
    pages, was_patched = project.plan(notes)
    assert not was_patched and pages == _full(notes, PROSE)
    assert project.plan(notes)[1]  # kept anew: the next edit is patched again


@pytest.mark.parametrize("schema", [PROSE, PINNED], ids=["prose", "pinned"])
def test_a_typo_in_the_first_name_given_of_a_topic_keeps_its_page_and_is_patched(schema: Schema) -> None:
    """graphs.md gives the name first (by path): misspelt, it still joins the topic (fuzzy), but
    comes first in its cluster. The cluster keeps its page's id (its title the name most
    given), in the patched plan and in the full plan given the sticky slugs; without them, the
    full plan names it by the typo."""
    section = "\n## {}\nThe index is built in {} tiers.\n"
    notes = {
        **NOTES,
        "graphs.md": NOTES["graphs.md"] + section.format("Hierarchical indexing", "graph"),
        "tools.md": NOTES["tools.md"] + section.format("Hierarchical indexing", "tool"),
        "vectors.md": NOTES["vectors.md"] + section.format("Hierarchical indexing", "vector"),
    }
    project = _Project(schema, sticky=True)
    project.plan(notes)
    for was, now in [
        ("Hierarchical indexing", "Heirarchical indexing"),
        ("Heirarchical indexing", "Hierarchical indexing"),
    ]:
        slugs = project.slugs
        notes = _replace(notes, "graphs.md", f"## {was}", f"## {now}")
        pages, was_patched = project.plan(notes)
        assert was_patched
        assert pages == _full(notes, schema, slugs)
        page = pages["topic:hierarchical indexing"]
        assert (page.title, page.slug) == ("Hierarchical indexing", "hierarchical-indexing")
        assert page.aliases == (["Heirarchical indexing"] if now.startswith("Heir") else [])
    assert "topic:heirarchical indexing" in _full(_replace(notes, "graphs.md", "## Hier", "## Heir"), schema)
