"""The merge of every source's names and terms (candidates.py, phrases.py) as counts that a
build keeps: an edit takes away what its changed sources listed before and adds what they list
now, instead of going over every source's packed names again (a quarter of a one-source edit
at 10,000 sources). What the counts pick is decided again from them, exactly as a full merge
decides it; a key newly picked (a name a second source now writes) needs its lines in every
source: one pass over the packed names finds them, as a full merge's second pass does. The
verdicts that read source lines (a name's distinct uses, a word only ever inside a longer name)
are kept for as long as the lines they read stay the same.
"""

from __future__ import annotations

import marshal
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from wikic.build.candidates import MIN_SOURCES, SECTIONS, Candidate, _inside, source_names, unpack
from wikic.build.keptlines import LINES, Lines, Where, packed_lines
from wikic.build.mergekeys import Listed, changes, packed
from wikic.build.phrases import _cohesive, _longest, distinct_uses, lines_of, source_terms, unjoin

# Bump when the same packed names would merge differently (this module, candidates.py's and
# phrases.py's decisions): a kept merge of another version is never patched.
VERSION = 6
SINCE = 8  # more changed since the base than an eighth of the counted items (and than FEW): a new base
FEW = 64
COUNTED = ("sure", "maybe", "lower", "titles", "names", "used", "phrases")  # sections counted by source
EMPTY = dict.fromkeys(SECTIONS, "")  # a source without names (terms() reads no names)

# an entry of the kept merge: (field, key, key within), or (field, key, None) for a field of one level
At = tuple[str, str, "str | None"]


