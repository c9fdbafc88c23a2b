"""Sources settled since the last finished build: found by stat as that build read them,
with every other input of their digests and plans unchanged, they are neither read, nor
digested, nor planned again; the plan takes what it made of them from its memo and reads
their lines only where it asks for them (sourceplan.SourceInfo). An edit of one source
among 10,000 then reads one file, not 10,000 (issue 17).

A build marks what it read its sources with (Meta.SETTLED) only once it has finished: the
mark is dropped when a build starts, so that a build killed between its digests and its
plan leaves none, and the next one reads every source again.
"""

from __future__ import annotations

import bisect
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from itertools import compress
from pathlib import Path
from typing import Any

from wikic import __version__
from wikic.build import digest, sourceplan
from wikic.errors import SourceError
from wikic.hashing import digest as hash_bytes
from wikic.hashing import fingerprint
from wikic.sources.formats import format_of
from wikic.sources.scan import SourceFile, Walked
from wikic.state import Meta, State
from wikic.state.build import ActionRecords

# A source changed this close to the start of the build that read it may have changed again
# within the same mtime tick, at the same size, after it was read ("racily clean", as git
# says): it is read again.
RACY_NS = 100_000_000


def inputs_mark(schema_bytes: bytes, template: str, models: list[str]) -> str:
    """Everything besides a source's own bytes that its digests and plan read: wikic,
    schema.yaml, the digest template, the models (schema.yaml's, privacy.local_model's)."""
    return fingerprint(
        [__version__, sourceplan.VERSION, digest.VERSION, hash_bytes(schema_bytes), template, models]
    )


class Listing:
    """The sources of one build: those settled (path -> the hash the last build read), the
    others as listed (SourceFile, sorted), the listing's errors, and every path in order."""

    def __init__(
        self,
        settled: dict[str, str],
        files: list[SourceFile],
        errors: list[SourceError],
        known: Callable[[str], SourceFile],  # a settled source's file, made when asked for
        order: list[str] | None = None,  # every path, sorted (None: made here)
    ) -> None:
        self.settled, self.files, self.errors, self.known = settled, files, errors, known
        self.by_path = {f.path: f for f in files}
        if order is None:
            order = list(settled)  # in path order (a record is kept sorted)
            if len(files) < 64:  # an edit's few: put in their places
                for f in files:
                    bisect.insort(order, f.path)
            else:
                order = sorted(order + list(self.by_path))
        self.order = order

    def file(self, path: str) -> SourceFile:
        """The source `path` as this build lists it."""
        found = self.by_path.get(path)
        return found if found is not None else self.known(path)


