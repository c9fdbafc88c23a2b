"""How much of a claim its evidence contains: a paragraph as plain words,
content words (no stopwords, light stemming) and a fuzzy overlap score.
Used by lint's bad-citation rule to judge whether cited lines support a sentence."""

from __future__ import annotations

import re
from collections.abc import Set
from functools import lru_cache

from rapidfuzz import fuzz, process

from wikic.wiki.page import CITATION, WIKILINK

WORD = re.compile(r"\w+")
MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
COMMENT = re.compile(r"<!--.*?-->", re.S)
MARKUP = re.compile(r"[*_>`~]")
FUZZY_WORD = 85  # "tokenizer" matches "tokenizers", "nearest-neighbour" "nearest neighbor"
_STOP_TEXT = """
a an the and or but nor of to in on at for with by from into onto over under about as is are was
were be been being am it its it's this that these those there their they them he she his her we our
you your i me my not no so such than then too very can could may might will would shall should must
do does did done has have had having also which who whom whose what when where why how all any each
every more most other some same own only just both either neither if else while after before during
since until via per one two use used uses using"""
STOP = frozenset(_STOP_TEXT.split())


@lru_cache(maxsize=8192)  # a sentence is made plain for lint's word count, then for the check itself
def plain(text: str) -> str:
    """A paragraph as a reader hears it: no citations, links by their text, no markup."""
    if "[" in text:
        text = CITATION.sub(" ", text)
        text = WIKILINK.sub(lambda m: m.group(3) or m.group(1), text)
        text = MD_LINK.sub(lambda m: m.group(1), text)
    if "<!--" in text:
        text = COMMENT.sub(" ", text)
    return " ".join(MARKUP.sub(" ", text).split())


@lru_cache(maxsize=262144)
def _content_key(word: str) -> str:
    """A word's stem, or "" for a word that carries no content (stopwords, short words)."""
    if word in STOP or (len(word) < 3 and not word.isdigit()):
        return ""
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith("ed"):
        word = word[:-2]
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


@lru_cache(maxsize=4096)  # a build checks each line against many sentences, and lint again
def content_words(text: str) -> frozenset[str]:
    return frozenset(map(_content_key, WORD.findall(text.casefold()))) - {""}


def support(claim: str | Set[str], evidence: Set[str]) -> float:
    """The share (0-100) of the claim's content words found in the evidence's, fuzzily per word;
    numbers must match exactly."""
    words = content_words(claim) if isinstance(claim, str) else claim
    if not words:
        return 100.0
    missing = [w for w in words if w not in evidence]
    matched = len(words) - len(missing)
    pool = list(evidence)
    for word in missing:
        if (
            pool
            and not word.isdigit()
            and process.extractOne(word, pool, scorer=fuzz.ratio, score_cutoff=FUZZY_WORD)
        ):
            matched += 1
    return 100.0 * matched / len(words)
