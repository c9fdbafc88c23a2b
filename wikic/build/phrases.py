"""Topics from structure, the lower-case kind: a term that two or more sources use ("early
cutoff", "load tests", "sleep paralysis") gets a page even when the model's digests missed it,
grounded to the lines that write it. candidates.py finds the capitalised names.

A phrase is a term where some source marks it (a heading, **bold** or *italic*) and another
writes it, or where two or more sources write it and its words mostly stand together there:
"tornado outbreak" is one, "studio album" is not (many more sources write "album" alone). Two
sources that repeat one sentence are one use of a phrase, not two.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TypeVar

from wikic.wiki.overlap import STOP

W = TypeVar("W", bound=Mapping[str, list[int]])  # a term's lines by source (merge.py keeps them packed)

MIN_SOURCES = 2
COHESION = 0.5  # sources writing the phrase / sources writing its most used word, at least
MAX_LINES_PER_SOURCE = 6
CONTEXT = 40  # characters each side of a phrase that tell a source's own sentence from a copied one
MAX_WORDS = 3  # a term's words at most (written() zips three): a longer heading or emphasis is a sentence
TOKEN = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]|\S")
EMPHASIS = re.compile(r"\*\*([^*\n]+)\*\*|(?<![*\w])\*([^*\n]+)\*(?![*\w])|(?<!\w)_([^_\n]+)_(?!\w)")
LOWER_WORD = re.compile(r"[a-z][a-z'-]*[a-z]")
HEADING = re.compile(r"^\s*#{1,6}\s+(.+?)\s*#*\s*$")
MARKED_WORD = re.compile(r"[^\W\d_][\w'-]*")
ALPHA = re.compile(r"[^\W\d_]+")
# Words that cannot end a term, as written in running text: "film directed", "temperature ever".
_NOT_LAST = "ever prior also only even still just well very more most less least such same own"
NOT_LAST = frozenset(_NOT_LAST.split())
_NOT_WORDS = """first second third last next new old many most some few much other another each every
all both any several various certain own same such like unlike however although though also"""
NOT_WORDS = STOP | frozenset(_NOT_WORDS.split())


def _content(tok: str) -> bool:
    """Whether a token can be a term's word, remembered (a source's words recur, and so do a
    project's: a dict lookup instead of five tests, for most of them)."""
    ok = tok[0].islower() and tok.isascii() and "'" not in tok and len(tok) > 2 and tok not in NOT_WORDS
    if len(_CONTENT) >= 1 << 17:  # a bounded memo: a corpus of many words does not grow it forever
        _CONTENT.clear()
    _CONTENT[tok] = ok
    return ok


_CONTENT: dict[str, bool] = {}


def written(line: str) -> set[str]:
    """The lower-case phrases of two to MAX_WORDS words a line writes: those of its runs of
    lower-case content words (a capitalised word, a number, a stop word or a mark of
    punctuation ends a run)."""
    out: set[str] = set()
    run: list[str] = []
    content = _CONTENT
    for tok in TOKEN.findall(line) + ["."]:  # "." ends the last run
        ok = content.get(tok)
        if ok is None:
            ok = _content(tok)
        if ok:
            run.append(tok)
            continue
        if len(run) >= 2:
            # its phrases of two and of three words (MAX_WORDS) as zips of the run with itself
            # shifted, joined in C (no loop over the lengths: 15 % less time)
            out.update(map(" ".join, zip(run, run[1:], strict=False)))
            if len(run) >= 3:
                out.update(map(" ".join, zip(run, run[1:], run[2:], strict=False)))
        if run:
            run = []
    return out


def marked(line: str) -> dict[str, str]:
    """What a line marks as a term (its heading text, its bold or italic words), casefolded,
    with the form it is written in; of two to MAX_WORDS words (one word marked is as often
    "Summary" or "Make" the verb as a term), not stop words alone."""
    texts = [m.group(1)] if (m := HEADING.match(line)) else []
    if "*" in line or "_" in line:  # EMPHASIS needs one of them
        texts += [next(g for g in m.groups() if g) for m in EMPHASIS.finditer(line)]
    out: dict[str, str] = {}
    for text in texts:
        words = MARKED_WORD.findall(text)
        key = " ".join(words).casefold()
        if 2 <= len(words) <= MAX_WORDS and not set(key.split()) <= NOT_WORDS:
            out.setdefault(key, " ".join(words))
    return out


def distinct_uses(phrase: str, where: dict[str, list[int]], sources: Mapping[str, list[str]]) -> bool:
    """Whether two or more sources write `phrase` in words of their own: two sources that
    copy one sentence ("The citizens refer to themselves as ...") are one use, not two."""
    if len(where) < MIN_SOURCES:
        return False
    seen: list[list[tuple[str, str]]] = []
    for path, numbers in where.items():
        uses = [_around(sources[path][n - 1], phrase) for n in numbers]
        if any(any(all(not _same(u, v) for v in other) for u in uses) for other in seen):
            return True  # a use of its own: one that copies none of another source's
        seen.append(uses)
    return False


