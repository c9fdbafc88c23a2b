"""`wikic init`, `wikic build` and `wikic watch`."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from wikic.cli.building import run_build
from wikic.cli.common import Ctx, guarded

if TYPE_CHECKING:  # not at run time: each command imports what it runs
    from wikic.watch.watcher import Rebuild


@click.command()
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


@click.command()
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
@click.option(
    "--batch",
    is_flag=True,
    help="Send each stage's model calls through the provider's Batch API (model.backend: openai; "
    "often half the price, answers within 24 h) and stop; a later `wikic build` collects them.",
)
@click.option(
    "--wait",
    "batch_wait",
    is_flag=True,
    help="Wait for submitted batches (polling every model.batch_poll seconds) and go on to the next stage.",
)
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
    batch: bool,
    batch_wait: bool,
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

    With --batch (or model.batch: auto), a stage's calls go to the provider's
    Batch API and the build stops, saying so; the next `wikic build` (or
    --wait) collects the answers, checks each one as a live answer, and goes on.

    Exit status: 0 built (or waiting on a batch), 1 some action or source failed (the rest is built
    and kept), 2 usage or configuration error."""

    run_build(
        obj,
        explain=explain,
        dry_run=dry_run,
        offline=offline,
        force=force,
        retry_failed=retry_failed,
        jobs=jobs,
        batch=batch,
        batch_wait=batch_wait,
        as_json=as_json,
        no_wait=no_wait,
        quiet=quiet,
        strict=strict,
    )


@click.command()
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
        from wikic.build.progress import Progress
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
