"""One build, as `wikic build`, `wikic watch` and Python callers run it: under the
project lock, the no-op check (uptodate.py), else the pipeline (pipeline.py) and
the lint summary of the built wiki, then the mark that lets the next build skip.

Light on purpose: a build with nothing to do imports neither the pipeline nor lint.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from wikic.build.progress import Progress
from wikic.build.uptodate import Check, Fresh
from wikic.errors import WikicError
from wikic.lock import ProjectLock
from wikic.project import Project

if TYPE_CHECKING:
    from wikic import snapshot
    from wikic.backends import Backend
    from wikic.build.report import Report
    from wikic.config import Schema

BackendFactory = Callable[["Schema"], "Backend"]


class BuildOptions:
    """How to build. A plain class, not a dataclass: the no-op build must not load `dataclasses`."""

    def __init__(
        self,
        explain: bool = False,
        dry_run: bool = False,
        offline: bool = False,
        force: bool = False,  # also: check every input instead of trusting the stat checks
        jobs: int | None = None,
        retry_failed: bool = False,  # ask the model again where its last answers stayed unusable
        wait: bool = True,  # for another wikic process to release the project (else fail at once)
        batch: bool = False,  # send the stages' pending actions through the provider's Batch API
        batch_wait: bool = False,  # wait for submitted batches to finish, and go on
    ) -> None:
        self.explain = explain
        self.dry_run = dry_run
        self.offline = offline
        self.force = force
        self.jobs = jobs
        self.retry_failed = retry_failed
        self.wait = wait
        self.batch = batch
        self.batch_wait = batch_wait

    def __repr__(self) -> str:
        return f"BuildOptions({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BuildOptions) and vars(other) == vars(self)


def build(
    project: Project,
    opts: BuildOptions | None = None,
    progress: Progress | None = None,
    backend_factory: BackendFactory | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> Report:
    """Build the project's wiki; the report carries the lint summary (unless --dry-run)."""
    done = attempt(project, opts, progress, backend_factory, on_wait)
    return done.report() if isinstance(done, Fresh) else done


def attempt(
    project: Project,
    opts: BuildOptions | None = None,
    progress: Progress | None = None,
    backend_factory: BackendFactory | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> Report | Fresh:
    """`build`, except that a build with nothing to do answers its recorded figures as they
    are, for the CLI to print without loading the report's class."""
    opts = opts or BuildOptions()
    progress = progress or Progress(quiet=True)
    with ProjectLock(project.lock_path, wait=opts.wait, on_wait=on_wait or progress.message):
        check = None if opts.dry_run else Check(project)
        if check is not None and not (opts.force or opts.retry_failed):
            fresh = check.fresh()  # stats only: no heavy import
            if fresh is not None:
                return fresh
        return _full(project, opts, progress, backend_factory, check)


def _full(
    project: Project,
    opts: BuildOptions,
    progress: Progress,
    backend_factory: BackendFactory | None,
    check: Check | None,
) -> Report:
    """The pipeline, then the lint summary; records the no-op mark when they left the wiki clean."""
    keep_heap()
    from wikic.build import pipeline

    if check is None:
        return pipeline.build(project, opts, progress, backend_factory)
    from wikic.lint import totals

    try:
        check.before_build()
        kept = totals.take(project)  # the last lint summary: taken, so that a killed build leaves none
        # wiki/ as walked beside the inputs, read back here: after the imports above, which the
        # walk's child spent sending it
        report = pipeline.build(project, opts, progress, backend_factory, check.inputs, check.walked())
    finally:
        check.close()
    check.after_build(report)
    if report.waiting:  # stopped for a batch: the wiki is not built yet
        return report
    _lint_summary(project, report, opts.force, kept, check.wiki)
    check.record(report)
    return report


HEAP_KEPT = 1 << 30  # bytes: glibc's thresholds for giving memory back and for mmap'ing a block


def keep_heap() -> bool:
    """Freed memory kept in glibc's heap for the build's next allocations: by default a block
    over 128 kB (up to 32 MB as it adapts) is mapped on its own and unmapped when freed, and a
    free top of the heap is handed back, so each large buffer a build decodes, joins or reads
    (state blobs, walks, payloads: 10 MB each at 100,000 sources) costs its page faults anew,
    a quarter of an edit's 175,000. The build still hands the heap back where it means to
    (wiki.read.trim_heap). False where there is no glibc to ask."""
    import sys

    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # here: the no-op check never gets this far

    try:
        options = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):  # another C library
        return False
    trim, mmap = -1, -3  # M_TRIM_THRESHOLD, M_MMAP_THRESHOLD (malloc.h)
    return bool(options(trim, HEAP_KEPT)) and bool(options(mmap, HEAP_KEPT))


def _lint_summary(
    project: Project, report: Report, fresh: bool, kept: dict[str, Any] | None, after: snapshot.Tree | None
) -> None:
    """Counts by level of a deterministic lint of the built wiki (none when lint cannot run),
    at the cost of what the build changed where the last summary (`kept`) allows; `after`:
    wiki/ as the build left it."""
    from wikic.lint import totals
    from wikic.lint.runner import counts_line, open_state

    try:
        with open_state(project) as state:
            report.lint = totals.summary(project, state, report, fresh, kept, after)
    except WikicError as exc:
        report.warnings.append(f"lint did not run: {exc}")
        return
    report.lint_line = counts_line(report.lint)
