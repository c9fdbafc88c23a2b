"""What a note is: a source's line (or the few lines it needs to read alone) as text,
cleaned of Markdown markers and cut after a sentence when long. Shared by the plan (topic
notes) and the source pages (the lines no topic page shows)."""

from __future__ import annotations

import re

from wikic.wiki.support import sentences

MAX_CLAIM_CHARS = 1000
MAX_SPAN = 3  # lines one note may take: a pronoun's antecedent, a hard-wrapped sentence
PRONOUN = re.compile(r"(it|its|this|these|that|those|they|their|them|he|she|his|her|such)\b", re.I)
# A word that points back at something the line before named: "Bazel gets it from content
# hashing", "examples of this combination", "With it, the rebuild stops".
POINTS_BACK = re.compile(r"\bit\b|\b(?:this|these|those|such)\s+[a-z]", re.I)
RUNS_ON = re.compile(r"[^.!?:;]['\")\]]*$")  # a line that ends mid-sentence
TITLE_WORDS = 12  # a plain-text title line is short: "Lilu (mythology)", "Standup, 3 March"


def claim_text(lines: list[str], start: int, end: int, limit: int = MAX_CLAIM_CHARS) -> str:
    if start == end:  # most notes are one line: one join (split() needs no strip after it)
        text = " ".join(lines[start - 1].strip().lstrip("#>-*").split())
    else:
        text = " ".join(line.strip().lstrip("#>-*").strip() for line in lines[start - 1 : end])
        text = " ".join(text.split())
    return shorten(text, limit)


def shorten(text: str, limit: int) -> str:
    """At most `limit` characters, cut after a sentence (else a word, marked "…"): never
    inside a word, where a cut name ("Hoeb") would be a name no line holds."""
    if len(text) <= limit:
        return text
    said = ""
    for sentence in sentences(text):
        if len(said) + len(sentence) + 1 > limit:
            break
        said = f"{said} {sentence}".strip()
    return said or text[:limit].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"


def is_text(line: str) -> bool:
    bare = line.lstrip()  # empty exactly where line.strip() is
    return bool(bare) and bare[0] != "#"


def is_title_line(lines: list[str], n: int) -> bool:
    """Whether line `n` is a plain-text source's title: its first line with text, short, not a
    sentence, and set apart by a blank line. It names the source (the source page's title says
    it) and is no note: a topic page opening with "Lilu (mythology)" tells its reader nothing."""
    first = next((i for i, line in enumerate(lines, 1) if line.strip()), 0)
    if n != first or not is_text(lines[n - 1]):
        return False
    line = lines[n - 1].strip()
    apart = n == len(lines) or not lines[n].strip()
    return apart and len(line.split()) <= TITLE_WORDS and not re.search(r"[.!?:;]['\")\]]*$", line)


def needs_line_before(line: str) -> bool:
    """Whether a line's first sentence leans on the line before it: it opens with a pronoun
    ("This is a form of early cutoff.") or points back at something not named in it."""
    text = line.strip().lstrip(">-* ")
    if PRONOUN.match(text):
        return True
    if not POINTS_BACK.search(text):  # then not in its first sentence either: no splitting
        return False
    first = (sentences(text) or [text])[0]
    return bool(POINTS_BACK.search(first))


def section_of(lines: list[str], n: int) -> str:
    """The heading over line `n` ("" above the first heading)."""
    for line in reversed(lines[: n - 1]):
        if line.lstrip().startswith("#"):
            return line.strip().lstrip("#").strip()
    return ""


def note_span(lines: list[str], n: int) -> tuple[int, int]:
    """The lines a note at line `n` takes so that it reads alone: the line before (in the same
    paragraph) when it leans on it, and the lines after while its sentence runs on
    (hard-wrapped text); at most MAX_SPAN lines."""
    start = end = n
    if n > 1 and needs_line_before(lines[n - 1]) and is_text(lines[n - 2]):
        start = n - 1
    while (
        end - start + 1 < MAX_SPAN
        and end < len(lines)
        and RUNS_ON.search(lines[end - 1].strip())
        and is_text(lines[end])
        and lines[end].strip()[:1].islower()
    ):
        end += 1
    return start, end


def notes_of(lines: list[str], numbers: list[int]) -> list[tuple[int, int]]:
    """The notes the given lines make: one per text line (not a plain-text title line), each
    widened by note_span and merged with the one before where they overlap."""
    spans: list[tuple[int, int]] = []
    for n in sorted(set(numbers)):
        if not (1 <= n <= len(lines)) or not is_text(lines[n - 1]) or (spans and n <= spans[-1][1]):
            continue
        if is_title_line(lines, n):
            continue
        a, b = note_span(lines, n)
        if spans and a <= spans[-1][1]:
            a = spans.pop()[0]
        spans.append((a, b))
    return spans


def chunks(text: str, limit: int = MAX_CLAIM_CHARS) -> list[str]:
    """A long text as pieces of whole sentences (or words), each at most about `limit`."""
    out: list[str] = []
    while text:
        piece = shorten(text, limit).rstrip("…")
        out.append(piece)
        text = text[len(piece) :].strip()
    return out
