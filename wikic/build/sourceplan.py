"""What the plan makes of one source alone, kept in state.db by a key over everything it
reads, so that an edit plans again only the sources it changed: the source's summary lines,
the notes of the topics its digest names, its lines naming the topics pinned in schema.yaml,
and the notes of its lines no other page shows. plan.py merges them across sources.
"""

from __future__ import annotations

import json
import marshal
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from wikic import __version__
from wikic.build.candidates import MIN_SOURCES, Candidate, is_topic_name, searched, source_names
from wikic.build.digest import says_more, supporting_lines
from wikic.build.merge import Merge, Packed, merge_for
from wikic.build.notes import chunks, claim_text, is_text, notes_of, section_of, shorten
from wikic.hashing import fingerprint, quick_fingerprint, text_hash
from wikic.state import Planned
from wikic.wiki.overlap import content_words
from wikic.wiki.support import check_against, sentences

if TYPE_CHECKING:
    from wikic.build.prefacts import FactsAhead

# Bump when the same inputs would plan differently (this module, notes.py, digest.says_more
# and supporting_lines, candidates.is_topic_name, support.check_against): every memo is then
# stale. wikic's own version is in the key too, so an upgrade never reuses an older plan.
VERSION = 4
# "William Winter (politician)": the subject, then what tells it apart
DISAMBIGUATED = re.compile(r"\s*\([^()]*\)\s*$")
MIN_FACT_WORDS = 3  # content words a line needs to count as stating a fact

Said = list[tuple[str, list[list[int]]]]  # summary sentences with the line ranges they cite


class Claim(NamedTuple):  # a tuple: a plan decodes 60,000 of them at 10,000 sources
    text: str
    source: str
    start: int
    end: int
    section: str = ""  # the heading over its lines: a note under "## Content hashing" defines it


class SourceInfo:
    """A source as the plan reads it. A source `settled` since the last plan (the build found
    it as that plan did: settled.py) comes without its digest, its title or its lines: the
    memo has its facts, title, line count and fallback flag, and its lines are read only if
    the plan asks for them. What a full plan holds of 100,000 sources is kept compact: the
    digest may come packed (marshal, decoded when asked) or spilled (wikic/spill.py: a callable
    that reads it back), the lines as the source's text (split when asked) or spilled (`load`
    reads them back: `count` given), and release() lets both go where the plan is done with
    them."""

    __slots__ = (
        *("path", "title", "count", "_lines", "_text", "_load", "_spilled"),
        *("_digest", "_packed", "_settled", "_fallback", "_fell"),
    )

    def __init__(
        self,
        path: str,
        title: str,
        lines: list[str] | None,
        digest: dict[str, Any] | bytes | Callable[[], bytes] | None,
        load: Callable[[], list[str]] | None = None,
        text: str | None = None,
        count: int | None = None,
    ) -> None:
        self.path, self.title = path, title
        self._lines, self._text, self._load = lines, text, load
        # read, its text spilled (wikic/spill.py): `load` reads its lines from there, not again
        # from sources/, so that they are not held as text once let go
        self._spilled = count is not None
        self._digest = digest
        self._packed = digest if isinstance(digest, bytes) or callable(digest) else None
        self._settled = digest is None
        # its lines, as the memo has them too
        if count is None:
            count = len(lines) if lines is not None else len(split_lines(text)) if text is not None else 0
        self.count = count
        self._fallback = False  # a settled source's, from the memo
        self._fell: bool | None = None  # another's, from its digest, once read

    @property
    def settled(self) -> bool:
        return self._settled

    @property
    def digest(self) -> dict[str, Any] | None:
        digest = self._digest
        if callable(digest):  # packed and spilled: read back
            digest = digest()
        if isinstance(digest, bytes):
            digest = self._digest = marshal.loads(digest)
        return digest

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            if self._text is not None:
                self._lines = split_lines(self._text)
            else:
                assert self._load is not None, f"{self.path}: settled without a way to read it"
                self._lines = self._load()
        return self._lines

    @property
    def fallback(self) -> bool:
        """Its digest was made without the model (it feeds no topic page from structure)."""
        if self._settled:
            return self._fallback
        if self._fell is None:
            self._fell = bool((self.digest or {}).get("fallback"))
        return self._fell

    def release(self) -> None:
        """Let go of what the plan holds of the source until it asks again: its lines as a list
        (kept as one string, a third of their size, and split again when asked) and its digest
        decoded (where it came packed: decoded again when asked)."""
        if self._packed is not None and isinstance(self._digest, dict):
            self._fell = self.fallback
            self._digest = self._packed
        if self._lines:  # a settled source's, read: kept as text too, not read again
            if self._text is None and not self._spilled:
                self._text = "\n".join(self._lines) + "\n"
            self._lines = None


