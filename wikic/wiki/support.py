"""The one support check, sentence by sentence, shared by the build (write, digest
summaries) and lint's bad-citation: prose split into sentences, and each sentence
judged against only the lines it cites.

A sentence is supported when its cited lines hold enough of its content words, every
number and proper name it states, and no negation or opposite it adds. Word overlap
with a large span passes recombinations ("X is the first in a series of examples
that demonstrate Y"), so a wide citation is judged by the few lines inside it that
carry the sentence best.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote

from wikic.wiki.overlap import STOP, content_words, plain, support
from wikic.wiki.page import CITATION, WIKILINK, Citation

MAX_NOVEL = 2  # content words a sentence may add to the few lines picked for it from a wide citation
MAX_EVIDENCE = 2  # lines (or notes) a sentence may draw on
_ABBREVIATIONS = "e.g i.e etc vs cf al mr mrs ms dr st jr sr prof inc ltd co no fig approx ca esp dept est"
ABBREVIATIONS = frozenset(_ABBREVIATIONS.split())
WORD = re.compile(r"\w+")
HAS_WORD = re.compile(r"\w")
NEGATABLE = re.compile(r"\w+(?:n't)?")
INITIALS = re.compile(r"(?:[a-z]\.)+[a-z]")
BREAK = re.compile(r"[.!?]+[\"'”’)\]]*\s+")
LAST_WORD = re.compile(r"([\w.]+)[.!?]*$")
WORD_WINDOW = 80  # characters before a stop that hold the word it ends
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
NAME = re.compile(r"\b[A-Z][\w'’-]*|\b\w+[A-Z][\w'-]*")
_NEGATION = "not no never none nobody nothing neither nor without cannot"
NEGATION = frozenset(_NEGATION.split())
# Opposites a paraphrase must not swap (in either direction): the sentence says one, its lines
# only the other. Cheap and partial: a reversal in other words passes (see bench/support_check.py).
_OPPOSITES = [
    ("keep", "move abandon drop replace remove leave"),
    ("add", "remove delete"),
    ("increase", "decrease reduce lower"),
    ("include", "exclude omit"),
    ("enable", "disable"),
    ("accept", "reject refuse decline"),
    ("allow", "prevent forbid"),
    ("start", "stop end"),
    ("before", "after"),
    ("fast", "slow"),
    ("faster", "slower"),
    ("more", "less fewer"),
    ("larger", "smaller"),
    ("higher", "lower"),
    ("first", "last"),
    ("win", "lose"),
    ("success", "failure fail"),
    ("same", "different"),
    ("always", "never"),
    ("cheap", "expensive"),
    ("safe", "unsafe dangerous risky"),
    ("newer", "older"),
    ("new", "old"),
    ("correct", "wrong"),
    ("early", "late"),
    ("true", "false"),
    ("support", "oppose"),
    ("rise", "fall"),
]
IRREGULAR = {"kept": "keep", "won": "win", "lost": "lose", "left": "leave", "rose": "rise", "fell": "fall"}


@lru_cache(maxsize=262144)
def _root(word: str) -> str:
    """A word without its inflection, enough to compare "moved" with "move", "kept" with "keep"."""
    word = word.casefold()
    if word in IRREGULAR:
        return IRREGULAR[word]
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix) and not word.endswith("ss"):
            word = word[: -len(suffix)]
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def _opposites() -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = {}
    for word, others in _OPPOSITES:
        for other in others.split():
            table.setdefault(_root(word), set()).add(_root(other))
            table.setdefault(_root(other), set()).add(_root(word))
    return {k: frozenset(v) for k, v in table.items()}


OPPOSITES = _opposites()


def _is_break(text: str, end: int, after: int) -> bool:
    """Whether the punctuation ending at `end` (the next sentence at `after`) ends a sentence."""
    # the word before the stop, from a short window: searching all of text[:end] made long
    # paragraphs quadratic
    word = LAST_WORD.search(text, max(0, end - WORD_WINDOW), end)
    token = word.group(1).rstrip(".").casefold() if word else ""
    if token in ABBREVIATIONS or (len(token) == 1 and token.isalpha()):  # "e.g.", "J. R. R."
        return False
    if INITIALS.fullmatch(token):  # "U.S. Navy"
        return False
    nxt = text[after : after + 1]
    # a capital, a digit, a quote or bracket, bold (**), or a citation held out of the way (\x00)
    return bool(nxt) and (nxt.isupper() or nxt.isdigit() or nxt in "\"'“‘([*\x00")


def sentences(text: str) -> list[str]:
    """The sentences of a paragraph; never broken after "e.g.", inside "3.5" or after an initial."""
    text = " ".join(text.split())
    out, start = [], 0
    for m in BREAK.finditer(text):
        if _is_break(text, m.start() + 1, m.end()):
            out.append(text[start : m.end()].strip())
            start = m.end()
    out.append(text[start:].strip())
    return [s for s in out if s]


@dataclass(frozen=True)
class Verdict:
    ok: bool
    score: float  # % of the sentence's content words its lines hold
    reason: str = ""  # why not, for a person: "says 1977, which its lines do not"


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in NUMBER.findall(text)}


def _names(sentence: str, linked: set[str]) -> set[str]:
    """Capitalised words, not stopwords, not inside a [[link]]; the sentence's first word only
    when the next is capitalised too ("Dennis Ritchie wrote", not "Builds are")."""
    words = NAME.findall(sentence)
    first = re.match(r"\W*(\w+)\W+(\w+)?", sentence)
    skip = {first.group(1)} if first and not (first.group(2) or "a")[0].isupper() else set()
    return {w for w in words if w not in skip and w.casefold() not in STOP and w.casefold() not in linked}


def _stems(text: str) -> set[str]:
    words = set(WORD.findall(text))
    return {_root(w) for w in words} | {w.casefold() for w in words}


@lru_cache(maxsize=4096)  # the cited lines' sentences come back for every sentence citing them
def _negated(text: str) -> frozenset[str]:
    """Content words within three words after a negation: "not designed", "not by a hash"."""
    words = NEGATABLE.findall(text.casefold())
    out: set[str] = set()
    for i, word in enumerate(words):
        if word in NEGATION or word in ("rather", "instead") or word.endswith("n't"):
            window = words[i + 1 : i + (5 if word in ("rather", "instead") else 4)]
            out |= {_root(w) for w in window if w not in STOP and w not in NEGATION and w != "than"}
    return frozenset(out)


@dataclass(frozen=True)
class _Evidence:
    """What the check needs of a text, computed once per text (lint sees the same lines often)."""

    held: frozenset[str]  # content words
    words: frozenset[str]  # every word, and its root
    numbers: frozenset[str]
    negates: bool  # any negation cue at all


@lru_cache(maxsize=65536)
def _evidence(text: str) -> _Evidence:
    words = frozenset(_stems(text))
    negates = bool(words & NEGATION) or "n't" in text or bool(words & {"rather", "instead"})
    return _Evidence(content_words(text), words, frozenset(_numbers(text)), negates)


@lru_cache(maxsize=4096)  # the same cited lines are looked at for each sentence citing them
def _units(evidence: str) -> tuple[tuple[frozenset[str], str], ...]:
    """The evidence's sentences, each with its content words."""
    return tuple((content_words(s), s) for s in sentences(evidence))


