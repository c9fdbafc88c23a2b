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

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from wikic import __version__
from wikic.build import digest, sourceplan
from wikic.errors import SourceError
from wikic.hashing import digest as hash_bytes
from wikic.hashing import fingerprint
from wikic.sources.formats import format_of
from wikic.sources.scan import SourceFile
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


class Settled:
    """What the last finished build read, as the build starting now finds it."""

    def __init__(self, state: State, mark: str, enabled: bool) -> None:
        self.state, self.mark = state, mark
        self.started = time.time_ns()  # before any source is read
        saved: dict[str, Any] = json.loads(state.get_meta(Meta.SETTLED) or "{}") if enabled else {}
        self.usable = saved.get("mark") == mark
        self.since: int = saved.get("started", 0)
        self.failed = set(saved.get("failed", []))
        self.recorded = state.source_stats()  # what the last build read: (size, mtime_ns, hash)
        self.digests: Counter[str] = Counter()  # source -> its digest records (one per part)
        self.taken: dict[str, str] = {}  # which(): the settled sources (one found changed: taken out)

    def which(
        self, files: list[SourceFile], records: ActionRecords, local: Callable[[str], bool]
    ) -> dict[str, str]:
        """The sources to take as the last build left them: path -> the hash it read. Not a
        converted file (PDF, DOCX: their text lives in the store), a local-only one, one whose
        digest failed, or one without digests or a plan to take."""
        if not self.usable:
            return {}
        planned, recorded, since = self.state.planned_keys(), self.recorded, self.since - RACY_NS
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
        return found

    def drop(self) -> None:
        """A build starts: until it has finished, no source is settled."""
        self.state.delete_meta(Meta.SETTLED)

    def record(self, failed: Iterable[str]) -> None:
        """The build has finished: what it read its sources with, and when it started."""
        saved = {"mark": self.mark, "started": self.started, "failed": sorted(failed)}
        self.state.set_meta(Meta.SETTLED, json.dumps(saved))


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