def _same(a: tuple[str, str], b: tuple[str, str]) -> bool:
    """Two uses in one copied sentence: the same words on both sides, or the same CONTEXT
    characters on one side and the other side the same as far as the shorter goes (a copy
    may end sooner). One side alone is as often a formula ("... is a fictional character
    from the Australian")."""
    if a == b:
        return True
    before = a[0].endswith(b[0]) or b[0].endswith(a[0])
    after = a[1].startswith(b[1]) or b[1].startswith(a[1])
    full = (a[0] == b[0] and len(a[0]) == CONTEXT) or (a[1] == b[1] and len(a[1]) == CONTEXT)
    return before and after and full


def _around(line: str, phrase: str) -> tuple[str, str]:
    """The words before and after the phrase's first use in a line, casefolded, without
    punctuation (a copy may end its sentence where the original goes on) or numbers (a
    template filled in: "This note number 3 describes part 3 of ...")."""
    text = " " + " ".join(ALPHA.findall(line.casefold())) + " "
    words = " " + " ".join(ALPHA.findall(phrase.casefold())) + " "
    at = text.find(words)
    if at < 0:
        return (text, text)
    return (text[max(0, at - CONTEXT) : at], text[at + len(words) : at + len(words) + CONTEXT])


def source_terms(lines: list[str]) -> dict[str, str]:
    """What one source gives terms(): what it marks (casefolded, and as written), the
    lower-case words it writes, and the phrases its lines write with their first
    MAX_LINES_PER_SOURCE line numbers ("3,5"); each a newline-joined list of non-empty items
    (candidates.source_names packs them), which a build keeps per source (sourceplan.py), so
    that an edit reads again only the sources it changed."""
    return terms_of(lines, text_lines(lines))


def text_lines(lines: list[str]) -> list[tuple[int, str]]:
    """The source's lines that are text, numbered: not blank, not headings."""
    return [(n, line) for n, line in enumerate(lines, start=1) if (bare := line.lstrip()) and bare[0] != "#"]


def terms_of(lines: list[str], text: list[tuple[int, str]]) -> dict[str, str]:
    """source_terms(lines), with its text lines (text_lines) already found."""
    marks: dict[str, str] = {}
    for line in lines:
        if "#" in line or "*" in line or "_" in line:
            for key, form in marked(line).items():
                marks.setdefault(key, form)
    at: dict[str, str] = {}
    for n, line in text:
        note_lines(at, written(line), n)
    # a match never spans a newline: the text lines' words are found in one pass over them
    used = set(LOWER_WORD.findall("\n".join(line for _, line in text)))
    return {
        "marks": "\n".join(marks),
        "forms": "\n".join(marks.values()),
        "used": "\n".join(sorted(used)),
        "phrases": "\n".join(at),
        "phrase_lines": "\n".join(at.values()),
    }


def note_lines(at: dict[str, str], found: set[str], n: int, limit: int = MAX_LINES_PER_SOURCE) -> None:
    """Line `n` noted for each of `found` in `at` (item -> its first `limit` line numbers,
    joined as stored: "3,5"). The new ones in one step: most items a line writes are new to
    its source."""
    if not found:
        return
    again = found.intersection(at)
    number = str(n)
    for item in again:
        seen = at[item]
        if seen.count(",") < limit - 1:
            at[item] = f"{seen},{number}"
    at.update(dict.fromkeys(found - again if again else found, number))


def unjoin(text: str) -> list[str]:
    """A newline-joined list back as a list."""
    return text.split("\n") if text else []


def lines_of(keys: list[str], lines: str, wanted: set[str]) -> dict[str, list[int]]:
    """Of `keys` (with their line numbers `lines`, as source_terms joins them), those in
    `wanted` with their line numbers, in the order the source writes them."""
    hits = wanted.intersection(keys)
    if not hits:
        return {}
    rows = lines.split("\n")
    return {keys[i]: [int(n) for n in rows[i].split(",")] for i in sorted(keys.index(k) for k in hits)}


def _cohesive(phrase: str, used: int, words: Mapping[str, int]) -> bool:
    parts = phrase.split()
    if parts[-1] in NOT_LAST or parts[-1].endswith(("ed", "ly")) or parts[0].endswith(("ing", "ly")):
        return False  # "film directed", "helping ensure": a verb or an adverb, not a term
    return used >= COHESION * max(words.get(w, 0) for w in parts)


def _longest(found: dict[str, W]) -> dict[str, W]:
    """Of "stable representative democracy" and "representative democracy", written in the
    same sources, the longer: the shorter is only ever a piece of it there."""
    inside: set[str] = set()
    for phrase, where in found.items():
        parts = phrase.split()
        for n in range(1, len(parts)):
            for i in range(len(parts) - n + 1):
                piece = " ".join(parts[i : i + n])
                if piece in found and set(found[piece]) == set(where):
                    inside.add(piece)
    return {phrase: where for phrase, where in found.items() if phrase not in inside}
