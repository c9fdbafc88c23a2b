"""The command line: click commands that turn options into calls and WikicError
into a message and an exit code. The only module that imports click."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from wikic import __version__
from wikic.errors import WikicError

if TYPE_CHECKING:  # not at run time: each command imports what it runs
    from wikic.build.report import Report
    from wikic.watch.watcher import Rebuild

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class Ctx:
    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    def project(self) -> Any:
        from wikic.project import find_project

        return find_project(self.directory or Path.cwd())


def fail(exc: WikicError, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps({"error": str(exc), "exit_code": exc.exit_code}))
    click.echo(f"wikic: error: {exc}", err=True)
    sys.exit(exc.exit_code)


def guarded(as_json: bool, fn: Callable[[], int]) -> None:
    try:
        code = fn()
    except WikicError as exc:
        fail(exc, as_json)
    except KeyboardInterrupt:
        click.echo("wikic: interrupted; finished work is kept, run the command again to resume", err=True)
        sys.exit(130)
    sys.exit(code)


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="wikic")
@click.option(
    "-C",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    help="Run as if started in DIR (like git -C).",
)
@click.pass_context
def cli(ctx: click.Context, directory: Path | None) -> None:
    """wikic compiles the documents in sources/ into an interlinked Markdown wiki in
    wiki/, as schema.yaml describes, and rebuilds only what an edit affects.

    \b
    Start:   wikic init notes && cd notes && cp ~/papers/*.md sources/
    Build:   wikic build            (again: nothing to do)
    Why:     wikic build --explain
    """
    ctx.obj = Ctx(directory)


@cli.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--title", help="The wiki's title (default: the folder's name).")
@click.pass_obj
def init(obj: Ctx, directory: Path | None, title: str | None) -> None:
    """Create a new project in DIRECTORY (default: here): a commented schema.yaml
    that works as is with the embedded model, sources/, wiki/ and a .gitignore
    entry for .wikic/. Refuses to touch an existing project."""

    def run() -> int:
        from wikic.project import init_project

        base = obj.directory or Path.cwd()
        project = init_project(base / directory if directory else base, title)
        click.echo(f"created a wikic project in {project.root}")
        click.echo("next: put .md or .txt files in sources/, then run `wikic build`")
        return 0

    guarded(False, run)


@cli.command()
@click.option("--explain", is_flag=True, help="Say why each model action runs (new, source changed, ...).")
@click.option("--dry-run", is_flag=True, help="Show what would run, with estimated tokens; change nothing.")
@click.option("--offline", is_flag=True, help="Use cached model answers only; a miss fails that action.")
@click.option(
    "--force",
    is_flag=True,
    help="Overwrite pages edited by hand, and check every input instead of trusting the stat check.",
)
@click.option(
    "--retry-failed",
    is_flag=True,
    help="Ask the model again where its answers stayed unusable in an earlier build and "
    "the page was made from the source's own lines instead (otherwise kept: never paid for twice).",
)
@click.option("-j", "--jobs", type=click.IntRange(1, 64), help="Parallel model requests (API backends).")
@click.option("--json", "as_json", is_flag=True, help="Print the build report as JSON on stdout.")
@click.option("--no-wait", is_flag=True, help="Fail at once if another wikic process holds the project.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
@click.option(
    "--strict", is_flag=True, help="Fail (exit 1) when `wikic lint` finds errors in the built wiki."
)
@click.pass_obj
def build(
    obj: Ctx,
    explain: bool,
    dry_run: bool,
    offline: bool,
    force: bool,
    retry_failed: bool,
    jobs: int | None,
    as_json: bool,
    no_wait: bool,
    quiet: bool,
    strict: bool,
) -> None:
    """Compile sources/ into wiki/, running only the model calls whose inputs changed.

    Where the model's answers stay unusable after repairs, the page is made
    from the source's own lines instead, with a warning; that result is kept
    like any answer (never paid for twice) until its inputs change or
    --retry-failed.

    Exit status: 0 built, 1 some action or source failed (the rest is built
    and kept), 2 usage or configuration error."""

    def run() -> int:
        from wikic.build.report import Progress
        from wikic.build.run import BuildOptions
        from wikic.build.run import build as run_build

        progress = Progress(quiet=quiet)
        opts = BuildOptions(
            explain=explain,
            dry_run=dry_run,
            offline=offline,
            force=force,
            jobs=jobs,
            retry_failed=retry_failed,
            wait=not no_wait,
        )
        report = run_build(obj.project(), opts, progress)
        progress.end_line()
        _print_notes(report)
        if as_json:
            click.echo(json.dumps(report.to_json(), indent=2))
        elif not quiet or not report.ok:
            click.echo(report.summary(), err=True)
        lint_failed = strict and report.lint is not None and report.lint["error"] > 0
        if report.lint is not None and (not quiet or lint_failed):
            click.echo(report.lint_line + (" (--strict: build failed)" if lint_failed else ""), err=True)
        return 0 if report.ok and not lint_failed else 1

    guarded(as_json, run)


def _print_notes(report: Report) -> None:
    """What a build says besides its summary, on stderr."""
    for item in report.explain:
        click.echo(f"explain: {item['action']}: {item['reason']}", err=True)
    for item in report.would_run if report.dry_run else []:
        click.echo(f"would run: {item['action']} (~{item['estimated_tokens']} tokens)", err=True)
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    for rel in report.conflicts:
        click.echo(f"conflict: {rel} was edited by hand; kept (use --force to overwrite)", err=True)
    for err in report.errors:
        click.echo(f"error: {err['where']}: {err['message']}", err=True)


@cli.command()
@click.option(
    "--debounce",
    type=click.IntRange(0, 60_000),
    default=300,
    show_default=True,
    metavar="MS",
    help="Build once no change has come for MS milliseconds (a burst of saves is one build).",
)
@click.option(
    "--poll",
    is_flag=True,
    help="Poll the disk instead of using OS events: for network, container and other "
    "filesystems where inotify sees nothing. Used anyway, with a warning, when OS events "
    "fail.",
)
@click.option(
    "--poll-interval",
    type=click.FloatRange(0.05, 60),
    default=1.0,
    show_default=True,
    metavar="SECONDS",
    help="How often --poll looks; the quiet period is at least 1.5 times this.",
)
@click.option("--explain", is_flag=True, help="Say why each model action runs.")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), help="Parallel model requests (API backends).")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='One JSON object per build on stdout: the report of `wikic build --json` (with "lint") plus '
    '"build" (its number) and "changed" (the paths that set it off), or "error" when it could not run.',
)
@click.option("-q", "--quiet", is_flag=True, help="No progress lines; only one line per build.")
@click.pass_obj
def watch(
    obj: Ctx,
    debounce: int,
    poll: bool,
    poll_interval: float,
    explain: bool,
    jobs: int | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Build, then rebuild after every change to sources/, schema.yaml or prompts/.

    Changes are gathered until none has come for --debounce milliseconds, then
    built once; changes made during a build are built right after it. Editor
    swap and temporary files, hidden folders, wiki/ and .wikic/ are ignored; a
    page edited by hand in wiki/ is reported as a conflict at the next build and
    kept. A build that fails (a broken schema.yaml, an unreadable source, the
    model down) prints its error and the watch goes on. Each build takes the
    project lock, so a `wikic build` in another terminal waits its turn.

    \b
    Stop with Ctrl-C or SIGTERM: exit status 0, no half-written page.
    Example: wikic watch --debounce 500 --json > builds.jsonl"""

    def run() -> int:
        from wikic.build.report import Progress
        from wikic.build.run import BuildOptions
        from wikic.watch.watcher import Watcher, WatchOptions

        project = obj.project()
        opts = WatchOptions(
            BuildOptions(explain=explain, jobs=jobs),
            debounce=debounce / 1000,
            poll=poll,
            poll_interval=poll_interval,
        )
        emit = functools.partial(_emit_rebuild, as_json=as_json)
        return Watcher(project, opts, emit, _say, Progress(quiet=quiet)).run()

    guarded(as_json, run)


def _emit_rebuild(result: Rebuild, as_json: bool) -> None:
    """One build of `wikic watch`: its notes and one line on stderr, its JSON report on stdout."""
    for line in result.details():
        click.echo(line, err=True)
    click.echo(result.line(), err=True)
    if as_json:
        click.echo(json.dumps(result.to_json()))


def _say(text: str) -> None:
    click.echo(text, err=True)


@cli.command()
@click.argument("question", nargs=-1, required=True)
@click.option("--save", is_flag=True, help="File the answer in wiki/ as a page of type answer.")
@click.option("--json", "as_json", is_flag=True, help="Print the answer and its figures as JSON on stdout.")
@click.option(
    "--no-cache", is_flag=True, help="Ask the model again even if this question was answered before."
)
@click.option(
    "--stale-ok", is_flag=True, help="Answer from the wiki as it is, even if sources changed since."
)
@click.option(
    "--no-wait", is_flag=True, help="--save: fail at once if another wikic process holds the project."
)
@click.option(
    "--quote",
    is_flag=True,
    default=None,
    help="Answer with the most relevant sentences of the pages themselves, each cited; no model call "
    "(schema.yaml: ask.mode: quote).",
)
@click.pass_obj
def ask(
    obj: Ctx,
    question: tuple[str, ...],
    save: bool,
    as_json: bool,
    no_cache: bool,
    stale_ok: bool,
    no_wait: bool,
    quote: bool | None,
) -> None:
    """Answer QUESTION from the compiled wiki, citing its pages as [[Page]].

    The wiki is the prompt's prefix; with the embedded model its state is saved in
    .wikic/prefix/, so later questions (in any process) only pay for their own tokens.

    \b
    Example: wikic ask "how does HNSW trade memory for speed?"
    """

    def run() -> int:
        from wikic.ask.runner import AskOptions
        from wikic.ask.runner import ask as run_ask

        project = obj.project()
        opts = AskOptions(
            save=save,
            use_cache=not no_cache,
            stale_ok=stale_ok,
            wait=not no_wait,
            on_wait=lambda text: click.echo(text, err=True),
            quote=quote or None,
        )
        on_text = None if as_json else (lambda piece: click.echo(piece, nl=False))
        result = run_ask(project, " ".join(question), opts, on_text)
        if as_json:
            click.echo(json.dumps(result.to_json(), indent=2))
            return 0
        click.echo("")
        for line in _ask_notes(result):
            click.echo(line, err=True)
        return 0

    guarded(as_json, run)


def _ask_notes(result: Any) -> list[str]:
    notes = []
    if result.answer_cached:
        notes.append("(a stored answer from an earlier ask on this wiki; --no-cache asks the model again)")
    if result.pages:
        notes.append("cited: " + ", ".join(result.pages))
    if result.dropped_citations:
        notes.append(
            "dropped citations (no such page in the context): " + ", ".join(result.dropped_citations)
        )
    for sentence in result.unsupported:
        notes.append(f"UNSUPPORTED (no page shown says this): {sentence}")
    if result.sources_shown:
        notes.append("source lines shown: " + ", ".join(result.sources_shown))
    if result.mode == "quote":
        notes.append("(quoted from the pages: no model was asked)")
    elif not result.answer_cached:
        prefix = "restored" if result.prefix_cached else "evaluated"
        notes.append(
            f"prefix: {result.prefix_tokens} tokens ({prefix}), question: {result.question_tokens} "
            f"tokens, first token after {result.seconds['first_token']:.2f} s"
        )
    if result.saved:
        notes.append(f"saved: {result.saved} (run `wikic build` to list it in index.md)")
    return notes


@cli.command()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: `path:line: level rule-id message` grouped by file; json: a list of findings.",
)
@click.option(
    "--rule",
    "rules",
    multiple=True,
    metavar="ID",
    help="Run only this rule (repeatable), even if schema.yaml turns it off.",
)
@click.option(
    "--fix",
    is_flag=True,
    help="Apply the mechanical fixes: relink near-miss links, drop links to "
    "nothing (keeping their text), rebuild index.md; then report what is left.",
)
@click.option(
    "--force", is_flag=True, help="With --fix: also change pages edited by hand or not written by wikic."
)
@click.option(
    "--llm",
    is_flag=True,
    help="Also run the model-based rules (contradiction, unsupported-claim); answers are cached in .wikic/.",
)
@click.option(
    "--no-wait", is_flag=True, help="With --fix: fail at once if another wikic process holds the project."
)
@click.pass_obj
def lint(
    obj: Ctx, fmt: str, rules: tuple[str, ...], fix: bool, force: bool, llm: bool, no_wait: bool
) -> None:
    """Check the wiki's health: each finding with its rule id, file and line.

    \b
    Rules: broken-link, orphan-page, missing-page, duplicate-page, stale-page,
    hand-edit, uncited-claim, bad-citation, frontmatter, empty-page, index-drift;
    with --llm also contradiction, unsupported-claim.
    Levels in schema.yaml:  lint: {rules: {orphan-page: off, uncited-claim: error}}
    Suppress in a page:     <!-- wikic-lint: disable=orphan-page,uncited-claim -->

    Exit status: 0 no error-level finding, 1 some, 2 usage or configuration error."""

    def run() -> int:
        from wikic.errors import UsageError
        from wikic.lint.runner import LintOptions, format_json, format_text
        from wikic.lint.runner import lint as run_lint

        if force and not fix:
            raise UsageError("--force only applies with --fix")
        project = obj.project()
        opts = LintOptions(list(rules), llm)
        result = _lint_fix(project, opts, force, no_wait, fmt == "json") if fix else run_lint(project, opts)
        for note in result.notes:
            click.echo(f"note: {note}", err=True)
        click.echo(format_json(result) if fmt == "json" else format_text(result))
        return 1 if result.failed else 0

    guarded(fmt == "json", run)


def _lint_fix(project: Any, opts: Any, force: bool, no_wait: bool, quiet_stdout: bool) -> Any:
    from wikic.config import load_schema
    from wikic.lint.fix import apply_fixes
    from wikic.lint.runner import lint as run_lint
    from wikic.lock import ProjectLock

    with ProjectLock(project.lock_path, wait=not no_wait, on_wait=lambda text: click.echo(text, err=True)):
        schema = load_schema(project.schema_path)
        result = run_lint(project, opts, schema)
        fixes = apply_fixes(project, schema, result.findings, force)
        if fixes.changed:
            result = run_lint(project, opts, schema)
    for line in fixes.changed:
        click.echo(f"fixed: {line}", err=quiet_stdout)
    for line in fixes.skipped:
        click.echo(f"skipped: {line}", err=True)
    if not fixes.changed and not quiet_stdout:
        click.echo("fixed: nothing to fix mechanically")
    return result


def main() -> None:
    cli(prog_name="wikic")
