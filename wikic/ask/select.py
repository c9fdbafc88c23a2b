"""Choosing what of an over-budget wiki a question is shown: its pages ranked (BM25,
names, links), their sentences ranked within that, a second hop to the pages the
best pages link to (the bridge entities of multi-hop questions), and the packing
of whole sentences into the room, evidence first."""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import overload

from rapidfuzz import fuzz, process

from wikic.ask.passages import Sentence, sentences
from wikic.ask.rank import BM25
from wikic.wiki.page import Page

FUZZY_CUTOFF = 80  # title/alias similarity (0-100) that counts as naming the page
PAGE_WEIGHT = 0.6  # a sentence's score: its own BM25 share plus this much of its page's share
HOP_FROM = 2  # the best pages whose links are followed for the second hop
HOP_PAGES = 4  # bridge pages at most: each one shows its opening and its best sentences
HOP_SENTENCES = 3  # a bridge page is given its first 2 sentences and its best 2 (these may overlap)
# A sentence under this share of the question's best sentence score is not shown, even with room
# left: the budget is a ceiling, not a quota (bench/README: at a 600-token budget 0.3 keeps both
# sets' recall within 0.02 for 25-30 tokens fewer; 0.35 costs hotpotqa recall). Above FLOOR_BUDGET
# the share shrinks in proportion: a larger budget buys the low-scoring sentences where the later
# hops of a multi-hop question lie (a fixed 0.3 cost musique 0.05-0.11 recall at 1,500-6,000).
RELEVANCE_FLOOR = 0.3
FLOOR_BUDGET = 600
HOP_SHARE = 0.15  # of the room, at most, kept for bridge pages (bench/README: 0.35 cost hotpotqa recall)

Counter = Callable[[str], int]


@dataclass
class Ranking:
    """A question's sentences best first, and the bridge pages of its second hop."""

    ranked: Sequence[Sentence]
    bridges: list[Page] = field(default_factory=list)
    bridge_sentences: list[Sentence] = field(default_factory=list)


class _Picked(Sequence[Sentence]):
    """units[i] for each i of `order`, each looked up where asked for: a large wiki's ranking
    holds tens of thousands of sentences, of which packing reads the first few hundred (and
    the corpus of ask/index.py makes a sentence only when it is looked up)."""

    def __init__(self, units: Sequence[Sentence], order: list[int]) -> None:
        self.units, self.order = units, order

    def __len__(self) -> int:
        return len(self.order)

    @overload
    def __getitem__(self, k: int) -> Sentence: ...

    @overload
    def __getitem__(self, k: slice) -> Sequence[Sentence]: ...

    def __getitem__(self, k: int | slice) -> Sentence | Sequence[Sentence]:
        if isinstance(k, slice):
            return [self.units[i] for i in self.order[k]]
        return self.units[self.order[k]]


class Corpus:
    """What ranking needs of a wiki, whatever the question: its pages' ranker and its
    sentences' BM25, with each sentence's page and place in it, and the pages each page
    links to. Built once per wiki and kept for every question asked of it."""

    def __init__(self, pages: list[Page]) -> None:
        cut = [sentences(p) for p in pages]
        units = [s for found in cut for s in found]
        targets = [list(dict.fromkeys(t for s in found for t in s.links if t)) for found in cut]
        orders = [s.order for s in units]
        rankers = PageRanker(pages), BM25([unit_text(s) for s in units])
        self._made(pages, units, orders, [len(found) for found in cut], *rankers)
        self._linked(pages, targets)

    @classmethod
    def of(
        cls,
        pages: list[Page],
        units: Sequence[Sentence],
        orders: list[int],
        counts: list[int],
        targets: list[list[str]],
        page_terms: list[dict[str, int]],
        unit_terms: list[dict[str, int]],
    ) -> Corpus:
        """The corpus of pages already cut and counted (ask/index.py): their sentences in page
        order (made where asked for), each one's place in its page, how many each page has,
        the pages each page links to, and terms() of each page's and each sentence's ranked
        text (page_text, unit_text)."""
        corpus = cls.__new__(cls)
        rankers = PageRanker(pages, page_terms), BM25.of_terms(unit_terms)
        corpus._made(pages, units, orders, counts, *rankers)
        corpus._linked(pages, targets)
        return corpus

    def _made(
        self,
        pages: list[Page],
        units: Sequence[Sentence],
        orders: list[int],
        counts: list[int],
        ranker: PageRanker,
        unit_bm25: BM25,
    ) -> None:
        self.pages, self.units, self.ranker, self.unit_bm25 = pages, units, ranker, unit_bm25
        self.orders = orders  # each sentence's place in its page
        self.slugs = [slug for p, n in zip(pages, counts, strict=True) for slug in repeat(p.slug, n)]
        self.spans: dict[str, range] = {}  # slug -> its sentences' places in `units`
        at = 0
        for page, n in zip(pages, counts, strict=True):
            self.spans[page.slug] = range(at, at + n)
            at += n

    def of_page(self, slug: str) -> list[int]:
        """The places in `units` of a page's sentences, in page order."""
        return list(self.spans.get(slug, ()))

    def _linked(self, pages: list[Page], targets: list[list[str]]) -> None:
        self.links = {p.slug: found for p, found in zip(pages, targets, strict=True)}
        self.inbound = Tally(t for found in targets for t in found)  # pages linking to each page

    def page_links(self, page: Page) -> list[str]:
        """The slugs a page links to from its sentences (not from its Sources, Topics or
        Linked from lists: those name files and pages, not the entities it speaks of)."""
        return list(self.links.get(page.slug, ()))

    def inbound_of(self, slug: str) -> int:
        """How many of the pages link to this one from their sentences."""
        return self.inbound.get(slug, 0)