def _reversed(text: str, said: set[str], words: frozenset[str], evidence: str, ev: _Evidence) -> bool:
    """A negation one side makes and the other does not, about the same word."""
    if not (ev.negates or said & NEGATION or said & {"rather", "instead"} or "n't" in text):
        return False
    # a negation the lines make counts only in their sentence closest to this one: "written by
    # Evan Martin" is not reversed by "not written by hand" in the next sentence
    negated = _negated(evidence)
    flipped = _negated(text) & (said - negated)
    if negated:  # else none of its sentences negates anything either: no closest one to find
        words_of = [(len(words & held), s) for held, s in _units(evidence)]
        closest = max(words_of, key=lambda ws: ws[0], default=(0, ""))[1]
        flipped |= _negated(closest) & (said - _negated(text))
    return bool({w for w in flipped if w in ev.words}) or bool(
        (said & NEGATION) and not (ev.words & NEGATION)
    )


def check(sentence: str, evidence: str, threshold: float = 60, max_novel: int | None = None) -> Verdict:
    """Whether `evidence` (the cited lines' text) supports `sentence` (Markdown allowed);
    with `max_novel`, also at most that many of its content words may be missing from it."""
    if threshold <= 100 and _verbatim(plain(sentence), evidence):
        return SAID_VERBATIM  # what _judged answers for it, without its work: see _verbatim
    verdict, novel = _judged(sentence, evidence, threshold)
    if verdict.ok and max_novel is not None and novel > max_novel:
        return Verdict(False, verdict.score, f"its lines hold only {verdict.score:.0f}% of its words")
    return verdict


SAID_VERBATIM = Verdict(True, 100.0)


def _verbatim(text: str, evidence: str) -> bool:
    """Whether the sentence (as plain text) is its evidence word for word, as a sentence made of
    its source's line is (a notes page, a topic page's notes): then _judged's answer is known.
    Every test it makes reads the text's words, numbers and negations as tokens of \\w and
    digits; here the two texts have the same tokens in the same order (the evidence differs at
    most by markup characters that are neither, and by spaces), so the sentence holds all its
    lines' words (score 100, nothing novel), every number and name, every negation the same
    (a sentence of the evidence negates only what the whole does), no opposite."""
    if text == evidence:
        return True
    if "_" in evidence or "[" in evidence or "<!--" in evidence:  # plain() would change its words
        return False
    return len(text) <= len(evidence) and plain(evidence) == text


