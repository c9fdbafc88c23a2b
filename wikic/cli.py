"""The command line: click commands that turn options into calls and WikicError
into a message and an exit code. The only module that imports click."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from wikic import __version__
from wikic.errors import WikicError

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
@click.option("-C", "directory", type=click.Path(file_okay=False, path_type=Path),
              help="Run as if started in DIR (like git -C).")
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
@click.option("--force", is_flag=True, help="Overwrite pages edited by hand and rebuild from scratch.")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), help="Parallel model requests (API backends).")
@click.option("--json", "as_json", is_flag=True, help="Print the build report as JSON on stdout.")
@click.option("--no-wait", is_flag=True, help="Fail at once if another wikic process holds the project.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
@click.pass_obj
def build(obj: Ctx, explain: bool, dry_run: bool, offline: bool, force: bool, jobs: int | None,
          as_json: bool, no_wait: bool, quiet: bool) -> None:
    """Compile sources/ into wiki/, running only the model calls whose inputs changed.

    Exit status: 0 built, 1 some action or source failed (the rest is built
    and kept), 2 usage or configuration error."""

    def run() -> int:
        from wikic.build import BuildOptions
        from wikic.build import build as run_build
        from wikic.lock import ProjectLock
        from wikic.report import Progress

        project = obj.project()
        progress = Progress(quiet=quiet)
        opts = BuildOptions(explain=explain, dry_run=dry_run, offline=offline, force=force, jobs=jobs)
        with ProjectLock(project.lock_path, wait=not no_wait, on_wait=progress.message):
            report = run_build(project, opts, progress)
        progress.end_line()
        for item in report.explain:
            click.echo(f"explain: {item['action']}: {item['reason']}", err=True)
        for item in report.would_run if dry_run else []:
            click.echo(f"would run: {item['action']} (~{item['estimated_tokens']} tokens)", err=True)
        for warning in report.warnings:
            click.echo(f"warning: {warning}", err=True)
        for rel in report.conflicts:
            click.echo(f"conflict: {rel} was edited by hand; kept (use --force to overwrite)", err=True)
        for err in report.errors:
            click.echo(f"error: {err['where']}: {err['message']}", err=True)
        if as_json:
            click.echo(json.dumps(report.to_json(), indent=2))
        elif not quiet or not report.ok:
            click.echo(report.summary(), err=True)
        return 0 if report.ok else 1

    guarded(as_json, run)


@cli.command()
@click.option("--debounce", type=click.IntRange(0, 60_000), default=300, show_default=True, metavar="MS",
              help="Build once no change has come for MS milliseconds (a burst of saves is one build).")
@click.option("--poll", is_flag=True,
              help="Poll the disk instead of using OS events: for network, container and other "
                   "filesystems where inotify sees nothing. Used anyway, with a warning, when OS events fail.")
@click.option("--poll-interval", type=click.FloatRange(0.05, 60), default=1.0, show_default=True,
              metavar="SECONDS", help="How often --poll looks; the quiet period is at least 1.25 times this.")
@click.option("--explain", is_flag=True, help="Say why each model action runs.")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), help="Parallel model requests (API backends).")
@click.option("--json", "as_json", is_flag=True,
              help='One JSON object per build on stdout: the build report plus "build" (its number) and '
                   '"changed" (the paths that set it off), or "error" when it could not run.')
@click.option("-q", "--quiet", is_flag=True, help="No progress lines; only one line per build.")
@click.pass_obj
def watch(obj: Ctx, debounce: int, poll: bool, poll_interval: float, explain: bool, jobs: int | None,
          as_json: bool, quiet: bool) -> None:
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
        from wikic.build import BuildOptions
        from wikic.report import Progress
        from wikic.watch import Rebuild, Watcher, WatchOptions

        project = obj.project()

        def emit(result: Rebuild) -> None:
            for line in result.details():
                click.echo(line, err=True)
            click.echo(result.line(), err=True)
            if as_json:
                click.echo(json.dumps(result.to_json()))

        opts = WatchOptions(BuildOptions(explain=explain, jobs=jobs), debounce=debounce / 1000,
                            poll=poll, poll_interval=poll_interval)
        return Watcher(project, opts, emit, lambda text: click.echo(text, err=True), Progress(quiet=quiet)).run()

    guarded(as_json, run)


def _not_yet(name: str) -> Callable[..., None]:
    def command(**_: Any) -> None:
        click.echo(f"wikic {name}: not yet implemented", err=True)
        sys.exit(2)

    return command


cli.command("lint", help="Check the wiki's health (not yet implemented).")(_not_yet("lint"))
cli.command("ask", help="Answer a question from the wiki (not yet implemented).")(_not_yet("ask"))


def main() -> None:
    cli(prog_name="wikic")
