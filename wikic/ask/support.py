"""Whether each sentence of an answer is supported by the context the model was
shown, and `--quote` answers: the most relevant sentences of the pages themselves,
each cited, with no generated text.

The check is content-word support: a sentence is supported when most of its
content words occur in the context. `supports(sentence, texts)` is the seam where
the shared sentence-support check of the pages (wikic/wiki/support.py, issue 12:
its `check_against(sentence, texts)`) takes over once it lands; everything else
here calls only `supports`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from wikic.ask.passages import SENTENCE_END, Sentence, line_ref
from wikic.ask.rank import words
from wikic.wiki.page import CITATION_MD, plain_links

SUPPORT_SHARE = 0.7  # of a sentence's content words that the context must hold
MIN_WORDS = 2  # a sentence with fewer content words ("I don't know.") claims nothing to check
MIN_WORD_LEN = 3
QUOTE_SENTENCES = 5  # at most this many sentences in a --quote answer
ANSWER_PREFIX = re.compile(r"^(?:Scripted answer|Answer)\s*:\s*", re.I)


def content_words(text: str) -> set[str]:
    return {w for w in words(text) if len(w) >= MIN_WORD_LEN}


def supports(sentence: str, texts: Sequence[str]) -> bool:
    """The seam: is `sentence` supported by `texts` (the lines the model was shown)?"""
    claimed = content_words(sentence)
    if len(claimed) < MIN_WORDS:
        return True
    held = set().union(*(content_words(t) for t in texts)) if texts else set()
    return len(claimed & held) >= SUPPORT_SHARE * len(claimed)


def answer_sentences(answer: str) -> list[str]:
    """The answer's sentences as a reader sees them: link markup and citations removed."""
    text = " ".join(plain_links(CITATION_MD.sub("", answer)).split())
    return [s.strip() for s in SENTENCE_END.split(text) if s.strip()]


def unsupported(answer: str, context: str, question: str = "") -> list[str]:
    """The answer's sentences the context does not support. The question's own words count
    as context: restating the question invents nothing."""
    texts = [line for line in context.splitlines() if line.strip()] + [question]
    return [s for s in answer_sentences(answer) if not supports(ANSWER_PREFIX.sub("", s), texts)]


def quoted(ranked: list[Sentence], limit: int = QUOTE_SENTENCES) -> list[Sentence]:
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