@lru_cache(maxsize=16384)  # a build's checks come back in its closing lint: the same sentence, lines
def _judged(sentence: str, evidence: str, threshold: float) -> tuple[Verdict, int]:
    """check() but for `max_novel`: the verdict, and how many of its content words the lines lack."""
    linked = {w.casefold() for m in WIKILINK.finditer(sentence) for w in re.findall(r"\w+", m.group(0))}
    text = plain(sentence)
    ev = _evidence(evidence)
    words = content_words(text)
    score = support(words, ev.held)
    novel = len(words) - round(score * len(words) / 100)
    missing_numbers = sorted(_numbers(text) - ev.numbers)
    if missing_numbers:
        return Verdict(False, score, f"says {', '.join(missing_numbers)}, which its lines do not"), novel
    names = _names(text, linked)
    missing_names = sorted(n for n in names if content_words(n) - ev.held and n.casefold() not in ev.words)
    if missing_names:
        return Verdict(False, score, f"names {', '.join(missing_names)}, which its lines do not"), novel
    said = _stems(text)
    if _reversed(text, said, words, evidence, ev):
        return Verdict(False, score, "says the opposite of its lines (a negation they do not make)"), novel
    for word in said - ev.words:
        if OPPOSITES.get(word, frozenset()) & ev.words:
            return Verdict(False, score, f'says "{word}" where its lines say the opposite'), novel
    if score < threshold:
        return Verdict(False, score, f"its lines hold only {score:.0f}% of its words"), novel
    return Verdict(True, score), novel


def best_evidence(sentence: str, texts: Sequence[str], limit: int = MAX_EVIDENCE) -> list[int]:
    """The indexes of the few texts (lines, notes) that together hold most of the sentence's
    content words: greedy cover, in their order."""
    words = content_words(plain(sentence))
    if not words or limit < 1:
        return []
    held: list[frozenset[str]] = []
    for text in texts:  # the first text holding every word is the greedy's first pick and its last
        have = content_words(text)
        if words <= have:
            return [len(held)]
        held.append(have)
    return greedy_cover(words, held, limit)


def greedy_cover(words: frozenset[str], held: Sequence[frozenset[str]], limit: int) -> list[int]:
    """The indexes of at most `limit` word sets that cover most of `words`, each picked for
    the most words still uncovered (the first on a tie), in their order."""
    chosen: list[int] = []
    left = set(words)
    while left and len(chosen) < limit:
        gain, best = max(
            ((len(left & h), -i) for i, h in enumerate(held) if -i not in chosen), default=(0, 0)
        )
        if gain == 0:
            break
        chosen.append(-best)
        left -= held[-best]
    return sorted(chosen)


def check_against(
    sentence: str,
    texts: Sequence[str],
    threshold: float = 60,
    max_novel: int | None = MAX_NOVEL,
    limit: int = MAX_EVIDENCE,
) -> tuple[list[int], Verdict]:
    """The sentence judged against the few (`limit`) of `texts` that carry it best: picked
    from many, they may leave out only a few of its words."""
    chosen = best_evidence(sentence, texts, limit)
    if not chosen:
        return [], Verdict(False, 0.0, "none of its lines holds its words")
    return chosen, check(sentence, "\n".join(texts[i] for i in chosen), threshold, max_novel)


def judge(sentence: str, lines: Sequence[str], threshold: float = 60) -> Verdict:
    """A sentence against the lines it cites; a wide citation by the few lines in it that carry
    the sentence best, so that a recombination of a whole source's words does not pass."""
    if len(lines) <= MAX_EVIDENCE:
        return check(sentence, "\n".join(lines), threshold)
    return check_against(sentence, lines, threshold)[1]


def cited_sentences(
    markdown: str, found: Sequence[tuple[int, str, Citation]] | None = None
) -> list[tuple[str, list[Citation]]]:
    """A paragraph's sentences, each with the citations that follow it (the run of citations
    after a group of sentences covers every sentence of the group). Sentences after the last
    citation get none. `found`: the paragraph's citations as already scanned (where each
    starts, its text, the citation), in place of scanning for them again."""
    out: list[tuple[str, list[Citation]]] = []
    pos = 0
    pending: list[str] = []
    for at, raw, cite in _citations(markdown) if found is None else found:
        chunk = markdown[pos:at]
        pos = at + len(raw)
        if chunk.strip():
            pending = [s for s in sentences(chunk) if HAS_WORD.search(s)]
            out += [(s, []) for s in pending]
        for i in range(len(out) - len(pending), len(out)):
            out[i][1].append(cite)
    rest = markdown[pos:]
    if rest.strip():
        out += [(s, []) for s in sentences(rest) if HAS_WORD.search(s)]
    return out


def _citations(markdown: str) -> Iterator[tuple[int, str, Citation]]:
    for m in CITATION.finditer(markdown):
        linked, start_at, end_at = m.group(4, 5, 6)
        start = int(start_at)
        yield (
            m.start(),
            m.group(0),
            Citation(unquote(linked) if "%" in linked else linked, start, int(end_at) if end_at else start),
        )