class Settled:
    """What the last finished build read, as the build starting now finds it.

    The last build's record (Meta.SETTLED) holds, beside what it read with, the walk's line
    (`path<TAB>size<TAB>mtime_ns`) and the hash of every source that it left settled for the
    next: a build finds the settled ones by comparing those lines with its own walk's, whole
    and at C speed (sets), and lists, reads and checks by stat only the others."""

    def __init__(self, state: State, mark: str, enabled: bool) -> None:
        self.state, self.mark = state, mark
        self.started = time.time_ns()  # before any source is read
        saved: dict[str, Any] = _saved(state.get_meta(Meta.SETTLED)) if enabled else {}
        self.usable = saved.get("mark") == mark
        self.since: int = saved.get("started", 0)
        self.failed = set(saved.get("failed", []))
        self.count: int | None = saved.get("count") if self.usable else None  # sources in the record
        self.payload = ""  # their lines, paths and hashes (Meta.SETTLED_LINES), after a line of `lines`
        self.token = ""  # those lines' (the record names them), where the listing went by them
        # the sources whose line or hash is not the base lines' since (None: not settled)
        self.delta: dict[str, list[str] | None] = saved.get("delta", {}) if self.usable else {}
        self.base: list[str] | None = None  # the paths of the base lines, where listed by them
        if self.count is not None:
            token, _, self.payload = (state.get_meta(Meta.SETTLED_LINES) or "").partition("\n")
            self.count = self.count if token == saved.get("lines") else None
            self.token = token
        self.parts: dict[str, int] = saved.get("parts", {})  # of those, the digested in parts (not 1)
        self.recorded = state.source_rows()  # what the last build read: (size, mtime_ns, hash)
        self.digests: Counter[str] = Counter()  # source -> its digest records (one per part)
        self.taken: dict[str, str] = {}  # the settled sources (one found changed: taken out)
        self.lines: dict[str, str] = {}  # a settled source -> its walk's line
        self.read: dict[str, tuple[SourceFile, str]] = {}  # read and digested now: path -> file, hash

    def listing(self, walked: Walked, records: ActionRecords, local: Callable[[str], bool]) -> Listing:
        """The sources of this build, settled or not: by the record's lines where it has them,
        else each source checked by stat (which())."""
        found = self._by_lines(walked)
        if found is not None:
            return found
        files, errors = walked.all()
        settled = self.which(files, records, local)
        every = {f.path: f for f in files}
        others = [f for f in files if f.path not in settled]
        return Listing(settled, others, errors, every.__getitem__, [f.path for f in files])

    def _by_lines(self, walked: Walked) -> Listing | None:
        if self.count is None or walked.lines is None:
            return None
        n = self.count
        items = self.payload.split("\n") if n else []
        self.payload = ""  # 12 MB at 100,000 sources: not held
        if len(items) != 3 * n:
            return None
        lines, paths, hashes = items[:n], items[n : 2 * n], items[2 * n :]
        self.base = paths
        extra = self._patch(lines, paths, hashes)
        now = set(walked.lines)
        same = list(map(now.__contains__, lines))  # C speed: no Python code per source
        kept = list(compress(paths, same))
        listed = walked.besides(set(lines) | {line for line, _ in extra.values()})
        if listed is None:
            return None
        self.lines = dict(zip(kept, compress(lines, same), strict=True))
        settled = dict(zip(kept, compress(hashes, same), strict=True))
        added = {path: entry for path, entry in extra.items() if entry[0] in now}
        if added:  # sources settled since the base lines, not in them: in their places
            self.lines |= {path: line for path, (line, _) in added.items()}
            settled = dict(sorted((settled | {path: h for path, (_, h) in added.items()}).items()))
        self.taken = settled
        root = walked.root
        return Listing(settled, listed[0], listed[1], lambda path: _file_of(root, self.lines[path]))

    def _patch(self, lines: list[str], paths: list[str], hashes: list[str]) -> dict[str, tuple[str, str]]:
        """The base lines made the record's: the sources changed since (the delta) take their
        line and hash in place, or no line (""), where no longer settled; those not in the
        base are handed back."""
        extra: dict[str, tuple[str, str]] = {}
        if not self.delta:
            return extra
        row: dict[str, int] | None = None  # every path's place: made only if one is not found
        for path, entry in self.delta.items():
            # the base's paths are sorted (record() writes them so): found by bisection, not by
            # a dict of 100,000 paths made for an edit's few; by the dict where it misses
            at = bisect.bisect_left(paths, path)
            i = at if at < len(paths) and paths[at] == path else None
            if i is None:
                row = row if row is not None else dict(zip(paths, range(len(paths)), strict=True))
                i = row.get(path)
            if i is None:
                if entry is not None:
                    extra[path] = (entry[0], entry[1])
            elif entry is None:
                lines[i] = ""  # never a walk's line: the source is listed as changed
            else:
                lines[i], hashes[i] = entry[0], entry[1]
        return extra

    def settled_parts(self, paths: Iterable[str]) -> int:
        """The digest records of these settled sources (one per part), up to date unread."""
        if self.digests:
            return sum(self.digests[path] for path in paths)
        taken = paths if isinstance(paths, dict) else dict.fromkeys(paths)
        return len(taken) + sum(n - 1 for path, n in self.parts.items() if path in taken)

    def which(
        self, files: list[SourceFile], records: ActionRecords, local: Callable[[str], bool]
    ) -> dict[str, str]:
        """The sources to take as the last build left them, each checked by stat (a record
        without its lines, from an older wikic): path -> the hash it read. Not a converted
        file (PDF, DOCX: their text lives in the store), a local-only one, one whose digest
        failed, or one without digests or a plan to take."""
        if not self.usable:
            return {}
        planned, since = self.state.planned_keys(), self.since - RACY_NS
        recorded = self.recorded.every()
        digested = _digests(records.ids_of("digest"))
        found: dict[str, str] = {}
        for f in files:  # 100,000 of them: the checks by dict first, the calls last
            path = f.path
            rec = recorded.get(path)
            if (
                rec is not None
                and rec[0] == f.size
                and rec[1] == f.mtime_ns
                and f.mtime_ns < since
                and path in planned
                and path in digested
                and path not in self.failed
                and format_of(path) is None
                and not local(path)
            ):
                found[path] = rec[2]
        self.digests, self.taken = digested, found
        self.lines = {path: _line(f) for f in files if (path := f.path) in found}
        return found

    def drop(self) -> None:
        """A build starts: until it has finished, no source is settled (the lines stay, but
        only a record that names them makes them the settled sources' lines)."""
        self.state.delete_meta(Meta.SETTLED)

    def record(self, failed: Iterable[str], local: Callable[[str], bool]) -> None:
        """The build has finished: what it read its sources with, when it started, and the
        sources the next build may take as they are (settled now, or read now and settled
        by the same checks as which()'s)."""
        failed = set(failed)
        taken = self.taken  # in path order, as listed
        if self.digests:  # checked by stat: each source's records counted
            parts = {path: n for path in taken if (n := self.digests[path]) != 1}
        else:
            parts = {path: n for path, n in self.parts.items() if path in taken}
        new = self._settling(failed, local)
        order, lines, hashes = list(taken), self.lines, dict(taken)
        for path, (line, hash_, n) in new.items():
            lines[path], hashes[path] = line, hash_
            if n != 1:
                parts[path] = n
        if len(new) < 64:  # an edit's few: put in their places
            for path in new:
                bisect.insort(order, path)
        else:
            order = sorted(order + list(new))
        saved = {"mark": self.mark, "started": self.started, "failed": sorted(failed), "parts": parts}
        delta = self._since(new)
        if delta is not None:  # the base lines stay: what changed since them is recorded beside
            assert self.base is not None
            saved |= {"count": len(self.base), "lines": self.token, "delta": delta}
            self.state.set_meta(Meta.SETTLED, json.dumps(saved))
            return
        token = os.urandom(8).hex()  # which lines go with this record
        saved |= {"count": len(order), "lines": token}
        payload = [token, *map(lines.__getitem__, order), *order, *map(hashes.__getitem__, order)]
        with self.state.transaction():
            self.state.set_meta(Meta.SETTLED_LINES, "\n".join(payload))
            self.state.set_meta(Meta.SETTLED, json.dumps(saved))

    def _since(self, new: dict[str, tuple[str, str, int]]) -> dict[str, list[str] | None] | None:
        """What changed since the base lines, where this build listed by them and that is little
        (12 MB of lines not written again at every edit of 100,000 sources); None: new lines.
        A source gone from sources/ means new lines: no byte of it is kept (privacy/forget.py)."""
        if self.base is None:
            return None
        paths = self.base
        taken = self.taken
        delta: dict[str, list[str] | None] = {
            path: entry for path, entry in self.delta.items() if entry is not None and path in taken
        }
        delta |= {path: [line, hash_] for path, (line, hash_, _) in new.items()}
        out = set(paths) - taken.keys() - new.keys()
        if out - self.read.keys():  # not read by this build: gone, or not listed at all
            return None
        delta |= dict.fromkeys(out)
        return delta if len(delta) <= max(64, len(paths) // 8) else None

    def _settling(self, failed: set[str], local: Callable[[str], bool]) -> dict[str, tuple[str, str, int]]:
        """The sources read now that the next build may take as they are: path -> line, hash,
        digest records."""
        since = self.started - RACY_NS
        read = {
            path: (f, hash_)
            for path, (f, hash_) in self.read.items()
            if path not in failed
            and f.mtime_ns < since
            and "\n" not in path
            and format_of(path) is None
            and not local(path)
        }
        if len(read) > 1000:  # a full build: every row at once
            keys = self.state.planned_keys()
            planned = {path for path in read if path in keys}
            digested = _digests(self.state.action_records().ids_of("digest"))
        else:
            planned = self.state.planned_among(sorted(read))
            digested = _digests(i for path in planned for i in self.state.digest_ids(path))
        return {
            path: (_line(f), hash_, digested[path])
            for path, (f, hash_) in read.items()
            if path in planned and digested[path]
        }


def _saved(text: str | None) -> dict[str, Any]:
    """The last finished build's record; none where it cannot be read (nothing is settled)."""
    try:
        saved = json.loads(text or "{}")
    except ValueError:
        return {}
    return saved if isinstance(saved, dict) else {}


def _line(f: SourceFile) -> str:
    """A plain file's line in a walk (snapshot.walk)."""
    return f"{f.path}\t{f.size}\t{f.mtime_ns}"


def _file_of(root: Path, line: str) -> SourceFile:
    """The source file of a walk's line of a plain file."""
    path, size, mtime = line.rsplit("\t", 2)
    return SourceFile(path, os.path.join(root, path), int(size), int(mtime))


def _digests(ids: Iterable[str]) -> Counter[str]:
    """Each source's digest records (one per part: `digest:<path>#<n>`), by their ids alone."""
    found: Counter[str] = Counter()
    for action_id in ids:
        if action_id.startswith("digest:"):
            subject, mark, part = action_id[7:].rpartition("#")
            found[subject if mark and part.isdecimal() else action_id[7:]] += 1
    return found


class Unsettled(Exception):
    """A settled source read after all holds other bytes than the last build read under the
    same stat (an edit that kept its size and mtime): the build plans again without it."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


def loader(file: SourceFile, read: Callable[[SourceFile], Any], hash_: str) -> Callable[[], list[str]]:
    """A settled source's lines, read when the plan asks for them (`read`: as the build reads
    a source, redacted); Unsettled when they are not what the last build read."""

    def load() -> list[str]:
        try:
            src = read(file)
        except SourceError:
            raise Unsettled(file.path) from None  # read with the others: its error reported there
        if src.hash != hash_:
            raise Unsettled(file.path)
        lines: list[str] = src.lines
        return lines

    return load
