"""`wikic add URL|FILE...`."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import click

from wikic.cli.common import Ctx, guarded


@click.command()
@click.argument("items", nargs=-1, required=True, metavar="URL|FILE...")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=20.0,
    show_default=True,
    help="Seconds to wait for a URL.",
)
@click.option(
    "--max-bytes",
    type=click.IntRange(min=1),
    default=20_000_000,
    show_default=True,
    help="Refuse a URL whose answer is larger.",
)
@click.option("--force", is_flag=True, help="Replace a file of the same name in sources/ that differs.")
@click.option("--json", "as_json", is_flag=True, help="Print what was added as one JSON document.")
@click.pass_obj
def add(obj: Ctx, items: tuple[str, ...], timeout: float, max_bytes: int, force: bool, as_json: bool) -> None:
    """Add sources: fetch each URL into sources/ as Markdown, copy each FILE in.

    \b
    A URL (http or https) is saved as a web clip: the page's main content (not its
    navigation, header or footer) as Markdown, with its url, title and fetch date in
    the front matter. Adding the same URL again updates that file, or leaves it as it
    is when the page did not change. A PDF, DOCX, ... at a URL is saved as that file.
    A FILE is copied into sources/: .md .txt .markdown .pdf .docx .pptx .xlsx .csv
    .html .htm .epub. Then `wikic build`.

    \b
    Example:  wikic add https://ninja-build.org/manual.html ~/papers/report.pdf

    Each item that fails is reported and the others are still added (exit 1).
    """

    def run() -> int:
        from wikic.errors import WikicError
        from wikic.sources.add import add_file, add_url
        from wikic.sources.fetch import check_url

        root = obj.project().root
        done, failed = [], []
        for item in items:
            try:
                if "://" in item:
                    check_url(item)
                    added = add_url(root, item, timeout, max_bytes, dt.date.today())
                else:
                    added = add_file(root, Path(item), force)
            except WikicError as exc:
                failed.append({"from": item, "error": str(exc)})
                click.echo(f"wikic: error: {exc}", err=True)
                continue
            done.append(added.to_json())
            if not as_json:
                click.echo(f"{added.status:9} {added.path}  <- {item}")
        if as_json:
            click.echo(json.dumps({"added": done, "errors": failed}))
        return 1 if failed else 0

    guarded(as_json, run)
