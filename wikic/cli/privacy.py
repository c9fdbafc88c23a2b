"""`wikic forget` and `wikic gc`: deleting a source for good, and cached answers nothing uses."""

from __future__ import annotations

import json
from pathlib import Path

import click

from wikic.cli.common import Ctx, guarded


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--offline", is_flag=True, help="Rewrite shared pages from cached model answers only.")
@click.option("--json", "as_json", is_flag=True, help="Print what went, and the build report, as JSON.")
@click.option("--no-wait", is_flag=True, help="Fail at once if another wikic process holds the project.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
@click.pass_obj
def forget(
    obj: Ctx, paths: tuple[Path, ...], offline: bool, as_json: bool, no_wait: bool, quiet: bool
) -> None:
    """Delete sources (files, or folders under sources/) and everything made from them.

    The files are deleted, then a build removes their pages and rewrites the
    pages they shared (their notes go), and everything else that held their
    text goes: cached model answers, saved ask answers that cite only their
    pages (an answer edited by hand is kept, and reported), every saved prefix
    state, their page names and paths in log.md; what is deleted from state.db
    is zeroed and its WAL emptied, so no deleted byte stays in it or its WAL.
    Deleting a source and running
    `wikic build` does the same.

    Exit status: 0 forgotten, 1 the rebuild of shared pages failed (run
    `wikic build` again), 2 usage error."""

    def run() -> int:
        from wikic.build.report import Progress
        from wikic.build.run import BuildOptions
        from wikic.build.run import build as run_build
        from wikic.privacy.forget import delete_sources, sources_to_forget
        from wikic.state import State

        project = obj.project()
        known: list[str] = []
        if project.state_path.exists():
            with State.open(project.state_path) as state:
                known = list(state.source_stats())
        rels = sources_to_forget(project, list(paths), known, obj.directory or Path.cwd())
        delete_sources(project, rels)
        progress = Progress(quiet=quiet)
        opts = BuildOptions(offline=offline, wait=not no_wait)
        report = run_build(project, opts, progress)
        progress.end_line()
        if as_json:
            click.echo(json.dumps({"forgotten": rels, "build": report.to_json()}, indent=2))
        else:
            for warning in report.warnings:
                click.echo(f"warning: {warning}", err=True)
            click.echo(f"forgot {len(rels)} source(s); {report.summary()}", err=True)
        return 0 if report.ok else 1

    guarded(as_json, run)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print what was removed as JSON.")
@click.option("--no-wait", is_flag=True, help="Fail at once if another wikic process holds the project.")
@click.pass_obj
def gc(obj: Ctx, as_json: bool, no_wait: bool) -> None:
    """Delete cached model answers nothing refers to any more (those of older
    sources, prompts or models; ask and lint --llm answers made for an older
    wiki), then compact .wikic/state.db. The current build's answers stay, so
    `wikic build --offline` still replays it."""

    def run() -> int:
        from wikic.privacy.forget import NOT_COMPACTED
        from wikic.privacy.gc import collect

        done = collect(obj.project(), wait=not no_wait)
        if not done.compacted:
            click.echo(f"warning: {NOT_COMPACTED}", err=True)
        if as_json:
            click.echo(json.dumps(done.to_json(), indent=2))
        else:
            click.echo(
                f"removed {done.model_answers} unused model answers and {done.loose_answers} older "
                f"ask/lint answers; .wikic/state.db {done.bytes_before:,} -> {done.bytes_after:,} bytes",
                err=True,
            )
        return 0

    guarded(as_json, run)