class Merge:
    """Every named source's packed names and terms, merged: how many sources list each item of
    each counted section, who marks each term and how, and the lines of every picked key."""

    def __init__(self) -> None:
        self.counts: dict[str, dict[str, int]] = {k: {} for k in COUNTED}
        # marked key -> source path -> form written; a kept merge's as marshalled bytes until asked
        self.marks: dict[str, dict[str, str] | bytes] = {}
        self.first: dict[str, str] = {}  # marked key -> the form of the first source marking it
        # kind -> picked key -> its lines: a dict while a patch changes them, else as Lines
        self.where: dict[str, dict[str, Where | Lines]] = {kind: {} for kind in LINES}
        self.uses: dict[str, dict[str, bool]] = {kind: {} for kind in LINES}  # distinct_uses verdicts
        self.inside: dict[str, tuple[list[str], bool]] = {}  # a word -> (longer names, inside one)
        self.dirty: set[tuple[str, str]] = set()  # (kind, key) whose lines changed: verdicts stale
        # source path -> the key of the facts merged (sourceplan.Memo); a kept merge's as two lists
        self.keys: Mapping[str, str] = {}
        self.patched = False  # the last plan's merge patched (merge_for), not merged from nothing
        self.delta: dict[str, dict[str, int]] = {"used": {}, "phrases": {}}  # counts changed by a patch
        self.remarked: set[str] = set()  # keys some source marks or no longer marks, by a patch
        self.token = ""  # the kept base's (dumps)
        self.since: dict[At, Any] = {}  # the entries changed since the base, as kept (None: gone)
        self.touched: set[At] = set()  # the entries a patch may have changed
        self.keyed: list[tuple[str, str]] = []  # the last candidates' (kind, key), in their order

    def add(self, path: str, parts: Mapping[str, str]) -> None:
        self._count(parts, 1)
        for key, form in zip(unjoin(parts["marks"]), unjoin(parts["forms"]), strict=True):
            marked = self._marked(key)
            if marked is None:
                marked = self.marks[key] = {}
            marked[path] = form
            self._unfirst(key)
            if self.patched:
                self.remarked.add(key)
                self.touched.add(("marks", key, None))
        for kind, lines in LINES.items():
            for key, numbers in lines_of(unjoin(parts[kind]), parts[lines], set(self.where[kind])).items():
                self._mutable(kind, key)[path] = numbers
                self.dirty.add((kind, key))
                self.touched.add(("where", kind, key))

    def remove(self, path: str, parts: Mapping[str, str]) -> None:
        self._count(parts, -1)
        for key in unjoin(parts["marks"]):
            marked = self._marked(key)
            if marked is None:
                raise KeyError(key)
            del marked[path]
            self.remarked.add(key)  # only a patch removes
            self.touched.add(("marks", key, None))
            self._unfirst(key)
            if not marked:
                del self.marks[key]
        for kind in LINES:
            where = self.where[kind]
            for key in unjoin(parts[kind]):
                if key in where and self._mutable(kind, key).pop(path, None) is not None:
                    self.dirty.add((kind, key))
                    self.touched.add(("where", kind, key))

    def _count(self, parts: Mapping[str, str], step: int) -> None:
        for section in COUNTED:
            counts, delta = self.counts[section], self.delta.get(section) if self.patched else None
            items = unjoin(parts[section])
            if self.patched:
                self.touched.update(("counts", section, item) for item in items)
            for item in items:
                n = counts.get(item, 0) + step
                if n:
                    counts[item] = n
                else:
                    del counts[item]
                if delta is not None:
                    delta[item] = delta.get(item, 0) + step

    def candidates(
        self, sources: Mapping[str, list[str]], parts: Mapping[str, Mapping[str, str]], min_sources: int
    ) -> list[Candidate]:
        """What a merge from nothing finds (candidates() below): `sources` the named sources' lines (read only
        where a verdict must be made again), `parts` their packed names (read only for a key
        newly picked), both in the sources' order."""
        rank = {path: i for i, path in enumerate(sources)}
        sure = self._sure()
        picked = {name for name in sure if self.counts["names"].get(name, 0) >= min_sources}
        where = self._lines("names", picked, parts, rank)
        found = [Candidate(n, where[n]) for n in sorted(picked) if self._uses("names", n, sources)]
        longer = [c.name for c in found if " " in c.name]
        found = [c for c in found if " " in c.name or not self._inside(c, longer, sources)]
        folded = {name.casefold() for name in sure}  # a heading "Evan Martin" is the name, not a term
        named = self._terms(sources, parts, rank).items()
        terms = [(t, *at) for t, at in named if t.casefold() not in folded]
        self.settle()
        self.keyed = [("names", c.name) for c in found] + [("phrases", phrase) for _, phrase, _ in terms]
        return found + [Candidate(t, at, "concept") for t, _, at in terms]

    def terms(
        self, sources: Mapping[str, list[str]], parts: Mapping[str, Mapping[str, str]], rank: dict[str, int]
    ) -> dict[str, Lines]:
        """What phrases.py's terms are: by the name some source marks them with, else as written."""
        return {name: at for name, (_, at) in self._terms(sources, parts, rank).items()}

    def _terms(
        self, sources: Mapping[str, list[str]], parts: Mapping[str, Mapping[str, str]], rank: dict[str, int]
    ) -> dict[str, tuple[str, Lines]]:
        """terms(), each with its key (the phrase as counted)."""
        where = self._lines("phrases", self._picked_phrases(), parts, rank)
        picked = set(where)
        found = {p: where[p] for p in sorted(picked) if self._uses("phrases", p, sources)}
        named: dict[str, tuple[str, Lines]] = {}
        for phrase, at in _longest(found).items():
            named[self._first_form(phrase, rank) or phrase[0].upper() + phrase[1:]] = (phrase, at)
        return named

    def _mutable(self, kind: str, key: str) -> Where:
        """The key's lines, to be changed: a kept one's decoded into a dict of its own."""
        lines = self.where[kind][key]
        if isinstance(lines, Lines):
            lines = self.where[kind][key] = dict(lines.where)
        return lines

    def _read(self, kind: str, key: str) -> Where:
        lines = self.where[kind][key]
        return lines.where if isinstance(lines, Lines) else lines

    def _marked(self, key: str) -> dict[str, str] | None:
        """Who marks the key and how, decoded when first asked for (a kept merge holds each
        key's as bytes: 14 MB at 100,000 sources, most of which an edit never asks for)."""
        marked = self.marks.get(key)
        if isinstance(marked, bytes):
            marked = self.marks[key] = marshal.loads(marked)
        return marked

    def _unfirst(self, key: str) -> None:
        """A source marks the key anew or no longer: its first form is found again if asked."""
        if self.first.pop(key, None) is not None:
            self.touched.add(("first", key, None))

    def _first_form(self, key: str, rank: dict[str, int]) -> str:
        """The form of the first source (in the sources' order) that marks the key ("" where
        none does): kept from the last merge while no source marks it anew or stops (_unfirst)."""
        if key not in self.marks:
            return ""
        if key in self.first:
            return self.first[key]
        marked = self._marked(key)
        assert marked is not None
        self.first[key] = marked[min(marked, key=rank.__getitem__)]
        self.touched.add(("first", key, None))
        return self.first[key]

    def _picked_phrases(self) -> set[str]:
        """The phrases two or more sources write that some source marks or whose words stand
        together; patched, those the last merge picked with only the phrases decided again whose
        count or marks the patch changed, or whose words' counts it changed the way that can
        change it: a word written less can only make a phrase stand together (_cohesive), a
        word written more only make it not (a source deleted asks of those not picked alone)."""
        counts, words = self.counts["phrases"], self.counts["used"]
        if self.patched:
            check = {p for p, d in self.delta["phrases"].items() if d} | self.remarked
            picked = set(self.where["phrases"])
            fewer = {w for w, d in self.delta["used"].items() if d < 0}
            more = {w for w, d in self.delta["used"].items() if d > 0}
            if fewer:
                check |= {p for p in counts if p not in picked and not fewer.isdisjoint(p.split())}
            if more:
                check |= {p for p in picked if not more.isdisjoint(p.split())}
        else:
            check, picked = set(counts), set()
        for phrase in check:
            used = counts.get(phrase, 0)
            if used >= MIN_SOURCES and (phrase in self.marks or _cohesive(phrase, used, words)):
                picked.add(phrase)
            else:
                picked.discard(phrase)
        return picked

    def _sure(self) -> set[str]:
        """The names written as names; "Bazel is" only ever opens sentences: a name too where it
        is never written "bazel" and titles a source or a section (a sentence-opening "Fact" or
        "Despite" does not)."""
        lower, titles = self.counts["lower"], self.counts["titles"]
        maybe = {m for m in self.counts["maybe"] if m.casefold() not in lower and m.casefold() in titles}
        return set(self.counts["sure"]) | maybe

    def _lines(
        self, kind: str, picked: set[str], parts: Mapping[str, Mapping[str, str]], rank: dict[str, int]
    ) -> dict[str, Lines]:
        """The lines of every picked key, those of a key newly picked from every source's
        packed names; the keys no longer picked are let go, with their verdicts. Each as Lines:
        those a patch did not change stay marshalled (an edit reads few of 8 MB at 100,000)."""
        where, uses = self.where[kind], self.uses[kind]
        for key in set(where) - picked:
            del where[key]
            uses.pop(key, None)
            self.touched.update((("where", kind, key), ("uses", kind, key)))
        missing = picked - set(where)
        if missing:
            for key in missing:
                where[key] = {}
                self.dirty.add((kind, key))
            having = getattr(parts, "having", None)
            holding = having(missing) if having is not None else None
            for path in parts if holding is None else sorted(holding, key=rank.__getitem__):
                source = parts[path]
                for key, numbers in lines_of(unjoin(source[kind]), source[LINES[kind]], missing).items():
                    self._mutable(kind, key)[path] = numbers
        for k, key in self.dirty:
            if k == kind and key in where:  # a source added again goes last: back in sources' order
                where[key] = dict(sorted(where[key].items(), key=lambda kv: rank[kv[0]]))
                self.touched.add(("where", kind, key))
        found: dict[str, Lines] = {}
        for key, lines in list(where.items()):
            found[key] = lines if isinstance(lines, Lines) else Lines.of(lines)
            where[key] = found[key]  # one marshalled form, shared with the plan that keeps it (Kept)
        return found

    def _uses(self, kind: str, key: str, sources: Mapping[str, list[str]]) -> bool:
        uses = self.uses[kind]
        if key not in uses or (kind, key) in self.dirty:
            uses[key] = distinct_uses(key, self._read(kind, key), sources)
            self.touched.add(("uses", kind, key))
        return uses[key]

    def _inside(self, word: Candidate, longer: list[str], sources: Mapping[str, list[str]]) -> bool:
        """Whether a one-word name is only ever written inside a longer name ("Martin" in
        "Evan Martin"), kept while its lines and the longer names holding it stay the same."""
        holding = [name for name in longer if word.name in name.split()]
        kept = self.inside.get(word.name)
        if kept is None or kept[0] != holding or ("names", word.name) in self.dirty:
            lines = self._read("names", word.name)
            kept = (holding, any(_inside(word.name, o, lines, sources) for o in holding))
            self.inside[word.name] = kept
            self.touched.add(("inside", word.name, None))
        return kept[1]

    def settle(self) -> None:
        """Done deciding: every verdict is made from the lines as they are now."""
        self.dirty.clear()
        self.delta, self.remarked = {"used": {}, "phrases": {}}, set()
        names = self.where["names"]
        self.touched.update(("inside", w, None) for w in self.inside if w not in names)
        self.inside = {w: v for w, v in self.inside.items() if w in names}

    def dumps(self) -> bytes:
        """The whole merge, as a new base."""
        self.token, self.since, self.touched = secrets.token_hex(8), {}, set()
        marks = {key: v if isinstance(v, bytes) else marshal.dumps(v) for key, v in self.marks.items()}
        where = {kind: {key: packed_lines(v) for key, v in at.items()} for kind, at in self.where.items()}
        kept = [VERSION, self.token, packed(self.keys), self.counts, marks, where, self.uses, self.inside]
        return marshal.dumps([*kept, self.first])

    def _fields(self) -> dict[str, Any]:
        names = ("keys", "counts", "marks", "where", "uses", "inside", "first")
        return {name: getattr(self, name) for name in names}

    def kept(self) -> tuple[bytes, bytes | None]:
        """What to keep: a new base and None, or b"" and what changed since the kept base (its
        entries that a patch touched, as they are now): an edit then writes those, not a
        merge of 10,000 sources."""
        if not self.patched or not self.token:
            return self.dumps(), None
        fields = self._fields()
        for at in self.touched:
            if at[0] == "marks":  # decoded: a patch touches only the keys it asked for
                self.since[at] = self._marked(at[1])
                continue
            table = fields[at[0]] if at[2] is None else fields[at[0]].get(at[1], {})
            value = table.get(at[1] if at[2] is None else at[2])
            self.since[at] = packed_lines(value) if at[0] == "where" and value is not None else value
        self.touched = set()
        gone = any(at[0] == "keys" and value is None for at, value in self.since.items())
        if gone or len(self.since) > max(FEW, sum(map(len, self.counts.values())) // SINCE):
            return self.dumps(), None  # a source deleted: no byte of it left in state.db (forget.py)
        return b"", marshal.dumps([VERSION, self.token, self.since])

    @classmethod
    def loads(cls, blob: bytes, since: bytes | None = None) -> Merge | None:
        """A kept merge (the base `blob`, patched by what changed `since`), or None where it is
        of another version or unreadable (merge again)."""
        state, more = _parts(blob, 9), _parts(since, 3) if since else None
        if state is None or (since and (more is None or more[1] != state[1])):
            return None
        merge = cls()
        _, merge.token, keys, merge.counts, merge.marks, where, merge.uses, *rest = state
        merge.keys = Listed(*keys)
        merge.where = {kind: {key: Lines(b) for key, b in table.items()} for kind, table in where.items()}
        merge.inside, merge.first = rest
        merge.since, fields = more[2] if more else {}, merge._fields()
        for (name, key, within), value in merge.since.items():
            table: dict[str, Any] = fields[name]
            if within is not None:
                table, key = table.setdefault(key, {}), within
            if value is None:
                table.pop(key, None)
            else:
                table[key] = Lines(value) if name == "where" else value
        return merge


def _parts(blob: bytes, length: int) -> list[Any] | None:
    try:
        parts: list[Any] = marshal.loads(blob)
    except (EOFError, ValueError, TypeError):
        return None
    if not isinstance(parts, list) or len(parts) != length or parts[0] != VERSION:
        return None
    return parts


Old = Callable[[str], "tuple[str, str] | None"]  # a source path -> its last plan's (key, packed names)


def merge_for(
    kept: bytes | None,
    keys: dict[str, str],
    parts: Mapping[str, Mapping[str, str]],
    old: Old,
    since: bytes | None = None,
) -> Merge:
    """The merge of `parts` (`keys`: their facts' keys, in the sources' order): the `kept`
    merge (and what changed `since`) with what changed taken away and added, where it merged
    the older facts `old` gives; else merged anew (a first build, --force, a plan killed
    before it kept its merge, more than half of the sources changed)."""
    merge = Merge.loads(kept, since) if kept else None
    if merge is None:
        return _fresh(keys, parts)
    merge.patched = True  # from here on, what the patch changes is counted (Merge.delta)
    changed, gone = changes(merge.keys, keys)
    if 2 * (len(changed) + len(gone)) > len(keys):
        return _fresh(keys, parts)
    for path in gone + [p for p in changed if p in merge.keys]:
        before = old(path)
        if before is None or before[0] != merge.keys[path]:
            return _fresh(keys, parts)
        try:
            merge.remove(path, unpack(before[1]))
        except (KeyError, ValueError):  # not what was merged after all
            return _fresh(keys, parts)
    for path in changed:
        merge.add(path, parts[path])
    merge.keys = dict(keys)
    merge.touched.update(("keys", path, None) for path in [*changed, *gone])
    return merge


def _fresh(keys: dict[str, str], parts: Mapping[str, Mapping[str, str]]) -> Merge:
    merge = merged(parts)
    merge.keys = dict(keys)
    return merge


def merged(parts: Mapping[str, Mapping[str, str]]) -> Merge:
    """The merge of these sources' packed names from nothing."""
    merge = Merge()
    for path, source in parts.items():
        merge.add(path, source)
    return merge


def candidates(
    sources: Mapping[str, list[str]],
    min_sources: int = MIN_SOURCES,
    facts: Mapping[str, str] | None = None,
) -> list[Candidate]:
    """Names mentioned in `min_sources` or more sources, with the lines that name them; a
    single word only where it is not always part of a longer name; and the terms (phrases.py).
    `facts`: each source's source_names(), where already known (a build's memo): only the merge
    runs then, and it reads the lines of only the few sources it checks a name's uses in."""
    known = facts or {}
    parts = Packed({path: known.get(path) or source_names(sources[path]) for path in sources})
    return merged(parts).candidates(sources, parts, min_sources)


def terms(
    sources: Mapping[str, list[str]], facts: Mapping[str, Mapping[str, str]] | None = None
) -> dict[str, Lines]:
    """The terms of a set of sources (path -> lines), each with the lines, per source, that
    write it; named as some source marks it ("Early cutoff"), else as written ("Rock band").
    `facts`: each source's phrases.source_terms(), where already known."""
    made = facts if facts is not None else {path: source_terms(lines) for path, lines in sources.items()}
    parts = {path: {**EMPTY, **made[path]} for path in sources}
    rank = {path: i for i, path in enumerate(sources)}
    return merged(parts).terms(sources, parts, rank)


class Packed(Mapping[str, Mapping[str, str]]):
    """Each source's packed names and terms, unpacked as they are asked for: the merge goes
    over them twice, and 100,000 sources' lists held at once took 0.6 GB."""

    def __init__(self, packed: Mapping[str, str]) -> None:
        self.packed = packed

    def __getitem__(self, path: str) -> dict[str, str]:
        return unpack(self.packed[path])

    def having(self, keys: Iterable[str]) -> set[str] | None:
        """The sources whose packed names may hold one of these keys, where the packed names
        can be searched (replan._Packed); None: every source may."""
        having = getattr(self.packed, "having", None)
        found = None if having is None else having(keys)
        return None if found is None else set(found)

    def __iter__(self) -> Iterator[str]:
        return iter(self.packed)

    def __len__(self) -> int:
        return len(self.packed)