def split_lines(text: str) -> list[str]:
    """A text's lines, as sources.read.Source.lines splits them (a final newline ends the last)."""
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


@dataclass(frozen=True)
class Settings:
    """What of schema.yaml one source's facts read."""

    mode: str  # prose or notes (plan.write_mode)
    threshold: int  # lint.citation_threshold
    pinned: list[list[str]] = field(default_factory=list)  # each pinned topic's name and aliases

    def fingerprint(self) -> str:
        return fingerprint([VERSION, __version__, self.mode, self.threshold, self.pinned])


@dataclass
class SourceFacts:
    said: Said
    topics: list[tuple[str, str, list[Claim]]]  # the digest's topics that can title a page: name, type, notes
    mentions: list[list[Claim]]  # per pinned topic (in schema order): the lines that name it
    structure: str = ""  # candidates.source_names(): its names and terms, packed


def claim_at(lines: list[str], path: str, a: int, b: int) -> Claim:
    # one string per heading, not one per note under it (a full plan holds every note)
    return Claim(claim_text(lines, a, b), path, a, b, sys.intern(section_of(lines, a)))


def source_facts(src: SourceInfo, settings: Settings, names: str | None = None) -> SourceFacts:
    """`names`: its names and terms (source_names), where they were made ahead (prefacts.py)."""
    said = summary(src, settings.threshold) if settings.mode == "prose" else lead(src)
    topics = [
        (str(t["name"]), sys.intern(str(t["type"])), _claims(t["name"], t["lines"], src))  # a few types
        for t in (src.digest or {}).get("topics", [])
        if is_topic_name(t["name"])  # else its lines stay on the source's page
    ]
    mentions = [_mentions(pinned, src) for pinned in settings.pinned]
    return SourceFacts(said, topics, mentions, source_names(src.lines) if names is None else names)


def _claims(name: str, ranges: list[list[int]], src: SourceInfo) -> list[Claim]:
    """The digest's lines for a topic as claims, a note per line. A line that only repeats the
    name (a text file's title line, which digests cached before this check may point at) is no
    claim; when nothing else is left, the source's lines that name the topic are, or, for the
    source's own subject, its lead."""
    numbers = [n for a, b in ranges for n in range(a, b + 1)]
    found = [claim_at(src.lines, src.path, a, b) for a, b in notes_of(src.lines, numbers)]
    found = [c for c in found if says_more(c.text, name)]
    if not found:
        spans = notes_of(src.lines, supporting_lines(name, src.lines))
        found = [claim_at(src.lines, src.path, a, b) for a, b in spans]
    if not found and _words(name) == _words(DISAMBIGUATED.sub("", src.title)):
        # "William Winter", the subject of "William Winter (politician)", whose lead says
        # "William Forrest Winter (born 1923) is ...": the lead is about it
        lead = [n for n, line in enumerate(src.lines, 1) if is_text(line) and line.strip() != src.title]
        found = [claim_at(src.lines, src.path, a, b) for a, b in notes_of(src.lines, lead[:1])]
    return found


def _words(name: str) -> list[str]:
    return re.findall(r"\w+", name.casefold())


def summary(src: SourceInfo, threshold: int) -> Said:
    """The digest's summary sentences with the lines that support them; a summary cached as
    plain text is checked against the whole source's best lines. When none is left, the
    source's own lead (after its title), cited to its lines."""
    raw = (src.digest or {}).get("summary") or []
    kept = [(str(s["text"]), s["lines"]) for s in raw if isinstance(s, dict) and s.get("lines")]
    if isinstance(raw, str) and sum(map(str.isalpha, raw)) >= 20:
        numbers = [n for n, line in enumerate(src.lines, 1) if is_text(line) and line.strip() != src.title]
        picked, verdict = check_against(raw, [src.lines[n - 1] for n in numbers], threshold, limit=3)
        kept = [(raw, [[numbers[i], numbers[i]] for i in picked])] if verdict.ok else []
    return kept or lead(src)


