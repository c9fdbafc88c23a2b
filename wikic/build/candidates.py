"""Topics from structure (no model): a named thing, written capitalised in running text
(a person, a product, a place, a system), that two or more sources mention gets a page
even when the model's digests missed it, grounded to the lines that name it; and so does
a recurring term (phrases.py).

A name counts where it is written capitalised past the first word of a sentence (or as a
run of capitalised words), so that "Make is" at a sentence start is no evidence of a name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from wikic.build.phrases import note_lines, terms_of, text_lines
from wikic.wiki.overlap import STOP

MIN_SOURCES = 2
MAX_WORDS = 4
MAX_LINES_PER_SOURCE = 6  # lines naming it, per source, that become notes
# A capitalised word, optionally followed by more (joined by a space or "of"/"de"/"la"...).
NAME = re.compile(
    r"\b[A-Z][\w&-]*\w(?:\s+(?:(?:of|de|la|du|von|van|der|the)\s+)?[A-Z][\w&-]*\w)*(?:\s+\d+\b)?"
)
LOWER = re.compile(r"\b[a-z][\w-]*\b")
SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|[\"“(]\s*)$")
_NOT_NAMES = """i january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday mr mrs ms dr st however although though
there here when while after before during yes no ok note notes see also without many most some few
first second third last next new old today yesterday tomorrow because unlike like we our us
president national international general eps inc ltd llc corp plc gmbh jr sr"""
NOT_NAMES = frozenset(_NOT_NAMES.split())
# Of those, the words that open a sentence but never a name: stripped from a run's start.
_NOT_LEADING = """i however although though there here when while after before during yes no ok note notes
see also without many most some few because unlike like we our us today yesterday tomorrow"""
NOT_LEADING = frozenset(_NOT_LEADING.split())
_LEADING = STOP | NOT_LEADING  # made once: a name's words are checked against them by the thousand
_UNNAMED = STOP | NOT_NAMES
NAMED_WORD = re.compile(r"[^\W\d_][\w'’-]*")
POSSESSIVE = re.compile(r"['’]s\b")
MAX_TOPIC_WORDS = 8
_POINTING = "it its he she his her they their them this these those we our you"
POINTING = frozenset(_POINTING.split())
ENUMERATED = re.compile(r"^\d+\s*[:.)]\s")  # "3: On August 7, 2018, Kobach appeared ..."
DATED = re.compile(r"^(?:in|on|at|by|from|since|during|after|before|until)\s+\d", re.I)  # "In 1995"


@dataclass
class Candidate:
    name: str
    lines: Mapping[str, list[int]] = field(default_factory=dict)  # source path -> line numbers naming it
    kind: str = "entity"  # the page type it asks for: "entity" (a name), "concept" (a term, phrases.py)


def is_topic_name(name: str) -> bool:
    """Whether a name the model proposes can title a page: not a number or a year ("2018"),
    not a dated phrase ("In 1995"), a legal suffix ("Inc") or a sentence ("It has the second
    largest number of users ..."); a small model proposes all of these."""
    words = name.split()
    named = [w for w in NAMED_WORD.findall(name) if w.casefold() not in _UNNAMED]
    return bool(
        named
        and len(words) <= MAX_TOPIC_WORDS
        and words[0].casefold() not in POINTING
        and not ENUMERATED.match(name)
        and not DATED.match(name)
    )


def _clean(name: str) -> str:
    """A run of capitalised words without the ones that only open its sentence ("However
    Bazel"); "New York City", "National Football League", "St Louis" keep theirs."""
    words = name.split()
    while words and (
        words[0].casefold() in _LEADING or (len(words) == 1 and words[0].casefold() in NOT_NAMES)
    ):
        words = words[1:]
    return " ".join(words[:MAX_WORDS])


def names_in_line(line: str) -> tuple[set[str], set[str]]:
    """The names a line writes: (those written as names, mid-sentence or multi-word; those
    only at a sentence start, which count only if written as a name elsewhere)."""
    text = line.strip().lstrip("#>-*0123456789. ")
    sure: set[str] = set()
    maybe: set[str] = set()
    for m in NAME.finditer(text):
        found = m.group(0)
        name = _NAMED.get(found)
        if name is None:
            name = _named(found)
        if not name:
            continue
        starts = _sentence_start(text[: m.start()]) and found.startswith(name)
        (maybe if starts and " " not in name else sure).add(name)
    return sure, maybe


def _named(found: str) -> str:
    """The name a match of NAME writes ("" for none), remembered: a corpus's names recur, and
    so do the words that open its sentences."""
    name = _clean(POSSESSIVE.sub("", found) if "'" in found or "’" in found else found)
    if not name or len(name) < 3 or name.casefold() in NOT_NAMES or name.isdigit() or _adjective(name):
        name = ""
    if len(_NAMED) >= 1 << 16:  # bounded, as phrases._CONTENT
        _NAMED.clear()
    _NAMED[found] = name
    return name


_NAMED: dict[str, str] = {}


def _sentence_start(before: str) -> bool:
    """SENTENCE_START.search(before), without the regular expression trying every position
    of a long line: nothing before, a sentence's end and then space, or an opening quote or
    parenthesis and maybe space (a line holds no newline)."""
    if not before:
        return True
    kept = before.rstrip()
    if not kept:
        return False
    return kept[-1] in '"“(' or (kept[-1] in ".!?:;" and len(kept) < len(before))


SECTIONS = (
    "sure",
    "maybe",
    "names",
    "name_lines",
    "lower",
    "titles",
    "marks",
    "forms",
    "used",
    "phrases",
    "phrase_lines",
)
SEARCHED = ("names", "phrases")  # the sections a key newly picked is looked for in (keptlines.LINES)


def searched(packed: str) -> str:
    """Of a source's packed names (source_names), what a patched merge searches every source
    for where it picks a key anew (replan._Packed.having): its names and its phrases, the
    sections of the picked keys' kinds (keptlines.LINES); all of it where it is not of this
    shape. Kept apart for each source (state planned_names), so that the search reads a fifth
    of what its facts hold."""
    parts = packed.split("\n\n")
    if len(parts) != len(SECTIONS):
        return packed
    return "\n\n".join(parts[SECTIONS.index(kind)] for kind in SEARCHED)


def source_names(lines: list[str]) -> str:
    """What one source gives candidates(), packed in one string: the names it writes as names
    ("sure") and those only at a sentence start ("maybe"); every name with its first
    MAX_LINES_PER_SOURCE line numbers; the words it writes in lower case, its headings and
    title (casefolded); its terms (phrases.source_terms). A build keeps it per source
    (sourceplan.py) and reads it on every plan: as plain text, not JSON, it splits in C (as
    JSON, the 10,000 sources of bench/build_scaling.py took 0.7 s to decode)."""
    sure: set[str] = set()
    maybe: set[str] = set()
    headings = {line.strip("# \t").casefold() for line in lines if line.lstrip().startswith("#")}
    text = text_lines(lines)
    at: dict[str, str] = {}
    for n, line in text:
        named, maybes = names_in_line(line)
        sure |= named
        maybe |= maybes
        note_lines(at, named | maybes, n, MAX_LINES_PER_SOURCE)
    # LOWER never matches across a newline, and a newline is no word character: one pass
    lower = set(LOWER.findall("\n".join(line for _, line in text)))
    parts = {
        "sure": "\n".join(sorted(sure)),
        "maybe": "\n".join(sorted(maybe)),
        "names": "\n".join(at),
        "name_lines": "\n".join(at.values()),
        "lower": "\n".join(sorted(lower)),
        "titles": "\n".join(sorted(t for t in headings | {_title(lines)} if t)),
        **terms_of(lines, text),
    }
    # items are never empty and never hold a newline: a blank line parts the sections
    return "\n\n".join(parts[k] for k in SECTIONS)


def unpack(packed: str) -> dict[str, str]:
    """source_names() as its sections, each a newline-joined list."""
    parts = packed.split("\n\n")
    if len(parts) != len(SECTIONS):
        raise ValueError(f"packed names have {len(parts)} sections, not {len(SECTIONS)}")
    return dict(zip(SECTIONS, parts, strict=True))


def _adjective(name: str) -> bool:
    """ "American", "Norwegian", "English": a word about a name, not one."""
    return " " not in name and name.casefold().endswith(("ian", "ish", "ese", "ican"))


def _title(lines: list[str]) -> str:
    first = next((line for line in lines if line.strip()), "")
    return first.strip("# \t").casefold()


def _inside(word: str, name: str, where: dict[str, list[int]], sources: Mapping[str, list[str]]) -> bool:
    """Whether every line naming `word` names it only as part of `name` ("Martin" in "Evan Martin")."""
    if word not in name.split():
        return False
    return all(
        not re.search(rf"\b{re.escape(word)}\b", sources[path][n - 1].replace(name, ""))
        for path, numbers in where.items()
        for n in numbers
    )