def page_text(page: Page) -> str:
    """What BM25 ranks a page by: its title (twice), aliases and plain text."""
    return " ".join([page.title, *page.aliases, page.title, page.plain])


def unit_text(s: Sentence) -> str:
    """What BM25 ranks a sentence by: its page's title and aliases, and its text."""
    return " ".join([s.page.title, *s.page.aliases, s.text])


def page_scores(question: str, pages: list[Page], corpus: Corpus | None = None) -> list[float]:
    """BM25 over title, aliases and text, plus a bonus for a page the question names (fuzzily)."""
    if not pages:
        return []
    ranker = corpus.ranker if corpus is not None and corpus.pages is pages else PageRanker(pages)
    return ranker.scores(question)


class PageRanker:
    """page_scores over a fixed list of pages, indexed once: a process that ranks many
    questions against one wiki (`wikic mcp`'s search) pays for the index only once."""

    def __init__(
        self, pages: list[Page], counted: list[dict[str, int]] | None = None, bm25: BM25 | None = None
    ) -> None:
        """`counted`: terms() of each page's page_text, where they are known (ask/index.py);
        `bm25`: their BM25, where it is made otherwise (ask/scan.py)."""
        self.pages = pages
        if bm25 is None:
            bm25 = BM25([page_text(p) for p in pages]) if counted is None else BM25.of_terms(counted)
        self.bm25 = bm25
        self.names: list[str] = []  # casefolded titles and aliases, as `named` compares them
        self.owner: list[int] = []  # the page each name belongs to
        for i, page in enumerate(pages):
            for name in (page.title, *page.aliases):
                if len(name) >= 3:
                    self.names.append(name.casefold())
                    self.owner.append(i)

    def scores(self, question: str) -> list[float]:
        if not self.pages:
            return []
        base = self.bm25.scores(question)
        top = max(base) or 1.0
        for i, similarity in self._named(question).items():
            base[i] += top * similarity / 100
        return base

    def _named(self, question: str) -> dict[int, float]:
        """`named` for every page at once, where it reaches FUZZY_CUTOFF (one batched call)."""
        if not self.names:
            return {}
        found = process.extract(
            question.casefold(), self.names, scorer=fuzz.partial_ratio, score_cutoff=FUZZY_CUTOFF, limit=None
        )
        best: dict[int, float] = {}
        for _, similarity, j in found:
            i = self.owner[j]
            best[i] = max(best.get(i, 0.0), float(similarity))
        return best


def named(question: str, page: Page) -> float:
    """How closely the question names the page (0-100), by its title or an alias."""
    q = question.casefold()
    names = [n for n in (page.title, *page.aliases) if len(n) >= 3]
    return max((fuzz.partial_ratio(n.casefold(), q) for n in names), default=0.0)


def relevance_floor(limit: int) -> float:
    """The share of the best sentence score under which a sentence is not shown, at a limit of
    `limit` prompt tokens."""
    return RELEVANCE_FLOOR * min(1.0, FLOOR_BUDGET / max(limit, 1))


def rank(question: str, pages: list[Page], corpus: Corpus | None = None, floor: float = 0.0) -> Ranking:
    """Every sentence that bears on the question, best first (none under `floor` times the
    best score); the pages linked from the best pages that the question does not name are its
    bridges. `corpus`: the pages' own, when several questions are asked of one wiki."""
    corpus = corpus if corpus is not None and corpus.pages is pages else Corpus(pages)
    scores = page_scores(question, pages, corpus)
    if not pages or max(scores) <= 0:
        return Ranking([])
    top_page = max(scores)
    units = corpus.units
    if not units:
        return Ranking([])
    own = corpus.unit_bm25.scores(question)
    top_own = max(own) or 1.0
    share = {p.slug: scores[i] / top_page for i, p in enumerate(pages)}
    score = [own[i] / top_own + PAGE_WEIGHT * share[slug] for i, slug in enumerate(corpus.slugs)]
    least = max(score) * floor
    # those shown at all, then sorted: of a large wiki's hundreds of thousands of sentences, few
    order = [i for i, x in enumerate(score) if x > 0 and x >= least]
    slugs, orders = corpus.slugs, corpus.orders
    order.sort(key=lambda i: (-score[i], slugs[i], orders[i]))
    ranked = _Picked(units, order)
    bridges = _bridges(question, corpus, scores)
    hop = []
    for page in bridges:
        idx = corpus.of_page(page.slug)
        best = sorted(idx, key=lambda i: (-own[i], orders[i]))
        opening = idx[: HOP_SENTENCES - 1]  # a page opens with what defines the entity
        hop += [units[i] for i in dict.fromkeys(opening + best[: HOP_SENTENCES - 1])]
    return Ranking(ranked, bridges, hop)