def lead(src: SourceInfo) -> Said:
    """The source's own first sentences (after its title), cited to their lines."""
    first = [n for n, line in enumerate(src.lines, 1) if is_text(line) and line.strip() != src.title]
    for a, b in notes_of(src.lines, first[:1]):
        said = sentences(claim_text(src.lines, a, b))[:2]
        return [(shorten(" ".join(said), 400), [[a, b]])] if said else []
    return []


def structure_notes(src: SourceInfo, name: str, numbers: list[int]) -> list[Claim]:
    """A candidate's notes in one source (candidates.py): its lines that say more than it."""
    notes = [claim_at(src.lines, src.path, a, b) for a, b in notes_of(src.lines, numbers)]
    return [c for c in notes if says_more(c.text, name)]


def _mentions(names: list[str], src: SourceInfo) -> list[Claim]:
    """Lines of the source that name a pinned topic: pinned topics are grounded by code too."""
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in names if n) + r")\b", re.IGNORECASE)
    numbers = [n for n, line in enumerate(src.lines, start=1) if pattern.search(line) and is_text(line)]
    return [claim_at(src.lines, src.path, a, b) for a, b in notes_of(src.lines, numbers)]


def other_notes(src: SourceInfo, said: Said, shown: dict[int, int]) -> list[Claim]:
    """What of the source's lines no other page shows (`shown`: line -> characters of it some
    topic page or the summary shows as they are): lines none carries, and the rest of a line
    shown cut short. Every fact of a source is somewhere in the wiki's text."""
    shown = dict(shown)
    for text, ranges in said:  # the lead, as it is
        for a, b in ranges:
            if a == b and claim_text(src.lines, a, a, limit=1 << 30).startswith(text):
                shown[a] = max(shown.get(a, 0), len(text))
    whole: list[int] = []
    rests: list[Claim] = []
    for n, line in enumerate(src.lines, start=1):
        if not is_text(line) or len(content_words(line)) < MIN_FACT_WORDS:
            continue
        full = claim_text(src.lines, n, n, limit=1 << 30)
        size = shown.get(n, 0)
        if size == 0:
            whole.append(n)
        elif size < len(full) and len(content_words(full[size:])) >= MIN_FACT_WORDS:
            rests += [Claim(t, src.path, n, n) for t in chunks(full[size:].strip())]
    notes = []
    for a, b in notes_of(src.lines, whole):
        notes += [Claim(t, src.path, a, b) for t in chunks(claim_text(src.lines, a, b, limit=1 << 30))]
    return sorted(notes + rests, key=lambda c: (c.start, c.end))


Made = dict[str, tuple[str, str]]  # source path -> (key, JSON) of what a plan made anew
Save = Callable[[str, Made], None]  # ("facts", "notes" or "struct", rows): into the state


