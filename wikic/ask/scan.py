"""One question ranked over a large wiki without every page's record decoded: its words found in
each page's terms (ask/terms.py, a str.find per word and page), BM25's totals from the
records' heads, and the bodies read of the pages whose sentences it shows alone. It ranks as
the corpus of every page read does (select.Corpus), to the bit (tests/test_ask_index.py):
the same documents counted, the same weights, added in the same order."""

from __future__ import annotations

import json
from collections import Counter as Tally
from functools import cached_property
from itertools import accumulate
from typing import TYPE_CHECKING

from wikic.ask.rank import BM25, words
from wikic.ask.select import Corpus, PageRanker
from wikic.ask.terms import lengths, word_line
from wikic.wiki.page import Page

if TYPE_CHECKING:
    from wikic.ask.index import Indexed, Sizes


class _Found:
    """What a question's words are in, page by page (each page's place in the pages ranked)."""

    def __init__(self, asked: list[str], units: list[int]) -> None:
        self.asked, self.units_of = asked, units  # each page's sentences, as its head says
        self.needles = [(word, f"\n{word} ") for word in asked]
        self.pages: dict[int, dict[str, int]] = {}  # page -> its count of each word asked
        self.units: dict[int, list[tuple[str, list[int], list[int]]]] = {}  # page -> (word, places, counts)
        self.lengths: dict[int, list[int]] = {}  # page -> its sentences' words, where one is hit
        self.links: dict[int, str] = {}  # page -> the pages it links to (JSON), where it links

    def take(self, at: int, text: str, links: str) -> bool:
        """One page's terms; False (and nothing taken) where they are not as terms_text makes them."""
        counts: dict[str, int] = {}
        hits: list[tuple[str, list[int], list[int]]] = []
        try:
            for word, needle in self.needles:
                found = text.find(needle)
                if found >= 0:
                    count, places, each = word_line(text, found, word)
                    if count:
                        counts[word] = count
                    if places:
                        hits.append((word, places, each))
            if hits:
                sized = lengths(text)
                if len(sized) != self.units_of[at]:
                    return False
                if any(len(places) != len(each) or max(places) >= len(sized) for _, places, each in hits):
                    return False
                self.units[at], self.lengths[at] = hits, sized
        except (ValueError, IndexError):
            return False
        if counts:
            self.pages[at] = counts
        if links != "[]":
            self.links[at] = links
        return True


class Scanned(Corpus):
    """A corpus for one question: the pages' sentences made where shown, the links of the pages
    asked for, how many pages link to each counted when first asked for."""

    def __init__(self, indexed: Indexed, pages: list[Page], question: str) -> None:
        sizes = [indexed.sizes[p.rel] for p in pages]
        counts = [s.units for s in sizes]
        found = _Found(list(dict.fromkeys(words(question))), counts)
        where = {p.rel: i for i, p in enumerate(pages)}
        taken = set()
        for rel, text, links in indexed.terms_of():  # every page's (those not ranked passed over)
            at = where.get(rel)
            if at is not None and found.take(at, text, links):
                taken.add(rel)
        again = [p for p in pages if p.rel not in taken]  # none kept, or not as made: read again
        indexed.read_again(again)
        for rel, text, links in indexed.terms_of(again):
            if found.take(where[rel], text, links):
                taken.add(rel)
        if len(taken) < len(pages):
            raise RuntimeError(f"{len(pages) - len(taken)} pages' terms as made cannot be read back")
        self._links = {pages[at].slug: line for at, line in found.links.items()}
        starts = list(accumulate(counts, initial=0))  # each page's first sentence's place
        ranker = PageRanker(pages, bm25=_pages_bm25(found, sizes))
        unit_bm25 = _sentences_bm25(found, sizes, starts)
        orders = [place for n in counts for place in range(n)]
        self._made(pages, indexed.units(pages), orders, counts, ranker, unit_bm25)

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


def _pages_bm25(found: _Found, sizes: list[Sizes]) -> BM25:
    """The pages' BM25 (of their page_text) for the words asked."""
    postings: dict[str, list[int]] = {word: [] for word in found.asked}
    counts: dict[str, list[int]] = {word: [] for word in found.asked}
    for at in sorted(found.pages):  # in page order
        for word, n in found.pages[at].items():
            postings[word].append(at)
            counts[word].append(n)
    lengths = {at: sizes[at].words for at in found.pages}
    return BM25.of_hits(len(sizes), sum(s.words for s in sizes), lengths, postings, counts)


def _sentences_bm25(found: _Found, sizes: list[Sizes], starts: list[int]) -> BM25:
    """The sentences' BM25 (of their unit_text) for the words asked; `starts`: each page's first
    sentence's place among all."""
    postings: dict[str, list[int]] = {word: [] for word in found.asked}
    counts: dict[str, list[int]] = {word: [] for word in found.asked}
    lengths: dict[int, int] = {}
    for at in sorted(found.units):  # in page order: each word's sentences in order
        start, sized = starts[at], found.lengths[at]
        for word, places, each in found.units[at]:
            postings[word] += [start + place for place in places]
            counts[word] += each
            for place in places:
                lengths[start + place] = sized[place]
    return BM25.of_hits(starts[-1], sum(s.unit_words for s in sizes), lengths, postings, counts)
