"""`wikic build`: scan -> digest -> plan -> write -> assemble -> report.

The model stages go through actions (keyed, cached, explained); everything else
is recomputed, and only files whose bytes change are written. A build whose
inputs (source stats, schema.yaml, templates, model file) are as the last clean
build left them, with every output intact, stops after the stat calls.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from wikic import snapshot
from wikic.backends import Backend, make_backend, model_id
from wikic.build.actions import Action, Runner, resolve
from wikic.build.assemble import Assembled, Assembly, assemble
from wikic.build.batches import Batches
from wikic.build.compose import Composer, compose_pages
from wikic.build.digest import digest_actions, digest_inputs, merge_parts
from wikic.build.existing import foreign, intact, kept_for_failed_sources, missing
from wikic.build.plan import PagePlan, SourceInfo, memo_for, plan
from wikic.build.publish import append_log, publish
from wikic.build.report import Progress, Report, price_report
from wikic.build.run import BackendFactory, BuildOptions
from wikic.build.settled import Settled, Unsettled, inputs_mark
from wikic.build.settled import loader as settled_loader
from wikic.build.write import write_actions
from wikic.config import Schema, load_schema
from wikic.errors import SourceError
from wikic.fsutil import remove_stale_temps
from wikic.hashing import fingerprint
from wikic.privacy import forget
from wikic.privacy.local import LocalOnly, is_remote, not_run_reason
from wikic.privacy.redact import Redactor
from wikic.project import Project
from wikic.prompts.loader import Prompts
from wikic.sources.extract import prune, store_dir
from wikic.sources.read import Source, read_source
from wikic.sources.scan import SourceFile, list_sources
from wikic.state import ActionRecord, Meta, State

__all__ = ["BuildOptions", "build"]


def build(
    project: Project,
    opts: BuildOptions,
    progress: Progress,
    backend_factory: BackendFactory | None = None,
    inputs: snapshot.Tree | None = None,
) -> Report:
    """The pipeline alone, with its own clean check (run.build adds the lock, the faster
    no-op check and the lint summary). `inputs`: the project's inputs, walked just now."""
    started = time.monotonic()
    report = Report(dry_run=opts.dry_run)
    schema = load_schema(project.schema_path)
    files, list_errors = list_sources(project.root, schema.sources)
    mid = model_id(schema.model, project.root)
    mark = snapshot.build_inputs(project, mid, inputs)
    state = State.open(project.state_path, recover=True)
    report.warnings += state.warnings
    try:
        if not (opts.force or opts.retry_failed or opts.dry_run or list_errors) and _clean(
            project, state, mark
        ):
            report.nothing_to_do = True
            report.sources = len(files)
            report.pages = int(state.get_meta(Meta.PAGES) or 0)
            report.up_to_date = int(state.get_meta(Meta.ACTIONS) or 0)
        else:
            if not opts.dry_run:
                state.delete_meta(Meta.UPTODATE)  # about to change things: no build may skip on it
            factory = backend_factory or (lambda s: make_backend(s.model, project.root))
            setup = _Setup(project, schema, opts, mid, progress)
            _Build(setup, state, report, lambda: factory(schema)).run(files, list_errors, mark)
    finally:
        state.close()
    price_report(report, schema.model.price)
    report.seconds = time.monotonic() - started
    return report


def _clean(project: Project, state: State, mark: str) -> bool:
    """The last build was clean, on these inputs and this wiki/, and its outputs are intact."""
    if state.get_meta(Meta.CLEAN) != snapshot.clean_mark(project, mark):
        return False
    return snapshot.outputs_intact(project.root, state.file_stats())


@dataclass
class _Setup:
    """What a build is asked to do, and with which model."""

    project: Project
    schema: Schema
    opts: BuildOptions
    mid: str  # the model's id (backends.model_id)
    progress: Progress


