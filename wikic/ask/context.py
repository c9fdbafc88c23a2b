"""What `ask` shows the model: the wiki's pages read from disk (page.Page, their
plain text), the byte-stable prefix (instructions, index.md, then every page in a fixed order), and, when the
wiki is over the token budget, the pages most relevant to the question after it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rapidfuzz import fuzz

from wikic.ask.rank import BM25
from wikic.errors import UsageError
from wikic.prompts.loader import Prompts
from wikic.wiki.page import COMMENT, Page, parse_links, plain_links, split_page

BOOKKEEPING = {"index", "log"}
INDEX_SHARE = 0.4  # of the prompt budget, at most, for the instructions and index.md when pages are chosen
TYPE_ORDER = {"source": 1, "answer": 2}  # topic pages first, then sources, then answers
FUZZY_CUTOFF = 80  # title/alias similarity (0-100) that counts as naming the page
NEIGHBOUR_WEIGHT = 0.5  # a page linked to or from a relevant page inherits this share of its score
MIN_SHARE = 0.3  # pages scoring below this share of the best page are noise, not worth their tokens
PAGE_MARGIN = 2  # tokens: a page costed alone may tokenise a little differently beside others

Counter = Callable[[str], int]


def load_pages(wiki_dir: Path) -> list[Page]:
    """Every page in wiki/ (not index.md or log.md), in the prefix's fixed order."""
    pages = []
    for path in sorted(wiki_dir.glob("*.md")):
        if path.stem in BOOKKEEPING:
            continue
        try:
            pages.append(split_page(path.read_text(encoding="utf-8"), f"wiki/{path.name}"))
        except (OSError, UnicodeDecodeError):
            continue  # unreadable pages are lint's business, not a reason to refuse answering
    return sorted(pages, key=lambda p: (TYPE_ORDER.get(p.type, 0), p.slug))


def read_index(wiki_dir: Path) -> str:
    return plain_links(COMMENT.sub("", (wiki_dir / "index.md").read_text(encoding="utf-8"))).strip()


@dataclass
class Context:
    """The two messages of one question: `system` is the cached prefix."""

    system: str
    user: str
    in_prefix: list[Page]
    selected: list[Page]  # over budget: pages chosen for this question, in `user`
    mode: str = "whole"  # the whole wiki in the prefix, or "selected": index.md there, chosen pages after

    @property
    def pages(self) -> list[Page]:
        return self.in_prefix + self.selected


def template_page(page: Page) -> dict[str, str]:
    """A page as ask's templates (and a project's own prompts/ask.*.j2) see it: `page.title`
    and `page.text`, its plain text."""
    return {"title": page.title, "text": page.plain}


@dataclass
class AskWiki:
    """The built wiki as ask shows it: the templates, the wiki's title and scope, index.md, the pages."""

    prompts: Prompts
    title: str
    scope: str
    index: str
    pages: list[Page]


class ContextBuilder:
    """Renders ask's templates and fits them into a token budget."""

    def __init__(self, wiki: AskWiki, count: Counter, limit: int) -> None:
        self.prompts, self.title, self.scope = wiki.prompts, wiki.title, wiki.scope
        self.index, self.pages, self.count, self.limit = wiki.index, wiki.pages, count, limit

    def render(
        self, question: str, prefix_pages: list[Page], extra: list[Page], index: str | None = None
    ) -> tuple[str, str]:
        system, user = self.prompts.render(
            "ask",
            title=self.title,
            scope=self.scope,
            index=self.index if index is None else index,
            pages=[template_page(p) for p in prefix_pages],
            extra_pages=[template_page(p) for p in extra],
            question=question,
        )
        return system["content"], user["content"]

    def build(self, question: str) -> Context:
        """The whole wiki in the prefix when it fits; else index.md there and chosen pages after."""
        system, user = self.render(question, self.pages, [])
        if self.count(system) + self.count(user) <= self.limit:
            return Context(system, user, list(self.pages), [])
        system, index = self._index_prefix(question)
        room = self.limit - self.count(system)
        chosen = self._fit(question, rank_pages(question, self.pages), room, index)
        user = self.render(question, [], chosen, index)[1]
        need = self.count(system) + self.count(user)
        if need > self.limit:
            raise UsageError(
                f"the question with the wiki's instructions and index takes {need} tokens, more than the "
                f"{self.limit} that ask.budget and the model's context allow; shorten the question "
                "or raise ask.budget (and model.context) in schema.yaml"
            )
        return Context(system, user, [], chosen, "selected")

    def _index_prefix(self, question: str) -> tuple[str, str]:
        """The instructions and index.md, cut from the end to at most INDEX_SHARE of the budget:
        the pages chosen for the question need room after it. The cut does not depend on the
        question, so the prefix stays byte-stable (and cached) across questions."""
        index = self.index
        titles_only = "\n".join(line.split(" — ", 1)[0] for line in index.splitlines())
        while True:
            system, _ = self.render(question, [], [], index)
            if self.count(system) <= self.limit * INDEX_SHARE or "\n" not in index:
                return system, index
            if index != titles_only and len(titles_only) < len(index):
                index = titles_only  # first drop the descriptions, keeping every title
                continue
            lines = index.splitlines()
            index = "\n".join(lines[: max(1, len(lines) * 3 // 4)])

    def _fit(self, question: str, ranked: list[Page], room: int, index: str) -> list[Page]:
        """Greedy by rank, costing each page alone; the final message is counted whole to be sure."""
        empty = self.count(self.render(question, [], [], index)[1])
        used, chosen = empty, []
        for page in ranked:
            cost = self.count(self.render(question, [], [page], index)[1]) - empty + PAGE_MARGIN
            if used + cost <= room:
                chosen.append(page)
                used += cost
        while chosen and self.count(self.render(question, [], chosen, index)[1]) > room:
            chosen.pop()
        return chosen


def rank_pages(question: str, pages: list[Page]) -> list[Page]:
    """Pages that bear on the question, best first: BM25 over title, aliases and text,
    a bonus for a page the question names (fuzzily), and a share for linked neighbours.
    Pages far below the best are left out even when the budget has room: every one
    of them is paid for again by each question (they follow the cached prefix)."""
    if not pages:
        return []
    docs = [" ".join([p.title, *p.aliases, p.title, p.plain]) for p in pages]
    base = BM25(docs).scores(question)
    top = max(base) or 1.0
    q = question.casefold()
    for i, page in enumerate(pages):
        names = [n for n in (page.title, *page.aliases) if len(n) >= 3]
        similarity = max((fuzz.partial_ratio(n.casefold(), q) for n in names), default=0.0)
        if similarity >= FUZZY_CUTOFF:
            base[i] += top * similarity / 100
    scores = list(base)
    by_slug = {p.slug: i for i, p in enumerate(pages)}
    for i, page in enumerate(pages):
        for target in {link.target for link in parse_links(page.body)}:
            j = by_slug.get(target)
            if j is not None and j != i:
                scores[j] = max(scores[j], base[i] * NEIGHBOUR_WEIGHT)
                scores[i] = max(scores[i], base[j] * NEIGHBOUR_WEIGHT)
    best = max(scores)
    order = sorted(range(len(pages)), key=lambda i: (-scores[i], pages[i].slug))
    return [pages[i] for i in order if scores[i] > 0 and scores[i] >= best * MIN_SHARE]
