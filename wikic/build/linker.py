"""Page names to slugs: the wiki's pages as entries, resolving a [[Name]] against their
titles and aliases (exact, then fuzzy), and linking the first mention of each in text."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Container, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from wikic.wiki.page import WIKILINK
from wikic.wiki.read import name_table

WORD = re.compile(r"\w+")
MAX_NGRAM = 6
LIKE = 90  # the rapidfuzz ratio from which a [[target]] resolves to the name most like it
SUM_BITS = 128  # of the names' fingerprint (names_sum)


def names_sum(names: Iterable[tuple[str, str]], titles: Iterable[tuple[str, str]]) -> int:
    """The names' fingerprint as a number: the sum of a hash of each name (name -> slug) and
    each title (slug -> title), so that an edit whose pages come or go brings it up to date
    from theirs alone (comego.py), not from the wiki's every name. Its value does not hang on
    the order the names come in."""
    total = 0
    for tag, items in ((b"n", names), (b"t", titles)):
        for key, value in items:
            total += _item(tag, key, value)
    return total % (1 << SUM_BITS)


def _item(tag: bytes, key: str, value: str) -> int:
    data = b"%s%d:%s%s" % (
        tag,
        len(key),
        key.encode("utf-8", "surrogatepass"),
        value.encode("utf-8", "surrogatepass"),
    )
    return int.from_bytes(hashlib.blake2b(data, digest_size=SUM_BITS // 8).digest(), "big")


def sum_hex(total: int) -> str:
    return f"{total % (1 << SUM_BITS):0{SUM_BITS // 4}x}"


def moved_sum(
    fingerprint: str, gone: Iterable[tuple[bytes, str, str]], new: Iterable[tuple[bytes, str, str]]
) -> str:
    """`fingerprint` (sum_hex of names_sum) with the items `gone` taken out and `new` put in,
    each (b"n", name, slug) or (b"t", slug, title)."""
    total = int(fingerprint, 16)
    total -= sum(_item(*item) for item in gone)
    total += sum(_item(*item) for item in new)
    return sum_hex(total)


@dataclass
class PageEntry:
    """Any page the wiki holds: planned by the build, or foreign (answers, hand-made)."""

    slug: str
    title: str
    type: str
    aliases: list[str] = field(default_factory=list)
    description: str = ""
    links: set[str] = field(default_factory=set)  # slugs this page links to


Named = tuple[str, str, str, list[str]]  # a page's slug, title, type and aliases


def _named(pages: list[Named]) -> tuple[dict[str, str], dict[str, str]]:
    """Each folded title and alias's page (topic pages win over source pages of the same title,
    then earlier slugs: wiki.read.name_table, lint's rule too), and each page's title."""
    names = name_table((slug, kind, title, aliases) for slug, title, kind, aliases in pages)
    return names, {slug: title for slug, title, _, _ in pages}


class Linker:
    """Page titles and aliases to slugs: exact (case-insensitive), then fuzzy."""

    def __init__(self, entries: list[PageEntry]) -> None:
        self._set(*_named([(e.slug, e.title, e.type, e.aliases) for e in entries]))

    @classmethod
    def of_pages(cls, pages: list[Named]) -> Linker:
        """The linker of these pages, each as its slug, title, type and aliases (no PageEntry
        made: ask resolves an answer's names over 100,000 pages)."""
        linker = cls.__new__(cls)
        linker._set(*_named(pages))
        return linker

    @classmethod
    def made(cls, names: Mapping[str, str], titles: Mapping[str, str], heads: set[str]) -> Linker:
        """The linker whose `names`, `titles` and `heads` these are (as an earlier one had
        them: build/quick.py reads them from state.db as they are asked for)."""
        linker = cls.__new__(cls)
        linker._set(names, titles, heads)
        return linker

    def _set(
        self, names: Mapping[str, str], titles: Mapping[str, str], heads: set[str] | None = None
    ) -> None:
        self.names = names
        self.titles = titles
        self._keys: list[str] | None = None  # every name, for fuzzy matches: listed when first needed
        # the first three characters of every name a mention can be (three or more long): most
        # words start none, and are passed over without trying their six phrases
        self.heads = heads if heads is not None else {key[:3] for key in names if len(key) >= 3}

    def fingerprint(self) -> str:
        """Every name and title: what resolving and autolinking read (names_sum)."""
        return sum_hex(names_sum(self.names.items(), self.titles.items()))

    def resolve(self, name: str) -> str | None:
        key = name.casefold().strip()
        if key in self.names:
            return self.names[key]
        if key in (slug.casefold() for slug in self.titles):
            return key
        if self._keys is None:
            self._keys = list(self.names)
        found = process.extract(key, self._keys, scorer=fuzz.ratio, score_cutoff=LIKE, limit=None)
        if not found:
            return None
        # the most alike, and of those the first name in order: the same whatever order the
        # names come in (a full assembly's, or state.db's after an edit whose pages came)
        best = max(score for _, score, _ in found)
        return self.names[min(name for name, score, _ in found if score == best)]

    def prefetch(self, texts: Iterable[str]) -> None:
        """Every phrase autolink may look up in these texts read at once, where the names are
        read from state.db as asked for (lookups.Rows, an edit's assembly): one query for a
        page's thousands of phrases, not one each (a phrase not among them is still asked)."""
        load = getattr(self.names, "load", None)
        if load is not None:
            load({phrase for text in texts for phrase in self._phrases(text)})

    def _phrases(self, text: str) -> Iterator[str]:
        """The phrases (folded) autolink may look up in `text` with these names (phrases())."""
        return phrases(text, self.heads)

    def autolink(self, text: str, self_slug: str, linked: set[str]) -> str:
        """Link the first mention of each other page's title or alias in plain text."""
        out: list[str] = []
        pos = 0
        folded = text.casefold()
        same = len(folded) == len(text)  # each character folds to one: folded[a:b] is text[a:b]'s
        heads, names = self.heads, self.names
        for seg_start, seg_end, is_link in _segments(text):
            if is_link:
                continue
            spans = [m.span() for m in WORD.finditer(text, seg_start, seg_end)]
            # the words a mention can start at: most words start no name, and are passed over
            # without trying their six phrases (or a loop's turn)
            starts: Iterable[int] = (
                [i for i, (at, _) in enumerate(spans) if folded[at : at + 3] in heads]
                if same
                else range(len(spans))
            )
            after = 0  # the words before it are in a phrase linked already
            for i in starts:
                if i < after:
                    continue
                at = spans[i][0]
                for n in range(min(MAX_NGRAM, len(spans) - i), 0, -1):
                    end = spans[i + n - 1][1]
                    phrase = text[at:end]
                    slug = names.get(folded[at:end] if same else phrase.casefold())
                    if slug and slug != self_slug and slug not in linked and len(phrase) >= 3:
                        out.append(text[pos:at])
                        out.append(f"[[{slug}|{phrase}]]")
                        pos, after = end, i + n
                        linked.add(slug)
                        break
        out.append(text[pos:])
        return "".join(out)


def phrases(text: str, heads: Container[str] | None = None) -> Iterator[str]:
    """The phrases (folded) autolink may look up in `text`: up to MAX_NGRAM words from each
    word outside links and citations (with `heads`, from each word that starts with one of
    them, as a linker's names' heads)."""
    folded = text.casefold()
    same = len(folded) == len(text)
    for seg_start, seg_end, is_link in _segments(text):
        if is_link:
            continue
        spans = [m.span() for m in WORD.finditer(text, seg_start, seg_end)]
        for i, (at, _) in enumerate(spans):
            if heads is not None and same and folded[at : at + 3] not in heads:
                continue
            for n in range(min(MAX_NGRAM, len(spans) - i), 0, -1):
                end = spans[i + n - 1][1]
                yield folded[at:end] if same else text[at:end].casefold()


def _segments(text: str) -> list[tuple[int, int, bool]]:
    """Spans of text, marking those inside [[links]] or [citations](...)."""
    spans: list[tuple[int, int, bool]] = []
    pos = 0
    for m in re.finditer(r"\[\[[^\]]*\]\]|\[[^\]]*\]\([^)]*\)", text):
        spans.append((pos, m.start(), False))
        spans.append((m.start(), m.end(), True))
        pos = m.end()
    spans.append((pos, len(text), False))
    return spans


def resolve_links(text: str, linker: Linker, linked: set[str]) -> str:
    """Turn the model's [[Name]] into [[slug|Name]], or plain text when nothing matches."""

    def repl(m: re.Match[str]) -> str:
        target, label = m.group(1).strip(), (m.group(3) or m.group(1)).strip()
        slug = linker.resolve(target)
        if slug is None:
            return label
        linked.add(slug)
        return f"[[{slug}|{label}]]"

    return WIKILINK.sub(repl, text)