class Memo:
    """Each source's facts and other notes as the last plan made them, by key; `rows` from
    state.db (empty for a build that plans everything again, --force). What this plan makes
    anew goes to `save` a thousand rows at a time (held in `pending` without one: --dry-run),
    so that a first plan of 100,000 sources never holds all their JSON at once."""

    FLUSH = 1000
    BEFORE = 2000  # the changed sources whose older facts are held for the merge's patch, at most

    def __init__(
        self,
        rows: Mapping[str, Planned],
        settings: Settings,
        save: Save | None = None,
        kept: bytes | None = None,
        since: bytes | None = None,
        folder: Path | None = None,
    ) -> None:
        self.rows = rows
        self.folder = folder  # where a full plan spills what it holds for later (the build state's)
        self.kept = kept, since  # the last plan's merge of names and terms, and since (merge.py)
        self.merge: Merge | None = None  # this plan's, to keep
        self._merged: tuple[bytes, bytes | None] | None = None  # what is kept of it, once let go
        self.before: dict[str, tuple[str, str]] = {}  # a changed source -> its last (key, packed names)
        self.settings = settings
        self.settings_fp = settings.fingerprint()
        self.save = save
        self.keys: dict[str, str] = {}  # path -> its facts' key in this plan
        # "names" after "facts": of the facts saved (the row's names let go as its facts change)
        self.pending: dict[str, Made] = {"facts": {}, "names": {}, "notes": {}, "struct": {}}
        self.fresh: set[str] = set()  # the sources planned anew (their facts or notes)
        self.ahead: FactsAhead | None = None  # facts made ahead, during the digest (prefacts.py)

    def facts(self, src: SourceInfo, apart: tuple[str, str] | None = None) -> SourceFacts:
        """The source's facts; a settled source's from its row as they are (the pipeline
        settles only sources whose digest and text are as that row's plan found them).
        `apart`: what apart() made of the source, elsewhere."""
        row = self.rows.get(src.path)
        if apart is None and self.ahead is not None and not src.settled:
            apart = self.ahead.take(src.path)
        if src.settled:
            assert row is not None and row.key, f"{src.path}: settled without a plan to reuse"
            key = row.key
        else:
            key = apart[0] if apart is not None else _facts_key(src, self.settings_fp)
        self.keys[src.path] = key
        if row is not None and row.key != key and row.key and len(self.before) < self.BEFORE:
            self.before[src.path] = (row.key, row.facts.partition("\n")[2])
        if row is not None and row.key == key:
            data, structure = _parts(row.facts)
            src.title, src.count, src._fallback = data["title"], data["count"], data["fallback"]
            return _facts_from(data, src.path, structure)
        if apart is not None:
            text = apart[1]
            data, structure = _parts(text)
            src._fell = bool(data["fallback"])  # as its digest says: not decoded here to know it
            made = _facts_from(data, src.path, structure)
        else:
            made = source_facts(src, self.settings, self._names(src))
            text = _facts_text(src, made)
        self._put("facts", src.path, key, text)
        if self.save is not None:  # kept apart to be searched (state planned_names): never read back
            self._put("names", src.path, key, searched(made.structure))
        return made

    def apart(self, src: SourceInfo) -> tuple[str, str] | None:
        """What facts() makes of a source that is not settled, as a forked child can make it
        (plan.py, prefacts.py): made_apart(); None for one settled or made ahead."""
        if self.ahead is not None and self.ahead.has(src.path):
            return None
        return made_apart(src, self.settings, self.settings_fp, self._names(src))

    def _names(self, src: SourceInfo) -> str | None:
        """The source's names made ahead, where they were (prefacts.py)."""
        return self.ahead.names.get(src.path) if self.ahead is not None else None

    def cost(self, src: SourceInfo) -> int:
        """What making the source's facts here costs, about (a settled source's come from its
        row, those made ahead from there; its names made ahead are about half of the rest)."""
        if src.settled or (self.ahead is not None and self.ahead.has(src.path)):
            return 1
        return src.count // 2 + 10 if self._names(src) is not None else src.count + 20

    def candidates(self, lines: Mapping[str, list[str]], packed: Mapping[str, str]) -> list[Candidate]:
        """The names and terms of the named sources (`lines`, `packed`: their packed names), from
        the last plan's merge patched where it can be (merge.py)."""
        parts = Packed(packed)
        keys = {path: self.keys[path] for path in lines}
        kept, self.kept = self.kept, (None, None)  # let go once loaded: 30 MB at 100,000 sources
        self.merge, self._merged = merge_for(kept[0], keys, parts, self._older, kept[1]), None
        del kept
        return self.merge.candidates(lines, parts, MIN_SOURCES)

    def let_go_merge(self) -> None:
        """The merge turned into what the build keeps of it, and let go: a full plan's counts
        every name and term of every source (100 MB at 100,000 sources), which the rest of the
        plan does not read (a patched plan's does: replan.py)."""
        if self.merge is not None:
            self._merged, self.merge = self.merge.kept(), None

    def merge_kept(self) -> tuple[bytes, bytes | None] | None:
        """What to keep of this plan's merge (Merge.kept); None where it made none."""
        return self.merge.kept() if self.merge is not None else self._merged

    def _older(self, path: str) -> tuple[str, str] | None:
        if path in self.before:
            return self.before[path]
        row = self.rows.get(path)
        return (row.key, row.facts.partition("\n")[2]) if row is not None else None

    def structure(self, src: SourceInfo, items: list[tuple[str, str, list[int]]]) -> list[list[Claim]]:
        """The notes of the source's lines that name each candidate of `items` (its name, its
        cluster, the line numbers), as plan._from_structure takes them: kept by key, so that a
        plan reads no unchanged source's lines for them."""
        key = quick_fingerprint([self.keys[src.path], items])
        row = self.rows.get(src.path)
        if row is not None and row.struct_key == key:
            return [[_claim_from(c, src.path) for c in claims] for claims in json.loads(row.struct)]
        made = [structure_notes(src, name, numbers) for name, _, numbers in items]
        text = json.dumps([[_claim_json(c) for c in claims] for claims in made], ensure_ascii=False)
        self._put("struct", src.path, key, text)
        return made

    def other_notes(
        self, src: SourceInfo, said: Said, shown: dict[int, int], apart: tuple[str, str] | None = None
    ) -> list[Claim]:
        """The source's other notes (sourceplan.other_notes); `apart`: what notes_apart() made
        of them, elsewhere."""
        key = apart[0] if apart is not None else self._notes_key(src, shown)
        row = self.rows.get(src.path)
        if row is not None and row.notes_key == key:
            return [_claim_from(c, src.path) for c in json.loads(row.notes)]
        if apart is not None:
            text = apart[1]
            made = [_claim_from(c, src.path) for c in json.loads(text)]
        else:
            made = other_notes(src, said, shown)
            text = json.dumps([_claim_json(c) for c in made], ensure_ascii=False)
        self._put("notes", src.path, key, text)
        return made

    def notes_apart(self, src: SourceInfo, said: Said, shown: dict[int, int]) -> tuple[str, str]:
        """What other_notes() makes of a source, as a forked child can make it (apart())."""
        made = other_notes(src, said, shown)
        return self._notes_key(src, shown), json.dumps([_claim_json(c) for c in made], ensure_ascii=False)

    def _notes_key(self, src: SourceInfo, shown: dict[int, int]) -> str:
        return quick_fingerprint([self.keys[src.path], sorted(shown.items())])

    def _put(self, what: str, path: str, key: str, text: str) -> None:
        self.pending[what][path] = (key, text)
        self.fresh.add(path)
        if len(self.pending[what]) >= self.FLUSH:
            self.flush()

    def flush(self) -> None:
        if self.save is None:
            return
        for what, made in self.pending.items():
            if made:
                self.save(what, made)
                made.clear()

    def gone(self, live: Iterable[str]) -> list[str]:
        return sorted(set(self.rows) - set(live))


