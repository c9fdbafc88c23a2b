"""What ranking reads of a page (select.py: the words of the page and of each sentence counted,
the pages its sentences link to), kept as text beside its record (state `ask_terms`), a line
per word, so that a question finds the lines of its own words with str.find and no page's
record need be decoded but those of the pages it shows (ask/scan.py).

    <the page's plain text's digest, as its record's head has it>
    <the pages its sentences link to, as JSON>
    #<each sentence's words counted, in page order>
    <word> <its count in the page> <each sentence it is in, by place>,...[;<its count in each>,...]

(the counts in the sentences left out where each is 1).

A word is of ask/rank.py's words(): no space, no comma, no colon, never a line's first "#" or
"[", so a word's line is the one text.find(f"\\n{word} ") finds. The links' line holds the only
quotes: a page's JSON string is found in no other line."""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass
class Counted:
    """A page's terms as select.Corpus takes them."""

    page_terms: dict[str, int]
    unit_terms: list[dict[str, int]]
    targets: list[str]


def terms_text(
    digest: str, page_terms: dict[str, int], unit_terms: list[dict[str, int]], targets: list[str]
) -> str:
    places: dict[str, list[int]] = {}
    counts: dict[str, list[int]] = {}
    for at, counted in enumerate(unit_terms):
        for word, n in counted.items():
            places.setdefault(word, []).append(at)
            counts.setdefault(word, []).append(n)
    sizes = "#" + " ".join(str(sum(c.values())) for c in unit_terms)
    lines = [digest, json.dumps(targets, ensure_ascii=False), sizes]
    for word in dict.fromkeys([*page_terms, *places]):
        line = f"{word} {page_terms.get(word, 0)} {','.join(map(str, places.get(word, ())))}"
        if any(n != 1 for n in counts.get(word, ())):
            line += ";" + ",".join(map(str, counts[word]))
        lines.append(line)
    return "\n".join(lines) + "\n"


def links_of(text: str, digest: str) -> str | None:
    """The links' line (JSON) where the text is of the page whose plain text has this digest
    (its record's); else None."""
    start = len(digest) + 1
    if not text.startswith(digest) or text[start - 1 : start + 1] != "\n[":
        return None
    end = text.find("\n", start)
    return text[start:end] if end > 0 and text[end - 1] == "]" else None


def word_line(text: str, at: int, word: str) -> tuple[int, list[int], list[int]]:
    """The line found at `at` (text.find(f"\\n{word} ")): the word's count in the page, the
    places of the sentences it is in, and its count in each."""
    start = at + len(word) + 2
    count, _, units = text[start : text.index("\n", start)].partition(" ")
    return (int(count), *_units(units))


def _units(units: str) -> tuple[list[int], list[int]]:
    if not units:
        return [], []
    places, _, counts = units.partition(";")
    at = list(map(int, places.split(",")))
    return at, (list(map(int, counts.split(","))) if counts else [1] * len(at))


def lengths(text: str) -> list[int]:
    """The words of each sentence."""
    start = text.index("\n#") + 2
    return list(map(int, text[start : text.index("\n", start)].split()))


def counted(text: str) -> Counted:
    """All of it (select.Corpus.of), for a corpus of every page."""
    _, links, lens, *lines = text.split("\n")[:-1]
    units: list[dict[str, int]] = [{} for _ in lens[1:].split()]
    page: dict[str, int] = {}
    for line in lines:
        word, count, found = line.split(" ")
        if count != "0":
            page[word] = int(count)
        for place, n in zip(*_units(found), strict=True):
            units[place][word] = n
    return Counted(page, units, json.loads(links))
