"""The command line: the `wikic` group and its commands, one module per family.
The cli package is the only place that imports click."""

from __future__ import annotations

from pathlib import Path

import click

from wikic import __version__
from wikic.cli.add import add
from wikic.cli.ask import ask
from wikic.cli.build import build, init, watch
from wikic.cli.common import CONTEXT, Ctx
from wikic.cli.lint import lint
from wikic.cli.mcp import mcp
from wikic.cli.privacy import forget, gc
from wikic.cli.web import graph, serve, site


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


for command in (init, build, watch, ask, lint, mcp, forget, gc, serve, site, graph, add):
    cli.add_command(command)


def main() -> None:
    """The program (entry.py: `wikic build` may not come here at all)."""
    from wikic.cli.entry import main as entry

    entry()
