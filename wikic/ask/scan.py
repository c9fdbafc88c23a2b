"""One question ranked over a large wiki without every page's record decoded: its words found in
each page's terms (ask/terms.py, a str.find per word and page), BM25's totals from the
records' heads, and the bodies read of the pages whose sentences it shows alone. It ranks as
the corpus of every page read does (select.Corpus), to the bit (tests/test_ask_index.py):
the same documents counted, the same weights, added in the same order."""

from __future__ import annotations

import json
from collections import Counter as Tally
from functools import cached_property
from typing import TYPE_CHECKING

from wikic.ask.rank import BM25, words
from wikic.ask.select import Corpus, PageRanker
from wikic.ask.terms import lengths, line_of, targets_line
from wikic.wiki.page import Page

if TYPE_CHECKING:
    from wikic.ask.index import Indexed


class _Found:
    """What a question's words are in, page by page (each page's place in the pages ranked)."""

    def __init__(self, asked: list[str]) -> None:
        self.asked = asked
        self.pages: dict[int, dict[str, int]] = {}  # page -> its count of each word asked
        self.units: dict[int, list[tuple[int, str, int]]] = {}  # page -> (sentence, word, count)
        self.lengths: dict[int, list[int]] = {}  # page -> its sentences' words, where one is hit
        self.links: dict[int, str] = {}  # page -> the pages it links to (JSON), where it links

    def take(self, at: int, text: str) -> bool:
        """One page's terms; False (and nothing taken) where they are not as terms_text makes them."""
        try:
            counts: dict[str, int] = {}
            hits: list[tuple[int, str, int]] = []
            for word in self.asked:
                found = line_of(text, word)
                if found is not None:
                    if found[0]:
                        counts[word] = found[0]
                    hits += [(place, word, n) for place, n in found[1]]
            links = targets_line(text)
            sized = lengths(text) if hits else []
            if any(place >= len(sized) for place, _, _ in hits):
                return False
        except (ValueError, IndexError):
            return False
        if counts:
            self.pages[at] = counts
        if hits:
            self.units[at], self.lengths[at] = hits, sized
        if links != "[]":
            self.links[at] = links
        return True


class Scanned(Corpus):
    """A corpus for one question: the pages' sentences made where shown, the links of the pages
    asked for, how many pages link to each counted when first asked for."""

    def __init__(self, indexed: Indexed, pages: list[Page], question: str) -> None:
        found = _Found(list(dict.fromkeys(words(question))))
        where = {p.rel: i for i, p in enumerate(pages)}
        taken = {rel for rel, text in indexed.terms_of(pages) if found.take(where[rel], text)}
        again = [p for p in pages if p.rel not in taken]  # none kept, or not as made: read again
        indexed.read_again(again)
        for page in again:
            if not found.take(where[page.rel], indexed.texts[page.rel]):
                raise RuntimeError(f"{page.rel}: its terms as made cannot be read back")
        self._links = {pages[at].slug: line for at, line in found.links.items()}
        sizes = [indexed.sizes[p.rel] for p in pages]
        counts = [s.units for s in sizes]
        starts = [0] * len(pages)
        total = 0
        for at, n in enumerate(counts):
            starts[at] = total
            total += n
        page_df = Tally(word for counted in found.pages.values() for word in counted)
        page_bm25 = BM25.of_hits(
            len(pages),
            sum(s.words for s in sizes),
            found.pages,
            {at: sizes[at].words for at in found.pages},
            {word: page_df[word] for word in found.asked},
        )
        unit_hits: dict[int, dict[str, int]] = {}
        unit_lengths: dict[int, int] = {}
        for at, hits in found.units.items():
            for place, word, n in hits:
                unit = starts[at] + place
                unit_hits.setdefault(unit, {})[word] = n
                unit_lengths[unit] = found.lengths[at][place]
        unit_df = Tally(word for counted in unit_hits.values() for word in counted)
        unit_bm25 = BM25.of_hits(
            total,
            sum(s.unit_words for s in sizes),
            unit_hits,
            unit_lengths,
            {word: unit_df[word] for word in found.asked},
        )
        orders = [place for n in counts for place in range(n)]
        self._made(pages, indexed.units(pages), orders, counts, PageRanker(pages, bm25=page_bm25), unit_bm25)

    def page_links(self, page: Page) -> list[str]:
        line = self._links.get(page.slug)
        return [] if line is None else list(json.loads(line))

    def inbound_of(self, slug: str) -> int:
        return self._inbound.get(slug, 0)

    @cached_property
    def _inbound(self) -> Tally[str]:
        """Pages linking to each page: every page's links, read in one JSON text."""
        lists = [line[1:-1] for line in self._links.values()]
        return Tally(json.loads("[" + ",".join(lists) + "]"))


def scanned(indexed: Indexed, pages: list[Page], question: str) -> Corpus:
    return Scanned(indexed, pages, question)
