"""`wikic lint`."""

from __future__ import annotations

from typing import Any

import click

from wikic.cli.common import Ctx, guarded


@click.command()
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
        from wikic.lint.runner import LintOptions, format_json, format_text, lint_project

        if force and not fix:
            raise UsageError("--force only applies with --fix")
        project = obj.project()
        opts = LintOptions(list(rules), llm)
        result = (
            _lint_fix(project, opts, force, no_wait, fmt == "json") if fix else lint_project(project, opts)
        )
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