def _bridges(question: str, corpus: Corpus, scores: list[float]) -> list[Page]:
    """Pages the best pages link to that the question does not name, the most specific first
    (fewest pages link to them; link order among equals): a hub such as "United States" is
    seldom the entity a chain runs through. One of the best pages may be a bridge itself: the
    director's page ranks high because it names the film, yet what the question needs there
    is what it says of the director."""
    pages = corpus.pages
    by_slug = {p.slug: p for p in pages}
    best = sorted((i for i in range(len(pages)) if scores[i] > 0), key=lambda i: -scores[i])[:HOP_FROM]
    seen = {pages[best[0]].slug} if best else set()
    out = []
    for i in best:
        for slug in corpus.page_links(pages[i]):
            page = by_slug.get(slug)
            if page is None or slug in seen or named(question, page) >= FUZZY_CUTOFF:
                continue
            seen.add(slug)
            out.append(page)
    out.sort(key=lambda p: corpus.inbound_of(p.slug))
    return out[:HOP_PAGES]


class Packer:
    """Whole sentences into a room of tokens: each costed by its text, its page's title
    markup when it is the page's first; the caller checks the rendered total."""

    def __init__(self, count: Counter, room: int, header: Callable[[Page], int]) -> None:
        self.count, self.room, self.header = count, room, header
        self.used = 0
        self.chosen: dict[tuple[str, int], Sentence] = {}
        self.pages: set[str] = set()
        self.texts: set[str] = set()  # a source page repeats its topic pages' sentences: show each once
        self._counts: dict[str, int] = {}

    def _count(self, text: str) -> int:
        if text not in self._counts:
            self._counts[text] = self.count(text)
        return self._counts[text]

    def cost(self, s: Sentence) -> int:
        head = 0 if s.page.slug in self.pages else self.header(s.page)
        return self._count(s.text) + 1 + head  # + 1: the space or line break before it

    def add(self, s: Sentence, limit: int | None = None) -> bool:
        if s.key in self.chosen or s.text in self.texts:
            return False
        cost = self.cost(s)
        if self.used + cost > (self.room if limit is None else limit):
            return False
        self.chosen[s.key] = s
        self.texts.add(s.text)
        self.pages.add(s.page.slug)
        self.used += cost
        return True

    def fill(self, candidates: Sequence[Sentence], limit: int | None = None) -> None:
        """In rank order, up to the first sentence that does not fit: a shorter, less relevant
        sentence never takes the room of a better one (as a chunk index stops at the first
        chunk that does not fit); an already shown sentence or text is passed over."""
        for s in candidates:
            fits = self.add(s, limit) or s.key in self.chosen or s.text in self.texts
            if not fits and self.chosen:  # an empty room still takes the closest sentences that fit
                return


def pack(ranking: Ranking, count: Counter, room: int, header: Callable[[Page], int]) -> list[Sentence]:
    """Evidence first: the best sentences, then room for the bridge pages (at most HOP_SHARE),
    then the rest of the ranking; `header`: the tokens a page's title markup adds. Returns the
    chosen sentences best first."""
    packer = Packer(count, room, header)
    reserve = int(room * HOP_SHARE) if ranking.bridge_sentences else 0
    packer.fill(ranking.ranked, room - reserve)
    packer.fill(ranking.bridge_sentences)
    packer.fill(ranking.ranked)
    # a bridge page stands right after the best sentence's page, not last: the model reads the
    # chain in order, and small models read the middle of a prompt worst
    rank_of: dict[tuple[str, int], float] = {s.key: 0.5 for s in ranking.bridge_sentences}
    wanted = packer.chosen.keys() - rank_of.keys()  # each from the ranking: found near its top
    for i, s in enumerate(ranking.ranked):
        if not wanted:
            break
        if (key := s.key) in wanted:
            rank_of[key] = i
            wanted.discard(key)
    return sorted(packer.chosen.values(), key=lambda s: rank_of.get(s.key, 0.5))


def group(chosen: list[Sentence]) -> list[tuple[Page, str]]:
    """The chosen sentences by page (best page first), in page order within it; a new
    line where a paragraph or list item ends."""
    pages: dict[str, list[Sentence]] = {}
    for s in chosen:
        pages.setdefault(s.page.slug, []).append(s)
    out = []
    for items in pages.values():
        items.sort(key=lambda s: s.order)
        text, last = "", None
        for s in items:
            if last is not None:
                text += " " if s.block == last else "\n"
            text += s.text
            last = s.block
        out.append((items[0].page, text))
    return out
