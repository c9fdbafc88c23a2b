"""The sources' side of a build: which sources are settled (settled.py), reading the
others (decoded, extracted, redacted before any model sees them), their digest actions,
and what the plan reads of each source. Of the sources, only what later stages need is
kept: 100,000 texts are not held to the end.
"""

from __future__ import annotations

import gc
import itertools
import marshal
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, NamedTuple

from wikic import forked
from wikic.backends import model_id
from wikic.build.digest import Made as Requests
from wikic.build.digest import digest_actions, digest_inputs, forget_words, merge_parts, part_requests
from wikic.build.plan import PagePlan, SourceInfo, settings_for
from wikic.build.prefacts import FactsAhead, Requesting
from wikic.build.settled import Listing, Settled, Unsettled, inputs_mark
from wikic.build.settled import loader as settled_loader
from wikic.build.sourceplan import split_lines
from wikic.errors import SourceError
from wikic.privacy.local import not_run_reason
from wikic.privacy.redact import Redactor
from wikic.sources.extract import prune, store_dir
from wikic.sources.read import Source, read_source
from wikic.sources.scan import SourceFile, Walked
from wikic.spill import Spilled
from wikic.wiki.read import gc_paused

if TYPE_CHECKING:
    from wikic.build.pipeline import _Build


class Read(NamedTuple):
    """A source read by this build (or settled), once planned: what later stages need of it."""

    path: str
    hash: str
    lines: int  # how many
    pages: tuple[int, ...]  # a PDF's first line of each page


# sources read and digested at a time (the runner keeps as many requests: KEEP_MADE). While a
# chunk is digested, children make the next chunk's names and the chunk before's facts
# (prefacts.py): the first chunk has only names beside it, and the plan makes the last chunk's
# facts; at 4,096 (10,000 sources as 3,333 x 3) the second CPU sat idle 0.5-0.75 s in each
# chunk's digest
CHUNK = 2048