def made_apart(
    src: SourceInfo, settings: Settings, settings_fp: str, names: str | None = None
) -> tuple[str, str] | None:
    """A source's facts as Memo.facts makes them, where a forked child can make them: their key
    and their text as a row keeps them, reading no row (the state's database is the parent's
    own). None for a settled source. `names`: as source_facts takes them."""
    if src.settled:
        return None
    return _facts_key(src, settings_fp), _facts_text(src, source_facts(src, settings, names))


def _facts_key(src: SourceInfo, settings_fp: str) -> str:
    lines = text_hash("\n".join(src.lines))
    return quick_fingerprint([settings_fp, src.path, src.title, lines, src.digest])


def _facts_text(src: SourceInfo, made: SourceFacts) -> str:
    data = {"title": src.title, "count": src.count, "fallback": src.fallback, **_facts_json(made)}
    return json.dumps(data, ensure_ascii=False) + "\n" + made.structure


def _claim_json(c: Claim) -> list[Any]:
    return [c.text, c.start, c.end, c.section] if c.section else [c.text, c.start, c.end]


def _claim_from(row: list[Any], path: str) -> Claim:
    return Claim(row[0], path, row[1], row[2], sys.intern(row[3]) if len(row) > 3 else "")


def _parts(text: str) -> tuple[dict[str, Any], str]:
    """A row's facts: their JSON decoded, and the packed names and terms after it."""
    facts, _, structure = text.partition("\n")  # JSON never holds a raw newline
    return json.loads(facts), structure


def _facts_json(f: SourceFacts) -> dict[str, Any]:
    return {
        "said": f.said,
        "topics": [[name, kind, [_claim_json(c) for c in claims]] for name, kind, claims in f.topics],
        "mentions": [[_claim_json(c) for c in claims] for claims in f.mentions],
    }


def _facts_from(data: dict[str, Any], path: str, structure: str) -> SourceFacts:
    return SourceFacts(
        [(text, ranges) for text, ranges in data["said"]],
        [
            (name, sys.intern(kind), [_claim_from(c, path) for c in claims])
            for name, kind, claims in data["topics"]
        ],
        [[_claim_from(c, path) for c in claims] for claims in data["mentions"]],
        structure,
    )
