"""`wikic build`: scan -> digest -> plan -> write -> assemble -> report.

The model stages go through actions (keyed, cached, explained); everything else
is recomputed, and only files whose bytes change are written. A build whose
inputs (source stats, schema.yaml, templates, model file) are as the last clean
build left them, with every output intact, stops after the stat calls.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wikic import snapshot
from wikic.backends import Backend, make_backend, model_id
from wikic.build import handmade, ownindex, quick
from wikic.build.actions import KEEP_MADE, Action, Runner, resolve
from wikic.build.assemble import Assembled, Assembly, assemble
from wikic.build.batches import Batches
from wikic.build.compose import Composer, compose_pages
from wikic.build.existing import foreign, intact, kept_for_failed_sources, missing
from wikic.build.intake import Intake, Read
from wikic.build.plan import PagePlan, SourceInfo, memo_for, write_mode
from wikic.build.publish import append_log, publish
from wikic.build.replan import Keep, plan_kept
from wikic.build.report import Progress, Report, price_report
from wikic.build.run import BackendFactory, BuildOptions
from wikic.build.write import write_actions
from wikic.fsutil import TMP_MARK, remove_stale_temps
from wikic.hashing import fingerprint
from wikic.privacy import forget
from wikic.privacy.local import LocalOnly, is_remote
from wikic.project import Project
from wikic.prompts.loader import Prompts
from wikic.settings import load_schema
from wikic.sources.scan import Walked
from wikic.state import ActionRecord, FileRecord, Meta, State
from wikic.wiki.read import gc_frozen, trim_heap

if TYPE_CHECKING:
    from wikic.config import Schema

__all__ = ["BuildOptions", "build"]

KEPT = ("merge", "merge+", "plan", "plan+")  # what the last plan kept for the next (state.kept)


def build(
    project: Project,
    opts: BuildOptions,
    progress: Progress,
    backend_factory: BackendFactory | None = None,
    inputs: snapshot.Tree | None = None,
    found: snapshot.Tree | None = None,
) -> Report:
    """The pipeline alone, with its own clean check (run.build adds the lock, the faster
    no-op check and the lint summary). `inputs`, `found`: the inputs and wiki/, walked just now."""
    started = time.monotonic()
    report = Report(dry_run=opts.dry_run)
    schema = load_schema(project.schema_path)
    inputs = inputs or snapshot.inputs(project)  # walked once: the build's mark, and its sources
    walked = Walked(project.root, schema.sources, inputs.lines)
    mid = model_id(schema.model, project.root)
    mark = snapshot.build_inputs(project, mid, inputs)
    found = found or snapshot.wiki(project)  # walked once before: the clean check, intact pages
    report.found = found
    state = State.open(project.state_path, recover=True)
    report.warnings += state.warnings
    try:
        # listed in full only where the build may be clean: an edit lists what changed (settled.py)
        clean = not (opts.force or opts.retry_failed or opts.dry_run) and _clean(project, state, mark, found)
        if clean and not walked.all()[1]:
            report.nothing_to_do = True
            report.sources = len(walked.all()[0])
            report.pages = int(state.get_meta(Meta.PAGES) or 0)
            report.up_to_date = int(state.get_meta(Meta.ACTIONS) or 0)
        else:
            if not opts.dry_run:
                state.delete_meta(Meta.UPTODATE)  # about to change things: no build may skip on it
                state.delete_meta(Meta.LINT_KEPT)  # ...nor `wikic lint` answer from its findings
            factory = backend_factory or (lambda s: make_backend(s.model, project.root))
            setup = _Setup(project, schema, opts, mid, progress, found)
            job = _Build(setup, state, report, lambda: factory(schema))
            try:
                job.run(walked, mark)
            finally:
                # it and its stages refer to each other (intake, runner): the plan and every page
                # it held go now, not at the collector's next full pass (after the lint summary)
                vars(job).clear()
            trim_heap()
    finally:
        state.close()
    price_report(report, schema.model.price)
    report.seconds = time.monotonic() - started
    return report


def _clean(project: Project, state: State, mark: str, found: snapshot.Tree) -> bool:
    """The last build was clean, on these inputs and this wiki/, and its outputs are intact."""
    if state.get_meta(Meta.CLEAN) != snapshot.clean_mark(project, mark, found):
        return False
    return snapshot.outputs_intact(project.root, state.file_stats(), found.stat)


@dataclass
class _Setup:
    """What a build is asked to do, and with which model."""

    project: Project
    schema: Schema
    opts: BuildOptions
    mid: str  # the model's id (backends.model_id)
    progress: Progress
    wiki: snapshot.Tree  # wiki/ as the build found it


class _Build:
    """One full (incremental) pass; holds what the stages share."""

    edit: quick.Quick | None = None  # the pages an edit changed, where known (quick.py)
    # the pages in wiki/ not the build's, slug -> description, where they changed (None: as the
    # last build left them, or not known): Meta.FOREIGN_LEFT (handmade.py)
    described: dict[str, str] | None = None
    own_index: str | None = None  # index.md as the build made it (ownindex.py keeps it where kept as edited)
    written: dict[str, Action]  # the write actions settled (_write)
    prose_keys: dict[str, str]

    def __init__(self, setup: _Setup, state: State, report: Report, backend: Callable[[], Backend]) -> None:
        self.project, self.schema, self.opts = setup.project, setup.schema, setup.opts
        self.progress, self.report, self.state = setup.progress, report, state
        self.prompts = Prompts(self.project.root)
        self.mid = setup.mid
        self.found = setup.wiki  # wiki/ as walked before the build
        self.model_fp = fingerprint([self.mid, self.schema.model.params()])
        self.records = state.action_records()
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
        self.kept_plan = Keep(b"", True, "")  # what the plan keeps for the next (replan.py)
        remote = is_remote(self.schema.model)
        self.local_only = LocalOnly(self.schema.privacy.local_only if remote else [])
        self.local: tuple[str, str, Runner] | None = None  # privacy.local_model: id, fingerprint, runner
        self.intake = Intake(self)

    # --- stages ---------------------------------------------------------------
    def run(self, walked: Walked, mark: str) -> None:
        root, report = self.project.root, self.report
        if not self.opts.dry_run:
            self.intake.settled.drop()  # until this build has finished
        remove_stale_temps(root / "wiki", self.found.lines if self.found.complete else None)
        listing = self.intake.listing(walked)
        for err in listing.errors:
            report.error(err.path, err.reason)
            self.failed_sources.add(err.path)
        self.stats = listing.file  # each source as listed, for _save
        report.sources = len(listing.order)
        planned = self.intake.read_and_plan(listing, self._plan)
        if planned is None:
            return self._stopped()
        sources, pages = planned
        with gc_frozen():  # the plan lives to the end: later collections need not scan it
            prose = self._write(pages, sources)
            if report.waiting:
                return self._stopped()
            if self.opts.dry_run:
                report.pages = len(pages)
                return
            self._outputs(sources, pages, prose, mark)

    def _outputs(
        self, sources: list[Read], pages: Mapping[str, PagePlan], prose: dict[str, dict[str, Any]], mark: str
    ) -> None:
        """Assemble and publish the pages, append to log.md, and record the build in the state."""
        root, report = self.project.root, self.report
        self.recorded = self.intake.settled.recorded  # as the last build read them (_save compares)
        if self.edit is not None and quick.outputs(self, sources, pages, prose, mark):
            return
        if self.edit is not None:  # assembled in full after all: every page's text is needed
            prose, self.edit = quick.prose_of_all(self, pages), None
        frozen = kept_for_failed_sources(root, self.state, self.failed_sources)
        files = self.state.files()  # what wikic wrote: read once, for foreign, intact and publish
        made = {pid: p for pid, p in pages.items() if p.type == "source" or pid in prose}
        available = {pid: p for pid, p in made.items() if f"wiki/{p.slug}.md" not in frozen}
        keep = {f"wiki/{p.slug}.md" for pid, p in pages.items() if pid not in available} | frozen
        kept = {pid: p for pid, p in pages.items() if pid not in available}
        forgotten = sorted(set(self.recorded) - {s.path for s in sources} - self.failed_sources)
        if forgotten:  # before the index is made: it lists answers, which may go with them
            gone = {Path(rel).stem for rel in set(files) - keep}
            forget.drop_answers(root, gone - {p.slug for p in available.values()}, report)
        job = self._assembly(sources, available, prose, kept, keep, files)
        done = assemble(job)
        outputs, self.described = done.outputs, done.described
        self.own_index = outputs.get("index.md")
        for rel in missing(root, self.state, outputs) if self.opts.explain else []:
            self._explain(f"assemble {rel}", "output missing")
        unchanged = {f"wiki/{name}" for name in done.unchanged}
        publish(root, outputs, keep | unchanged, self.state, report, self.opts.force, files)
        self._remember(done, job)
        for rel in report.conflicts:
            self._explain(f"assemble {rel}", "hand edit kept (use --force to overwrite)")
        report.pages = len(available)
        # a deleted source's page names (made from its titles) leave earlier entries too
        self.logged = append_log(
            root, self.state, report, scrub=forget.log_scrubber(root, forgotten) if forgotten else None
        )
        self._save(sources, pages, mark)
        # the build has rewritten what shared their notes: the rest can go
        if forgotten and not forget.purge(self.project, self.state, forgotten, report.wiki)["compacted"]:
            report.warnings.append(forget.NOT_COMPACTED)

    def _assembly(
        self,
        sources: list[Read],
        available: dict[str, PagePlan],
        prose: dict[str, dict[str, Any]],
        kept: dict[str, PagePlan],
        keep: set[str],
        files: dict[str, FileRecord],
    ) -> Assembly:
        """What the full assembly renders: the pages `available` (the others `kept` as they
        are, their files among `keep`), the foreign pages, and what the last assembly left."""
        root, force = self.project.root, self.opts.force
        return Assembly(
            available,
            prose,
            foreign(root, files, available, keep, self.found.stats),
            {s.path: s.lines for s in sources},
            self.schema.title,
            self.schema.scope,
            self.schema.index_order(),
            kept,
            {} if force else self.state.assembled(),
            set() if force else intact(root, files, self.found.stats),
            {s.path: s.pages for s in sources if s.pages},
            self.prose_keys,
            self.kept_plan.same,
            self.kept_plan.basis,
            self.kept_plan.token,
            "" if force else self.state.get_meta(Meta.ASSEMBLED) or "",
            self._writes(),
            self.project.state_dir,
        )

    def _plan(self, infos: list[SourceInfo]) -> Mapping[str, PagePlan]:
        """The page set; each source's own part planned again only where it changed (--force:
        every source's, so that a forced build checks what the memo would have given)."""
        save = None if self.opts.dry_run else self.state.save_planned
        state, kept = self.state, (lambda name: None) if self.opts.force else self.state.kept
        # what the last plan kept, handed on and not held here: 50 MB at 100,000 sources, let go
        # once loaded (Memo.candidates, plan_kept)
        rows = {} if self.opts.force else state.planned()
        memo = memo_for(self.schema, rows, save, kept(KEPT[0]), kept(KEPT[1]), self.project.state_dir)
        ahead = self.intake.ahead  # the facts made during the digest, by the same settings
        memo.ahead = ahead if ahead is not None and ahead.settings_fp == memo.settings_fp else None
        # the sticky slugs (state.slugs) read only where the kept plan's heads are not known to be them
        pages, keep = plan_kept(
            infos, self.schema, state.slugs, memo, kept(KEPT[2]), state, None, kept(KEPT[3])
        )
        if save is not None:
            # a patched plan knows the sources gone since the last; a row of no source left
            # besides (none, as a plan keeps them) is found by the count, and all are looked at
            dropped = keep.dropped
            self.state.drop_planned(memo.gone(i.path for i in infos) if dropped is None else dropped)
            if dropped is not None and len(memo.rows) != len(infos):
                self.state.drop_planned(memo.gone(i.path for i in infos))
            if (merged := memo.merge_kept()) is not None:
                self.state.keep("merge", *merged, room=not keep.every)
            self.state.keep_plan(keep.blob, keep.pages, keep.gone, keep.every, keep.since, keep.sticky)
        self.kept_plan = keep
        return pages

    def _remember(self, done: Assembled, job: Assembly) -> None:
        """What each page was rendered from, where it changed, for the next build's assemble."""
        changed = {s: r for s, r in done.rendered.items() if job.previous.get(s) != r}
        gone = [slug for slug in job.previous if slug not in done.rendered]
        self.state.set_assembled(changed, gone, done.by, done.links)

    def _write(self, pages: Mapping[str, PagePlan], sources: list[Read]) -> dict[str, dict[str, Any]]:
        """The topic pages' text: their write actions settled, and composed. Where the edit's
        pages are known (quick.py), those alone: the others' are as the last build left them."""
        self.edit = quick.decide(self, pages, sources)
        keep = self.kept_plan  # its rows and blobs are stored: only what later stages read stays
        self.kept_plan = Keep(b"", keep.every, keep.token, gone=keep.gone, same=keep.same, basis=keep.basis)
        self.kept_plan.slugs_patch = keep.slugs_patch
        subset = pages if self.edit is None else {pid: pages[pid] for pid in self.edit.changed}
        actions = self._actions(subset)
        covers = self.local_only.covers_any  # without globs, no page's notes are looked at
        local = (
            {pid for pid, p in pages.items() if covers(c.source for c in p.claims)}
            if self.local_only
            else set()
        )
        if local and self.schema.privacy.local_model is None:  # never to the remote model: notes
            actions = {pid: a for pid, a in actions.items() if pid not in local}
        elif local:  # their notes are local-only lines: written by privacy.local_model
            fp = self._model(True)[1]
            actions |= write_actions({pid: pages[pid] for pid in local}, self.schema, self.prompts, fp)
        self._settle([a for pid, a in actions.items() if pid not in local])
        self._settle([a for pid, a in actions.items() if pid in local], local=True)
        self.written = actions
        # an edit's composed pages: those it planned again, and those gone (their rows and figures go)
        only = None if self.edit is None else [*self.edit.changed, *(e[3] for e in self.edit.gone.values())]
        return self._compose(subset, actions, only)

    def _actions(self, pages: Mapping[str, PagePlan]) -> dict[str, Action]:
        return write_actions(pages, self.schema, self.prompts, self.model_fp)

    def _compose(
        self, pages: Mapping[str, PagePlan], actions: dict[str, Action], only: list[str] | None
    ) -> dict[str, dict[str, Any]]:
        written = {pid: a.output for pid, a in actions.items() if a.output is not None}
        composer = Composer(self.state, self.opts.force, only)
        texts, page_text = compose_pages(
            pages, written, set(actions), self.schema.lint.citation_threshold, composer
        )
        self.report.page_text = page_text if self.opts.dry_run else composer.save(texts, page_text)
        if only is not None and write_mode(self.schema) != "notes":  # each other's write is up to date
            self.report.up_to_date += composer.others
        self.prose_keys = composer.keys  # assemble's key of a topic page reads them, not its notes
        same = self.kept_plan.same  # a topic page among them whose text is composed as it was too
        same -= {pid for pid, key in composer.keys.items() if composer.saved.get(pid, ("", ""))[0] != key}
        return texts

    def _writes(self) -> str:
        """What a topic page's text is made from besides its plan (schema.yaml is the plan's)."""
        return quick.writes_key(self.prompts.stage_hash("write"), self.model_fp)

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
        kept, retry = 0, self.opts.retry_failed
        for a in actions:
            resolve(a, self.records.get(a.id), self.state, mid, retry, known, kept < KEEP_MADE)
            kept += a.made is not None
            if a.status != "up_to_date":
                self._explain(a.label, a.reason)
        self.records.let_go(a.id for a in actions)  # settled: not held through the later stages
        pending = [a for a in actions if a.status == "pending"]
        for a in actions:
            if a.status != "pending":
                self.report.count(a)
        if self.opts.dry_run:
            for a in pending:
                request = a.take_request()
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

    def _save(self, sources: list[Read], pages: Mapping[str, PagePlan], mark: str) -> None:
        state, report = self.state, self.report
        # the sources deleted; an edit's pages known (quick.py): those the plan dropped, no page moved
        live = {s.path for s in sources} | self.failed_sources if self.edit is None else set()
        gone = set(self.recorded) - live if self.edit is None else set(self.edit.forgotten)
        with state.transaction():
            for path in sorted(gone):
                state.remove_source(path)
                report.reread.append(path)
            if self.edit is not None:  # the records of what went, found by name (the full way reads all)
                state.remove_actions_of("digest", gone)
                state.remove_actions_of("write", [e[3] for e in self.edit.gone.values()])
            # the sources read now (the settled ones are recorded as they are); lint's stale-page reads it
            for src in self.intake.fresh:
                st = self.stats(src.path)
                if self.recorded.get(src.path) != (st.size, st.mtime_ns, src.hash):
                    state.set_source(src.path, st.size, st.mtime_ns, src.hash)
                    report.reread.append(src.path)
            for rec in self.records.every() if self.edit is None else ():
                if _gone(rec, live, pages):
                    state.remove_action(rec.id)
        slugs = {pid: p.slug for pid, p in pages.items()} if self.edit is None else {}
        if slugs and state.slugs() != slugs:  # 10,000 rows read, rather than all written again
            state.set_slugs(slugs)
        elif self.edit is not None and (patch := self.kept_plan.slugs_patch) is not None:
            # the plan's slugs, which its heads are: marked so, the next plan does not read them
            state.patch_slugs(*patch, heads=self.kept_plan.token)
        elif self.edit is not None and (self.edit.added or self.edit.gone):  # pages came or went
            state.patch_slugs(
                {e[3]: slug for slug, e in self.edit.added.items()}, [e[3] for e in self.edit.gone.values()]
            )
        if report.ok:
            # wiki/ as the build left it (the no-op mark's too): the walk before, what it touched stat'ed
            touched = [*report.written, *report.removed, *(["wiki/log.md"] if self.logged else [])]
            found = snapshot.restat(self.found, touched, self.project.root, TMP_MARK)
            report.wiki = found or snapshot.wiki(self.project)
            clean = snapshot.clean_mark(self.project, mark, report.wiki) if not report.conflicts else ""
            state.set_meta(Meta.CLEAN, clean)  # none where it kept pages edited by hand
            state.set_meta(Meta.WIKI_LEFT, report.wiki.digest())  # an edit's outputs go by it (quick.py)
            if self.described is not None:  # ...and the pages not the build's by their lines
                state.set_meta(Meta.FOREIGN_LEFT, handmade.left(report.wiki, self.described))
            if self._others_moved():  # ...and the files not pages (attachments), by theirs
                state.set_meta(Meta.OTHERS_LEFT, json.dumps(handmade.others(report.wiki)))
            # ...and those of its own it kept as edited by hand (each build says so again)
            kept = [rel[5:-3] for rel in report.conflicts if rel.startswith("wiki/") and rel.endswith(".md")]
            state.set_meta(Meta.CONFLICTS, json.dumps(handmade.lines_of(report.wiki, kept)))
            own = self.own_index if "wiki/index.md" in report.conflicts else None
            ownindex.keep(self.project.state_dir, state, own)  # what the next edit patches
            state.set_meta(Meta.PAGES, str(report.pages))
            state.set_meta(Meta.ACTIONS, str(report.ran + report.cached + report.up_to_date))
        else:
            state.set_meta(Meta.CLEAN, "")
            state.delete_meta(Meta.WIKI_LEFT)
            state.delete_meta(Meta.FOREIGN_LEFT)
            state.delete_meta(Meta.CONFLICTS)
            state.delete_meta(Meta.OTHERS_LEFT)
        self.intake.settled.record(self.failed_sources, self.local_only.covers)

    def _others_moved(self) -> bool:
        """Whether wiki/'s files not pages may not be as Meta.OTHERS_LEFT has them: after the
        full way (which walks every line anyway), where they changed by hand, or none kept."""
        hands = self.edit.hands if self.edit is not None else None
        if self.edit is None or (hands is not None and hands.others is not None):
            return True
        return self.state.get_meta(Meta.OTHERS_LEFT) is None


def _gone(record: ActionRecord, sources: set[str], pages: Mapping[str, PagePlan]) -> bool:
    """An action whose source (digest) or page (write) is no longer part of the wiki."""
    if record.stage == "digest":
        return record.subject not in sources
    return record.stage == "write" and record.subject not in pages
