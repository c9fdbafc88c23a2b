"""The kept names' pages (lint/names.py): Rows, read from the kept columns a page at a time,
and Laid, the pages added and taken out laid over them, each against a plain dict made the
same way; and the names as a full lint keeps them, decoded as they were made."""

from __future__ import annotations

import random
from collections.abc import Mapping

import pytest

from wikic.hashing import FINGERPRINT, digest
from wikic.lint.came import kept_names
from wikic.lint.names import Head, KeptNames, Laid, Named, Names, Rows, names_data, names_key


def _named(rng: random.Random, slug: str) -> Named:
    title = slug.replace("-", " ").title()
    return Named(f"wiki/{slug}.md", title, title if rng.random() < 0.7 else f"{title} ({slug})")


def _same(pages: Mapping[str, Named], model: dict[str, Named], absent: list[str]) -> None:
    assert len(pages) == len(model)
    assert sorted(pages) == sorted(model)
    assert dict(pages.items()) == model
    for slug in model:
        assert slug in pages and pages[slug] == model[slug] and pages.get(slug) == model[slug]
    for slug in absent:
        if slug not in model:
            assert slug not in pages and pages.get(slug) is None


def test_rows_are_the_pages_of_the_columns() -> None:
    rng = random.Random(3)
    model = {f"page-{i}": _named(rng, f"page-{i}") for i in range(50)}
    rows = Rows(Names(model, {}, set()).columns()["pages"])
    _same(rows, model, ["page-50", "Page-1", ""])
    assert 5 not in rows


@pytest.mark.parametrize("cased", [False, True])
def test_pages_laid_over_are_the_pages_added_and_taken_out(cased: bool) -> None:
    """Random additions and removals (a page renamed goes and comes back in one change, a page
    gone comes back in a later one) laid over the rows, one change at a time, as a dict; and
    their slugs casefolded as a dict of them makes it (`cased`: slugs that fold the same)."""
    rng = random.Random(7)
    every = [f"page-{i}" for i in range(60)] + ([f"Page-{i}" for i in range(0, 60, 3)] if cased else [])
    rng.shuffle(every)
    model = {slug: _named(rng, slug) for slug in every[:40] if slug.islower()}  # none fold the same
    pages: Mapping[str, Named] = Rows(Names(dict(model), {}, set()).columns()["pages"])
    for _ in range(60):
        drop = set(rng.sample(sorted(model), min(len(model), rng.randrange(4))))
        add = {slug: _named(rng, slug) for slug in rng.sample(every, rng.randrange(4)) if slug not in model}
        add |= {slug: _named(rng, slug) for slug in drop if rng.random() < 0.3}  # renamed
        pages = Laid.of(pages, add, drop)
        model = {slug: named for slug, named in model.items() if slug not in drop} | add
        _same(pages, model, every)
        assert isinstance(pages, Laid) and isinstance(pages.base, Rows)  # never laid twice over
        _same(Rows(Names(pages, {}, set()).columns()["pages"]), model, every)  # as kept whole
        folded = Names(pages, {}, set())._slugs
        assert dict(folded.items()) == {slug.casefold(): slug for slug in pages}
        assert len(folded) == len({slug.casefold() for slug in pages})
        for key in {slug.casefold() for slug in every}:
            assert folded.get(key) == {slug.casefold(): slug for slug in pages}.get(key)


def test_the_names_kept_decode_as_they_were_made() -> None:
    pages = {
        "ivf-index": Named("wiki/ivf-index.md", "IVF index", "IVF index"),
        "pq": Named("wiki/pq.md", "Product quantization", "PQ (product quantization)"),
        "notes": Named("wiki/sources/notes.md", "Notes", "Notes"),
    }
    heads = [
        Head("ivf-index", "wiki/ivf-index.md", "concept", "IVF index", "IVF index", ("IVF",), False),
        Head("pq", "wiki/pq.md", "concept", "Product quantization", "PQ (product quantization)", (), False),
        Head("notes", "wiki/sources/notes.md", "source", "Notes", "Notes", ("IVF",), False),
    ]
    table = {"ivf index": "ivf-index", "ivf": "ivf-index", "product quantization": "pq", "notes": "notes"}
    blob = kept_names(Names(pages, table, set()), {"ivf index": 1, "ivf": 2}, heads)
    kept = KeptNames(lambda: blob, {"diagram.png"})
    decoded = kept.decoded()
    assert decoded is not None
    names, have = decoded
    assert dict(names.pages.items()) == pages and names.names == table and names.files == {"diagram.png"}
    assert have == {"ivf index", "ivf"} and kept.keyed == {"ivf": 2}
    assert kept.topics == heads[:2] and kept.shared == {"ivf": ["ivf-index", "notes"]}
    assert names.resolve("IVF") == "ivf-index" and names.resolve("PQ") == "pq"
    assert names_data(blob)["names"]["pages"][3] == [None, "PQ (product quantization)", None]
    # the key written before them is their hash: names made otherwise have another
    assert names_key(blob) == digest(blob[FINGERPRINT + 1 :], FINGERPRINT) == kept.key()
    other = kept_names(Names(pages, table, set()), {"ivf index": 1, "ivf": 3}, heads)
    assert names_key(other) != names_key(blob) and KeptNames(lambda: other, set()).key() == names_key(other)


def test_slugs_that_fold_the_same_resolve_as_a_dict_of_them_in_order() -> None:
    """Two kept slugs that fold the same: the later one's, and the other's once it is gone."""
    rng = random.Random(1)
    base = {slug: _named(rng, slug) for slug in ["page-1", "Page-1", "page-2"]}
    rows = Rows(Names(base, {}, set()).columns()["pages"])
    assert Names(rows, {}, set()).resolve("page-1") == "Page-1"
    laid = Laid.of(rows, {}, {"Page-1"})
    assert Names(laid, {}, set()).resolve("PAGE-1") == "page-1"
    assert Names(Laid.of(laid, {}, {"page-1"}), {}, set()).resolve("page-1") is None
