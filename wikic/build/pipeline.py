"""`wikic build`: scan -> digest -> plan -> write -> assemble -> report.

The model stages go through actions (keyed, cached, explained); everything else
is recomputed, and only files whose bytes change are written. A build whose
inputs (source stats, schema.yaml, templates, model file) are as the last clean
build left them, with every output intact, stops after the stat calls.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wikic import __version__
from wikic.build.actions import Action, Runner, is_fallback, resolve
from wikic.build.assemble import assemble
from wikic.backends import Backend, make_backend, model_id
from wikic.config import Schema, fingerprint, load_schema
from wikic.build.digest import digest_actions, merge_parts
from wikic.errors import SourceError
from wikic.fsutil import remove_stale_temps
from wikic.wiki.page import split_page
from wikic.build.plan import PagePlan, SourceInfo, plan
from wikic.project import Project
from wikic.prompts.loader import Prompts, template_files
from wikic.build.publish import append_log, outputs_intact, publish
from wikic.build.report import Progress, Report
from wikic.sources.scan import Source, SourceFile, list_sources, read_source
from wikic.state import State
from wikic.build.uptodate import forget
from wikic.build.compose import compose_pages
from wikic.build.write import write_actions


@dataclass
class BuildOptions:
    explain: bool = False
    dry_run: bool = False
    offline: bool = False
    force: bool = False
    jobs: int | None = None
    retry_failed: bool = False  # ask the model again where its last answers stayed unusable


BackendFactory = Callable[[Schema], Backend]


def input_fingerprint(project: Project, files: list[SourceFile], mid: str) -> str:
    """Everything a build reads, by stat where that is enough. Taken before the build,
    so that an edit made while it runs is seen by the next one."""
    templates = []
    for path in template_files(project.root):
        st = path.stat()
        templates.append([str(path), st.st_size, st.st_mtime_ns])
    return fingerprint(
        [
            __version__,
            project.schema_path.read_bytes().hex(),
            [[f.path, f.size, f.mtime_ns] for f in files],
            templates,
            mid,
        ]
    )


def clean_mark(project: Project, inputs: str) -> str:
    """The inputs and the stats of every file in wiki/: a new or edited hand-made page
    (an answer, a note) must be indexed anew."""
    listing = []
    if project.wiki_dir.is_dir():
        with os.scandir(project.wiki_dir) as entries:
            for entry in entries:
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                listing.append([entry.name, st.st_size, st.st_mtime_ns])
    return fingerprint([inputs, sorted(listing)])


def build(
    project: Project,
    opts: BuildOptions,
    progress: Progress,
    backend_factory: BackendFactory | None = None,
) -> Report:
    started = time.monotonic()
    report = Report(dry_run=opts.dry_run)
    schema = load_schema(project.schema_path)
    files, list_errors = list_sources(project.root, schema.sources)
    mid = model_id(schema.model, project.root)
    fp = input_fingerprint(project, files, mid)
    state = State.open(project.state_path, recover=True)
    report.warnings += state.warnings
    try:
        if (
            not (opts.force or opts.retry_failed or opts.dry_run or list_errors)
            and state.get_meta("clean") == clean_mark(project, fp)
            and outputs_intact(state, project.root)
        ):
            report.nothing_to_do = True
            report.sources = len(files)
            report.pages = int(state.get_meta("pages") or 0)
            report.up_to_date = int(state.get_meta("actions") or 0)
        else:
            if not opts.dry_run:
                forget(state.db)
            factory = backend_factory or (lambda s: make_backend(s.model, project.root))
            _Build(project, schema, opts, progress, report, state, mid, lambda: factory(schema)).run(
                files, list_errors, fp
            )
    finally:
        state.close()
    report.seconds = time.monotonic() - started
    return report


class _Build:
    """One full (incremental) pass; holds what the stages share."""

    def __init__(
        self,
        project: Project,
        schema: Schema,
        opts: BuildOptions,
        progress: Progress,
        report: Report,
        state: State,
        mid: str,
        backend: Callable[[], Backend],
    ) -> None:
        self.project, self.schema, self.opts = project, schema, opts
        self.progress, self.report, self.state = progress, report, state
        self.prompts = Prompts(project.root)
        self.mid = mid
        self.model_fp = fingerprint([mid, schema.model.params()])
        self.records = state.actions()
        jobs = opts.jobs or schema.model.jobs
        self.runner = Runner(state, backend, jobs=jobs, offline=opts.offline, on_done=self._done)
        self.done = 0
        self.total = 0
        self.failed_sources: set[str] = set()

    # --- stages ---------------------------------------------------------------
    def run(self, files: list[SourceFile], list_errors: list[SourceError], fp: str) -> None:
        root, report = self.project.root, self.report
        remove_stale_temps(root / "wiki")
        for err in list_errors:
            report.error(err.path, err.reason)
            self.failed_sources.add(err.path)
        sources = self._read(files)
        self.stats = {f.path: f for f in files}
        report.sources = len(files)
        digests = self._digest(sources)
        infos = [SourceInfo(s.path, s.title, s.lines, digests[s.path]) for s in sources if s.path in digests]
        pages = plan(infos, self.schema, self.state.slugs())
        prose = self._write(pages)
        if self.opts.dry_run:
            report.pages = len(pages)
            return
        available = {pid: p for pid, p in pages.items() if p.type == "source" or pid in prose}
        keep = {f"wiki/{p.slug}.md" for pid, p in pages.items() if pid not in available}
        keep |= self._kept_for_failed_sources(set(f"{p.slug}.md" for p in available.values()))
        kept = {pid: p for pid, p in pages.items() if pid not in available}
        outputs = assemble(
            available,
            prose,
            self._foreign(available, keep),
            {s.path: len(s.lines) for s in sources},
            self.schema.title,
            self.schema.scope,
            [*self.schema.type_names(), "source", "answer"],
            kept,
        )
        self._explain_outputs(outputs)
        publish(root, outputs, keep, self.state, report, force=self.opts.force)
        for rel in report.conflicts:
            self._explain(f"assemble {rel}", "hand edit kept (use --force to overwrite)")
        report.pages = len(available)
        append_log(root, self.state, report)
        self._save(sources, pages, fp)

    def _read(self, files: list[SourceFile]) -> list[Source]:
        sources = []
        for f in files:
            try:
                cfg = self.schema.sources
                src = read_source(f, cfg.max_bytes, cfg.part_lines, cfg.max_parts)
            except SourceError as err:
                self.report.error(err.path, err.reason)
                self.failed_sources.add(err.path)
                continue
            if not src.text.strip():
                self.report.warnings.append(f"{f.path}: empty, skipped")
                continue
            sources.append(src)
        return sources

    def _digest(self, sources: list[Source]) -> dict[str, dict[str, object]]:
        per_source = {s.path: digest_actions(s, self.schema, self.prompts, self.model_fp) for s in sources}
        self._settle([a for acts in per_source.values() for a in acts])
        digests = {}
        for path, acts in per_source.items():
            if all(a.output is not None for a in acts):
                digests[path] = merge_parts([a.output for a in acts])
            else:
                self.failed_sources.add(path)
        return digests

    def _write(self, pages: dict[str, PagePlan]) -> dict[str, dict[str, Any]]:
        actions = write_actions(pages, self.schema, self.prompts, self.model_fp)
        self._settle(list(actions.values()))
        written = {pid: a.output for pid, a in actions.items() if a.output is not None}
        texts, self.report.page_text = compose_pages(
            pages, written, set(actions), self.schema.lint.citation_threshold
        )
        return texts

    def _settle(self, actions: list[Action]) -> None:
        for a in actions:
            resolve(a, self.records.get(a.id), self.state, self.mid, self.opts.retry_failed)
            if a.status != "up_to_date":
                self._explain(a.label, a.reason)
        pending = [a for a in actions if a.status == "pending"]
        self.report.up_to_date += sum(a.status == "up_to_date" for a in actions)
        self.report.cached += sum(a.status == "cached" for a in actions)
        if self.opts.dry_run:
            for a in pending:
                request = a.render()
                estimate = len(json.dumps(request.messages)) // 4 + request.max_tokens
                self.report.would_run.append(
                    {"action": a.label, "reason": a.reason, "estimated_tokens": estimate}
                )
            return
        self.total += len(pending)
        self.runner.run(pending)

    def _done(self, action: Action) -> None:
        self.done += 1
        self.progress.step(self.done, self.total, action.label)
        if action.status == "ran":
            self.report.ran += 1
            self.report.calls += action.usage.get("calls", 1)  # repair tries included
            self.report.prompt_tokens += action.usage.get("prompt_tokens", 0)
            self.report.completion_tokens += action.usage.get("completion_tokens", 0)
            self.report.cached_tokens += action.usage.get("cached_tokens", 0)
            if is_fallback(action.output):
                self.report.warnings.append(f"{action.label}: {action.output['fallback']}")
        else:
            self.report.failed += 1
            self.report.error(action.label, action.error)

    # --- outputs --------------------------------------------------------------
    def _foreign(self, pages: dict[str, PagePlan], keep: set[str]) -> dict[str, str]:
        """Pages in wiki/ the build does not own: answers filed by `ask --save`, hand-made pages;
        and its own pages kept as they are (their source failed this time): still indexed."""
        ours = {p.slug for p in pages.values()} | {"index", "log"}
        recorded = {Path(rel).stem for rel in self.state.files()}
        foreign = {}
        wiki = self.project.root / "wiki"
        for path in sorted(wiki.glob("*.md")) if wiki.is_dir() else []:
            if path.stem not in ours and (path.stem not in recorded or f"wiki/{path.name}" in keep):
                try:
                    foreign[path.stem] = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
        return foreign

    def _kept_for_failed_sources(self, planned: set[str]) -> set[str]:
        """Pages fed by a source that failed this time are kept, not removed."""
        if not self.failed_sources:
            return set()
        keep = set()
        for rel in self.state.files():
            if rel.removeprefix("wiki/") in planned:
                continue
            try:
                meta = split_page((self.project.root / rel).read_text(encoding="utf-8")).meta
            except (OSError, UnicodeDecodeError):
                continue
            if set(meta.get("sources") or []) & self.failed_sources:
                keep.add(rel)
        return keep

    def _explain_outputs(self, outputs: dict[str, str]) -> None:
        root = self.project.root
        for rel in self.state.files():
            if rel.removeprefix("wiki/") in outputs and not (root / rel).exists():
                self._explain(f"assemble {rel}", "output missing")

    def _explain(self, action: str, reason: str) -> None:
        if self.opts.explain or self.opts.dry_run:
            self.report.explain.append({"action": action, "reason": reason})

    def _save(self, sources: list[Source], pages: dict[str, PagePlan], fp: str) -> None:
        state, report = self.state, self.report
        live = {s.path for s in sources} | self.failed_sources
        with state.transaction():
            for path in set(state.source_stats()) - live:
                state.remove_source(path)
            for src in sources:  # what this build read: lint's stale-page compares against it
                st = self.stats[src.path]
                state.set_source(src.path, st.size, st.mtime_ns, src.hash)
            for aid, rec in self.records.items():
                gone_source = rec.stage == "digest" and aid.split(":", 1)[1].split("#")[0] not in live
                gone_page = rec.stage == "write" and aid.removeprefix("write:") not in pages
                if gone_source or gone_page:
                    state.remove_action(aid)
        state.set_slugs({pid: p.slug for pid, p in pages.items()})
        if report.ok and not report.conflicts:
            state.set_meta("clean", clean_mark(self.project, fp))
            state.set_meta("pages", str(report.pages))
            state.set_meta("actions", str(report.ran + report.cached + report.up_to_date))
        else:
            state.set_meta("clean", "")
