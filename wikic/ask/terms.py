"""What ranking reads of a page (select.py: the words of the page and of each sentence counted,
the pages its sentences link to), kept as text beside its record (state `ask_terms`), a line
per word, so that a question finds the lines of its own words with str.find and no page's
record need be decoded but those of the pages it shows (ask/scan.py).

    <the page's plain text's digest, as its record's head has it>
    #<each sentence's words counted, in page order>
    <the pages its sentences link to, as JSON>
    <word> <its count in the page> <sentence>:<its count there>,...

A word is of ask/rank.py's words(): no space, no comma, no colon, never a line's first "#" or
"[", so a word's line is the one text.find(f"\\n{word} ") finds."""

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
    units: dict[str, list[str]] = {}
    for at, counted in enumerate(unit_terms):
        for word, n in counted.items():
            units.setdefault(word, []).append(f"{at}:{n}")
    sizes = "#" + " ".join(str(sum(c.values())) for c in unit_terms)
    lines = [digest, sizes, json.dumps(targets, ensure_ascii=False)]
    for word in dict.fromkeys([*page_terms, *units]):
        lines.append(f"{word} {page_terms.get(word, 0)} {','.join(units.get(word, ()))}")
    return "\n".join(lines) + "\n"


def of_digest(text: str, digest: str) -> bool:
    """Whether the text is of the page whose plain text has this digest (of its record)."""
    return text.startswith(digest) and text[len(digest) : len(digest) + 2] == "\n#"


def line_of(text: str, word: str) -> tuple[int, list[tuple[int, int]]] | None:
    """A word's count in the page and, for each sentence it is in, the sentence's place and its
    count there; None where the page has no such word."""
    at = text.find(f"\n{word} ")
    if at < 0:
        return None
    start = at + len(word) + 2
    line = text[start : text.index("\n", start)]
    count, _, units = line.partition(" ")
    found = []
    if units:
        for unit in units.split(","):
            place, _, n = unit.partition(":")
            found.append((int(place), int(n)))
    return int(count), found


def lengths(text: str) -> list[int]:
    """The words of each sentence."""
    start = text.index("\n#") + 2
    line = text[start : text.index("\n", start)]
    return [int(n) for n in line.split()]


def targets_line(text: str) -> str:
    """The pages its sentences link to, as JSON (json.loads gives the list)."""
    start = text.index("\n", text.index("\n#") + 2) + 1
    return text[start : text.index("\n", start)]


def counted(text: str) -> Counted:
    """All of it (select.Corpus.of), for a corpus of every page."""
    head, lens, links, *lines = text.split("\n")[:-1]
    units: list[dict[str, int]] = [{} for _ in lens[1:].split()]
    page: dict[str, int] = {}
    for line in lines:
        word, count, found = line.split(" ")
        if count != "0":
            page[word] = int(count)
        if found:
            for unit in found.split(","):
                place, _, n = unit.partition(":")
                units[int(place)][word] = int(n)
    return Counted(page, units, json.loads(links))
