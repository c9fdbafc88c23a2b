"""Whether each sentence of an answer is supported by the context the model was
shown, and `--quote` answers: the most relevant sentences of the pages themselves,
each cited, with no generated text.

An answer sentence is held to the pages' own support check (wikic/wiki/support.py,
shared with the build and lint) against the lines the model was shown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from wikic.ask.passages import Sentence, line_ref
from wikic.ask.rank import words
from wikic.wiki.page import CITATION_MD, plain_links
from wikic.wiki.support import check_against, sentences

MIN_WORDS = 2  # a sentence with fewer content words ("I don't know.") claims nothing to check
MIN_WORD_LEN = 3
QUOTE_SENTENCES = 5  # at most this many sentences in a --quote answer
ANSWER_PREFIX = re.compile(r"^(?:Scripted answer|Answer)\s*:\s*", re.I)


def content_words(text: str) -> set[str]:
    return {w for w in words(text) if len(w) >= MIN_WORD_LEN}


def supports(sentence: str, texts: Sequence[str]) -> bool:
    """Is `sentence` supported by `texts` (the lines the model was shown)? The pages' own
    check (wiki/support.py), so an answer is held to what a page sentence is held to: the
    few lines that carry it best must hold its content words, numbers and names, and no
    negation or opposite it adds."""
    if len(content_words(sentence)) < MIN_WORDS:
        return True
    return check_against(sentence, list(texts))[1].ok


def answer_sentences(answer: str) -> list[str]:
    """The answer's sentences as a reader sees them: link markup and citations removed."""
    text = " ".join(plain_links(CITATION_MD.sub("", answer)).split())
    return sentences(text)


def unsupported(answer: str, context: str, question: str = "") -> list[str]:
    """The answer's sentences the context does not support. The question's own words count
    as context: restating the question invents nothing."""
    texts = [line for line in context.splitlines() if line.strip()] + [question]
    return [s for s in answer_sentences(answer) if not supports(ANSWER_PREFIX.sub("", s), texts)]


def quoted(ranked: Sequence[Sentence], limit: int = QUOTE_SENTENCES) -> list[Sentence]:
    """The best `limit` sentences, each text once (a source page repeats its topic pages' sentences)."""
    out: list[Sentence] = []
    said: set[str] = set()
    for s in ranked:
        if len(out) == limit:
            break
        if s.text not in said:
            said.add(s.text)
            out.append(s)
    return out


def quote_answer(chosen: list[Sentence]) -> str:
    """Sentences as the pages say them, each citing its page and the source lines it cites."""
    lines = []
    for s in chosen:
        sources = ", ".join(line_ref(c) for c in s.cites)
        cite = f"[[{s.page.title}]]" + (f" ({sources})" if sources else "")
        lines.append(f"- {s.text} {cite}")
    return "\n".join(lines)