def chunks(count: int, most: int | None) -> list[int]:
    """Where each chunk of `count` sources taken at a time starts, and the end: `most` at most
    (None: all at once), the chunks as few as that allows and of equal sizes (within one). The
    plan makes the last chunk's facts, after waiting for the child still making the one
    before's (prefacts.py): 10,000 sources as 4,096, 4,096 and 1,808 kept it waiting 0.5-1.5 s
    (a child's 3.8 s beside the last chunk's digest of 1.8 s); as 3,333, 3,333 and 3,334, none."""
    return forked.even(count, -(-count // most) if most else min(count, 1))


class _Held(NamedTuple):
    """A source read, once digested: what the plan and later stages read of it (its text is
    spilled: 100 MB at 100,000 sources, read back where the plan asks for its lines)."""

    path: str
    hash: str
    title: str
    lines: int  # how many
    pages: tuple[int, ...]


def _held(src: Source, texts: Spilled) -> _Held:
    texts.add(src.path, src.text)
    return _Held(src.path, src.hash, src.title, len(src.lines), src.pages)


def _spilled_lines(texts: Spilled, path: str) -> list[str]:
    return split_lines(texts[path])


def _spill(digests: Spilled, made: dict[str, bytes]) -> None:
    for path, packed in made.items():
        digests.put(path, packed)


class Intake:
    """Reads, digests and plans the sources of one build (`build`: what the stages share)."""

    def __init__(self, build: _Build) -> None:
        self.build = build
        self.schema, self.report = build.schema, build.report
        self.redactor = Redactor.from_config(self.schema.privacy.redact)
        self.privacy_fp: dict[str, str] = {}  # source -> the redaction rules that fired in it
        self.store = store_dir(build.project.root)  # extracted texts of PDF, DOCX, ... sources
        self.stored: set[str] = set()  # their names there, of the sources read
        local = self.schema.privacy.local_model
        models = [build.mid, build.model_fp, model_id(local, build.project.root) if local else ""]
        template = build.prompts.stage_hash("digest")
        mark = inputs_mark(build.project.schema_path.read_bytes(), template, models)
        opts = build.opts
        self.settled = Settled(build.state, mark, not (opts.force or opts.retry_failed or opts.dry_run))
        self.infos: list[SourceInfo] = []
        self.fresh: list[Read] = []  # the sources read by this build (the others are settled)
        self.settings = settings_for(self.schema)
        self.ahead: FactsAhead | None = None  # while the sources are read and planned

    def listing(self, walked: Walked) -> Listing:
        """The sources of this build: which are settled, and the others as listed."""
        build = self.build
        self.listed = self.settled.listing(walked, build.records, build.local_only.covers)
        return self.listed

    def read_and_plan(
        self, listing: Listing, plan: Callable[[list[SourceInfo]], Mapping[str, PagePlan]]
    ) -> tuple[list[Read], Mapping[str, PagePlan]] | None:
        """The sources read, digested and planned (None while a stage waits on a batch).
        Settled ones are not read unless the plan asks for their lines, and one found changed
        then is read, digested and planned like the others."""
        folder = self.build.project.state_dir
        with Spilled(folder) as texts, Spilled(folder) as digests, FactsAhead(self.settings, folder) as ahead:
            self.ahead = ahead
            try:
                return self._read_and_plan(listing, plan, texts, digests)
            finally:
                self.ahead = None

    def _read_and_plan(
        self,
        listing: Listing,
        plan: Callable[[list[SourceInfo]], Mapping[str, PagePlan]],
        texts: Spilled,
        digests: Spilled,
    ) -> tuple[list[Read], Mapping[str, PagePlan]] | None:
        """read_and_plan(), each source's text and packed digest spilled (`texts`, `digests`:
        100,000 sources' are 145 MB) until the plan asks for them."""
        build = self.build
        unread, held = listing.files, list[_Held]()
        spans = list(itertools.pairwise(chunks(len(unread), CHUNK if self._streamed() else None)))
        coming: list[Source] | None = None  # the next chunk's sources, read ahead
        for k, (at, end) in enumerate(spans):  # 100,000 sources' lines and actions are never all held
            sources = coming if coming is not None else self._ahead_read(unread[at:end], first=True)
            hints, requests = self._hints(sources) if k else ({}, {})  # the first's: children just started
            # the next chunk read now: its names, hints and requests made by a child while this
            # one is digested
            coming = self._ahead_read(unread[slice(*spans[k + 1])]) if k + 1 < len(spans) else None
            made = self._digest(sources, hints, requests)
            _spill(digests, made)
            if end < len(unread):  # its facts made by a child while the next chunk is digested
                self._ahead(sources, made)
            held += [_held(s, texts) for s in sources]
            del sources, made
        if self.ahead is not None:  # the last chunk's names, for the plan (and its children)
            self.ahead.named()
        if not build.opts.dry_run:  # the texts of PDF, DOCX, ... files no longer in sources/
            prune(self.store, self.stored)
        while not self.report.waiting:
            try:
                with gc_paused():
                    pages = plan(self._infos(listing, held, digests, texts))
                    kept = self._kept(listing, held, digests)
                    # the plan lives to the build's end (run() takes it back from gc_frozen): the
                    # collector, enabled again, must not scan it all as young (0.25 s at 100,000)
                    gc.freeze()
                forget_words()  # the digest's and the plan's: the later stages' memory
            except Unsettled as changed:
                build._explain(f"read {changed.path}", "changed under the same size and mtime")
                more = self._read([listing.file(changed.path)])
                del listing.settled[changed.path]
                _spill(digests, self._digest(more))
                held += [_held(s, texts) for s in more]
                continue
            self.report.up_to_date += self.settled.settled_parts(listing.settled)  # one per part, unread
            return kept, pages
        return None

    def _ahead_read(self, files: list[SourceFile], first: bool = False) -> list[Source]:
        """A chunk's sources read, and their names made by a forked child (prefacts.py): the
        first chunk's while it is digested, the others' with their digests' hints and
        requests (_hints) while the chunk before is. A chunk's at most (all the sources at
        once: their names would be held till the plan)."""
        with gc_paused():  # many objects, no cycles: the collector's passes would only cost
            sources = self._read(files)
        if self.ahead is not None and not self.build.opts.dry_run and len(sources) <= CHUNK:
            part_lines = None if first else self.schema.sources.part_lines
            requests = None if first else self._requests(sources)
            self.ahead.name([s.path for s in sources], [s.text for s in sources], part_lines, requests)
        return sources

    def _requests(self, sources: list[Source]) -> Requesting:
        """What makes a source's digest requests and their keys, as _digest makes them, in the
        child naming its chunk (digest.part_requests): none for local-only text, whose model
        may be another."""
        build = self.build
        mid, model_fp, _ = build._model(False)
        shared = digest_inputs(self.schema, build.prompts, model_fp)
        remote = {s.path: s for s in sources if not build.local_only.covers(s.path)}

        def made(path: str, hints: list[list[str]]) -> Requests | None:
            src = remote.get(path)
            if src is None:
                return None
            privacy = self.privacy_fp.get(path, "")
            return part_requests(src, self.schema, build.prompts, shared, mid, privacy, hints)

        return made

    def _hints(self, sources: list[Source]) -> tuple[dict[str, list[list[str]]], dict[str, Requests]]:
        """These sources' digests' hints and requests, where the child naming them made them
        (none where it failed: the digest makes them)."""
        if self.ahead is None:
            return {}, {}
        self.ahead.named([s.path for s in sources])
        hints, requests = self.ahead.hints, self.ahead.requests
        return (
            {s.path: h for s in sources if (h := hints.pop(s.path, None)) is not None},
            {s.path: r for s in sources if (r := requests.pop(s.path, None)) is not None},
        )

    def _ahead(self, sources: list[Source], digests: dict[str, bytes]) -> None:
        """These sources' facts made by a forked child (prefacts.py), as the plan will read them."""
        if self.ahead is None or self.build.opts.dry_run:
            return
        infos = [
            SourceInfo(s.path, s.title, None, digests[s.path], text=s.text, count=len(s.lines))
            for s in sources
            if s.path in digests
        ]
        self.ahead.start(infos)

    def _streamed(self) -> bool:
        """Whether the sources are read and digested CHUNK at a time: not where their digests
        may go through a Batch API, which takes a stage's pending actions as one batch."""
        build = self.build
        if build.opts.batch or build.opts.dry_run or build.schema.model.batch != "off":
            return False
        return not build.state.batches("digest")  # one submitted before: collected as one stage

    def _kept(self, listing: Listing, held: list[_Held], digests: Spilled) -> list[Read]:
        """What later stages need of each source, once planned; the settled record's part."""
        files, settled = listing.file, listing.settled
        self.settled.read = {s.path: (files(s.path), s.hash) for s in held if s.path in digests}
        self.fresh = [Read(s.path, s.hash, s.lines, s.pages) for s in held]
        kept = self.fresh + [Read(i.path, settled[i.path], i.count, ()) for i in self.infos if i.settled]
        self.infos = []  # their lines and digests: not held to the end of the build
        return kept

    def _infos(
        self, listing: Listing, held: list[_Held], digests: Spilled, texts: Spilled
    ) -> list[SourceInfo]:
        """What the plan reads of each source, in the order of sources/ (the plan's merges
        keep the first they meet): a settled source's lines only if it asks for them."""
        read, settled, load = {s.path: s for s in held}, listing.settled, self._settled_lines
        self.infos = infos = []
        for path in listing.order:  # 100,000 of them: a settled source is one object and a call
            if path in settled:
                infos.append(SourceInfo(path, "", None, None, partial(load, path)))
            elif (src := read.get(path)) is not None and path in digests:
                lines = partial(_spilled_lines, texts, path)
                digest = partial(digests.raw, path)
                infos.append(SourceInfo(path, src.title, None, digest, lines, count=src.lines))
        return infos

    def _settled_lines(self, path: str) -> list[str]:
        """A settled source's lines, read as the build reads a source (redacted); Unsettled
        when they are not what the last build read."""
        return settled_loader(self.listed.file(path), self._read_one, self.listed.settled[path])()

    def _read_one(self, f: SourceFile) -> Source:
        cfg = self.schema.sources
        src = read_source(f, cfg.max_bytes, cfg.part_lines, cfg.max_parts, self.store)
        return self.redactor.source(src)[0]

    def _read(self, files: list[SourceFile]) -> list[Source]:
        sources = []
        for f in files:
            try:
                cfg = self.schema.sources
                src = read_source(f, cfg.max_bytes, cfg.part_lines, cfg.max_parts, self.store)
            except SourceError as err:
                self.report.error(err.path, err.reason)
                self.build.failed_sources.add(err.path)
                continue
            self.stored.add(src.stored)
            if not src.text.strip():
                self.report.warnings.append(f"{f.path}: empty, skipped")
                continue
            src, self.privacy_fp[src.path] = self.redactor.source(src)  # before any model sees it
            sources.append(src)
        return sources

    def _digest(
        self,
        sources: list[Source],
        hints: dict[str, list[list[str]]] | None = None,
        requests: dict[str, Requests] | None = None,
    ) -> dict[str, bytes]:
        """Each source's digest (its parts' merged), packed (marshal: a fifth of the objects'
        size) until the plan reads it. `hints`, `requests`: sources' made ahead (_hints)."""
        build, schema = self.build, self.schema
        local = {s.path for s in sources if build.local_only.covers(s.path)}
        if local and schema.privacy.local_model is None:
            for path in sorted(local):  # never sent: the build says so, and fails, the rest is built
                self.report.error(path, not_run_reason(schema.model))
            build.failed_sources |= local
            sources, local = [s for s in sources if s.path not in local], set()
        # by `path in local`: the model of schema.yaml, privacy.local_model (only where it is used)
        models = (False, True) if local else (False,)
        shared = [digest_inputs(schema, build.prompts, build._model(near)[1]) for near in models]
        made, asked = hints or {}, requests or {}
        per_source = {
            s.path: digest_actions(
                s,
                schema,
                build.prompts,
                shared[s.path in local],
                self.privacy_fp.get(s.path, ""),
                made.get(s.path),
                asked.get(s.path),
            )
            for s in sources
        }
        build._settle([a for path, acts in per_source.items() if path not in local for a in acts])
        build._settle([a for path, acts in per_source.items() if path in local for a in acts], local=True)
        digests = {}
        for path, acts in per_source.items():
            if all(a.output is not None for a in acts):
                digests[path] = marshal.dumps(merge_parts([a.output for a in acts]))
            else:
                build.failed_sources.add(path)
        return digests