class _Build:
    """One full (incremental) pass; holds what the stages share."""

    def __init__(self, setup: _Setup, state: State, report: Report, backend: Callable[[], Backend]) -> None:
        self.project, self.schema, self.opts = setup.project, setup.schema, setup.opts
        self.progress, self.report, self.state = setup.progress, report, state
        self.prompts = Prompts(self.project.root)
        self.mid = setup.mid
        self.model_fp = fingerprint([self.mid, self.schema.model.params()])
        self.records = state.actions()
        jobs = self.opts.jobs or self.schema.model.jobs
        self.runner = Runner(state, backend, jobs=jobs, offline=self.opts.offline, on_done=self._done)
        self.batches = Batches(
            state,
            self.runner,
            self.schema.model,
            report,
            self.progress,
            force=self.opts.batch,
            wait=self.opts.batch_wait,
            offline=self.opts.offline,
        )
        self.done = 0
        self.total = 0
        self.failed_sources: set[str] = set()
        self.redactor = Redactor.from_config(self.schema.privacy.redact)
        self.privacy_fp: dict[str, str] = {}  # source -> the redaction rules that fired in it
        remote = is_remote(self.schema.model)
        self.local_only = LocalOnly(self.schema.privacy.local_only if remote else [])
        self.local: tuple[str, str, Runner] | None = None  # privacy.local_model: id, fingerprint, runner
        self.store = store_dir(self.project.root)  # extracted texts of PDF, DOCX, ... sources
        self.stored: set[str] = set()  # their names there, of the sources read
        local_cfg = self.schema.privacy.local_model
        models = [self.mid, self.model_fp, model_id(local_cfg, self.project.root) if local_cfg else ""]
        digest_template = self.prompts.stage_hash("digest")
        mark = inputs_mark(self.project.schema_path.read_bytes(), digest_template, models)
        reuse = not (self.opts.force or self.opts.retry_failed or self.opts.dry_run)
        self.settled = Settled(state, mark, reuse)

    # --- stages ---------------------------------------------------------------
    def run(self, files: list[SourceFile], list_errors: list[SourceError], mark: str) -> None:
        root, report = self.project.root, self.report
        if not self.opts.dry_run:
            self.settled.drop()  # until this build has finished
        remove_stale_temps(root / "wiki")
        for err in list_errors:
            report.error(err.path, err.reason)
            self.failed_sources.add(err.path)
        self.stats = {f.path: f for f in files}
        report.sources = len(files)
        planned = self._read_and_plan(files)
        if planned is None:
            return self._stopped()
        sources, pages = planned
        prose = self._write(pages)
        if report.waiting:
            return self._stopped()
        if self.opts.dry_run:
            report.pages = len(pages)
            return
        self._outputs(sources, pages, prose, mark)

    def _read_and_plan(self, files: list[SourceFile]) -> tuple[list[_Read], dict[str, PagePlan]] | None:
        """The sources read, digested and planned (None while a stage waits on a batch). Of the
        sources, only what later stages need is kept: 100,000 texts are not held to the end;
        settled ones (settled.py) are not read unless the plan asks for their lines, and one
        found changed then is read, digested and planned like the others."""
        settled = self.settled.which(files, self.records, self.local_only.covers)
        sources = self._read([f for f in files if f.path not in settled])
        if not self.opts.dry_run:  # the texts of PDF, DOCX, ... files no longer in sources/
            prune(self.store, self.stored)
        digests = self._digest(sources)
        while not self.report.waiting:
            try:
                pages = self._plan(self._infos(files, sources, digests, settled))
            except Unsettled as changed:
                self._explain(f"read {changed.path}", "changed under the same size and mtime")
                more = self._read([f for f in files if f.path == changed.path])
                del settled[changed.path]
                sources += more
                digests |= self._digest(more)
                continue
            for path in settled:
                self._count_settled(path)
            kept = [_Read(s.path, s.hash, len(s.lines), s.pages) for s in sources]
            kept += [_Read(i.path, settled[i.path], i.count, ()) for i in self.infos if i.settled]
            return kept, pages
        return None

    def _infos(
        self, files: list[SourceFile], sources: list[Source], digests: dict[str, Any], settled: dict[str, str]
    ) -> list[SourceInfo]:
        """What the plan reads of each source, in the order of sources/ (the plan's merges
        keep the first they meet): a settled source's lines only if it asks for them."""
        read = {s.path: s for s in sources}
        self.infos: list[SourceInfo] = []
        for f in files:
            src = read.get(f.path)
            if f.path in settled:
                load = settled_loader(f, self._read_one, settled[f.path])
                self.infos.append(SourceInfo(f.path, "", None, None, load))
            elif src is not None and src.path in digests:
                self.infos.append(SourceInfo(src.path, src.title, src.lines, digests[src.path]))
        return self.infos

    def _outputs(
        self, sources: list[_Read], pages: dict[str, PagePlan], prose: dict[str, dict[str, Any]], mark: str
    ) -> None:
        """Assemble and publish the pages, append to log.md, and record the build in the state."""
        root, report = self.project.root, self.report
        frozen = kept_for_failed_sources(root, self.state, self.failed_sources)
        made = {pid: p for pid, p in pages.items() if p.type == "source" or pid in prose}
        available = {pid: p for pid, p in made.items() if f"wiki/{p.slug}.md" not in frozen}
        keep = {f"wiki/{p.slug}.md" for pid, p in pages.items() if pid not in available} | frozen
        kept = {pid: p for pid, p in pages.items() if pid not in available}
        forgotten = sorted(set(self.state.source_stats()) - {s.path for s in sources} - self.failed_sources)
        if forgotten:  # before the index is made: it lists answers, which may go with them
            gone = {Path(rel).stem for rel in set(self.state.files()) - keep}
            forget.drop_answers(root, gone - {p.slug for p in available.values()}, report)
        job = Assembly(
            available,
            prose,
            foreign(root, self.state, available, keep),
            {s.path: s.lines for s in sources},
            self.schema.title,
            self.schema.scope,
            [*self.schema.type_names(), "source", "answer"],
            kept,
            {} if self.opts.force else self.state.assembled(),
            set() if self.opts.force else intact(root, self.state),
            {s.path: s.pages for s in sources if s.pages},
        )
        done = assemble(job)
        outputs = done.outputs
        for rel in missing(root, self.state, outputs) if self.opts.explain else []:
            self._explain(f"assemble {rel}", "output missing")
        unchanged = {f"wiki/{name}" for name in done.unchanged}
        publish(root, outputs, keep | unchanged, self.state, report, force=self.opts.force)
        self._remember(done, job)
        for rel in report.conflicts:
            self._explain(f"assemble {rel}", "hand edit kept (use --force to overwrite)")
        report.pages = len(available)
        # a deleted source's page names (made from its titles) leave earlier entries too
        append_log(
            root, self.state, report, scrub=forget.log_scrubber(root, forgotten) if forgotten else None
        )
        self._save(sources, pages, mark)
        # the build has rewritten what shared their notes: the rest can go
        if forgotten and not forget.purge(self.project, self.state, forgotten)["compacted"]:
            report.warnings.append(forget.NOT_COMPACTED)

    def _plan(self, infos: list[SourceInfo]) -> dict[str, PagePlan]:
        """The page set; each source's own part planned again only where it changed (--force:
        every source's, so that a forced build checks what the memo would have given)."""
        save = None if self.opts.dry_run else self.state.save_planned
        memo = memo_for(self.schema, {} if self.opts.force else self.state.planned(), save)
        pages = plan(infos, self.schema, self.state.slugs(), memo)
        if save is not None:
            self.state.drop_planned(memo.gone(i.path for i in infos))
        return pages

    def _remember(self, done: Assembled, job: Assembly) -> None:
        """What each page was rendered from, where it changed, for the next build's assemble."""
        changed = {s: r for s, r in done.rendered.items() if job.previous.get(s) != r}
        gone = [slug for slug in job.previous if slug not in done.rendered]
        if changed or gone:
            self.state.set_assembled(changed, gone)

    def _read_one(self, f: SourceFile) -> Source:
        cfg = self.schema.sources
        src = read_source(f, cfg.max_bytes, cfg.part_lines, cfg.max_parts, self.store)
        return self.redactor.source(src)[0]

    def _count_settled(self, path: str) -> None:
        """A settled source's digests (one per part) count as up to date, unread."""
        self.report.up_to_date += self.settled.digests[path]

    def _read(self, files: list[SourceFile]) -> list[Source]:
        sources = []
        for f in files:
            try:
                cfg = self.schema.sources
                src = read_source(f, cfg.max_bytes, cfg.part_lines, cfg.max_parts, self.store)
            except SourceError as err:
                self.report.error(err.path, err.reason)
                self.failed_sources.add(err.path)
                continue
            self.stored.add(src.stored)
            if not src.text.strip():
                self.report.warnings.append(f"{f.path}: empty, skipped")
                continue
            src, self.privacy_fp[src.path] = self.redactor.source(src)  # before any model sees it
            sources.append(src)
        return sources

    def _digest(self, sources: list[Source]) -> dict[str, dict[str, object]]:
        local = {s.path for s in sources if self.local_only.covers(s.path)}
        if local and self.schema.privacy.local_model is None:
            for path in sorted(local):  # never sent: the build says so, and fails, the rest is built
                self.report.error(path, not_run_reason(self.schema.model))
            self.failed_sources |= local
            sources, local = [s for s in sources if s.path not in local], set()
        # by `path in local`: the model of schema.yaml, privacy.local_model (only where it is used)
        models = (False, True) if local else (False,)
        shared = [digest_inputs(self.schema, self.prompts, self._model(near)[1]) for near in models]
        per_source = {
            s.path: digest_actions(
                s, self.schema, self.prompts, shared[s.path in local], self.privacy_fp.get(s.path, "")
            )
            for s in sources
        }
        self._settle([a for path, acts in per_source.items() if path not in local for a in acts])
        self._settle([a for path, acts in per_source.items() if path in local for a in acts], local=True)
        digests = {}
        for path, acts in per_source.items():
            if all(a.output is not None for a in acts):
                digests[path] = merge_parts([a.output for a in acts])
            else:
                self.failed_sources.add(path)
        return digests

    def _write(self, pages: dict[str, PagePlan]) -> dict[str, dict[str, Any]]:
        actions = write_actions(pages, self.schema, self.prompts, self.model_fp)
        local = {pid for pid, p in pages.items() if self.local_only.covers_any(c.source for c in p.claims)}
        if local and self.schema.privacy.local_model is None:  # never to the remote model: notes
            actions = {pid: a for pid, a in actions.items() if pid not in local}
        elif local:  # their notes are local-only lines: written by privacy.local_model
            fp = self._model(True)[1]
            actions |= write_actions({pid: pages[pid] for pid in local}, self.schema, self.prompts, fp)
        self._settle([a for pid, a in actions.items() if pid not in local])
        self._settle([a for pid, a in actions.items() if pid in local], local=True)
        written = {pid: a.output for pid, a in actions.items() if a.output is not None}
        composer = Composer(self.state, self.opts.force)
        texts, self.report.page_text = compose_pages(
            pages, written, set(actions), self.schema.lint.citation_threshold, composer
        )
        if not self.opts.dry_run:
            composer.save(pages)
        return texts

    def _model(self, local: bool) -> tuple[str, str, Runner]:
        """The model an action goes to: schema's, or privacy.local_model for local-only text."""
        local_cfg = self.schema.privacy.local_model
        if not local or local_cfg is None:
            return self.mid, self.model_fp, self.runner
        if self.local is None:
            root, jobs = self.project.root, self.opts.jobs or local_cfg.jobs
            mid = model_id(local_cfg, root)
            runner = Runner(
                self.state, lambda: make_backend(local_cfg, root), jobs, self.opts.offline, self._done
            )
            self.local = (mid, fingerprint([mid, local_cfg.params()]), runner)
        return self.local

    def _settle(self, actions: list[Action], local: bool = False) -> None:
        if not actions:
            return
        mid, _, runner = self._model(local)
        same = [r.key for a in actions if (r := self.records.get(a.id)) is not None and r.inputs == a.inputs]
        known = self.state.cached_many(same)
        for a in actions:
            resolve(a, self.records.get(a.id), self.state, mid, self.opts.retry_failed, known)
            if a.status != "up_to_date":
                self._explain(a.label, a.reason)
        pending = [a for a in actions if a.status == "pending"]
        for a in actions:
            if a.status != "pending":
                self.report.count(a)
        if self.opts.dry_run:
            for a in pending:
                request = a.render()
                prompt = len(json.dumps(request.messages)) // 4
                self.report.would_run.append(
                    {
                        "action": a.label,
                        "stage": a.stage,
                        "reason": a.reason,
                        "estimated_tokens": prompt + request.max_tokens,
                        "prompt_tokens": prompt,
                        "completion_tokens": request.max_tokens,  # at most
                    }
                )
            return
        # local-only text never goes into a batch: the Batch API is the configured (remote) model's
        waiting = set() if local else {id(a) for a in self.batches.settle(pending)}
        self.report.waiting += len(waiting)
        now = [a for a in pending if id(a) not in waiting]
        self.total += len(now)
        runner.run(now)
        self.batches.close()

    def _stopped(self) -> None:
        """A stage waits on a batch: nothing after it can be built yet, and the wiki is not clean."""
        self.state.set_meta(Meta.CLEAN, "")
        self.report.pages = int(self.state.get_meta(Meta.PAGES) or 0)

    def _done(self, action: Action) -> None:
        self.done += 1
        self.progress.step(self.done, self.total, action.label)
        self.report.count(action)

    # --- outputs --------------------------------------------------------------
    def _explain(self, action: str, reason: str) -> None:
        if self.opts.explain or self.opts.dry_run:
            self.report.explain.append({"action": action, "reason": reason})

    def _save(self, sources: list[_Read], pages: dict[str, PagePlan], mark: str) -> None:
        state, report = self.state, self.report
        live = {s.path for s in sources} | self.failed_sources
        recorded = state.source_stats()
        with state.transaction():
            for path in set(recorded) - live:
                state.remove_source(path)
            for src in sources:  # what this build read: lint's stale-page compares against it
                st = self.stats[src.path]
                if recorded.get(src.path) != (st.size, st.mtime_ns, src.hash):
                    state.set_source(src.path, st.size, st.mtime_ns, src.hash)
            for rec in self.records.values():
                if _gone(rec, live, pages):
                    state.remove_action(rec.id)
        state.set_slugs({pid: p.slug for pid, p in pages.items()})
        if report.ok and not report.conflicts:
            state.set_meta(Meta.CLEAN, snapshot.clean_mark(self.project, mark))
            state.set_meta(Meta.PAGES, str(report.pages))
            state.set_meta(Meta.ACTIONS, str(report.ran + report.cached + report.up_to_date))
        else:
            state.set_meta(Meta.CLEAN, "")
        self.settled.record(self.failed_sources)


class _Read(NamedTuple):
    """A source read by this build, once planned: what the later stages need of it."""

    path: str
    hash: str
    lines: int  # how many
    pages: tuple[int, ...]  # a PDF's first line of each page


def _gone(record: ActionRecord, sources: set[str], pages: dict[str, PagePlan]) -> bool:
    """An action whose source (digest) or page (write) is no longer part of the wiki."""
    if record.stage == "digest":
        return record.subject not in sources
    return record.stage == "write" and record.subject not in pages
