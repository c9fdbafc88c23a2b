"""`wikic serve`, `wikic site` and `wikic graph`: looking at the wiki."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

import click

from wikic.cli.common import Ctx, guarded

GRAPH_LIMIT = click.option(
    "--graph-limit",
    default=500,
    show_default=True,
    type=click.IntRange(0),
    help="Most pages the whole-wiki graph draws (0: all).",
)


@click.command()
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="Address to listen on (loopback only by default)."
)
@click.option(
    "--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port; 0 picks a free one."
)
@click.option("--open", "open_browser", is_flag=True, help="Open the home page in a browser.")
@click.option("--watch", is_flag=True, help="Rebuild on every change, as `wikic watch`; open pages reload.")
@click.option("--poll", is_flag=True, help="--watch: poll instead of filesystem events.")
@click.option("--no-lint", is_flag=True, help="Do not run lint to show findings (faster on big wikis).")
@GRAPH_LIMIT
@click.option(
    "--stale-ok",
    is_flag=True,
    help="The ask box answers from the wiki as it is, even if sources changed since.",
)
@click.option("-q", "--quiet", is_flag=True, help="--watch: no progress lines; one line per build.")
@click.pass_obj
def serve(
    obj: Ctx,
    host: str,
    port: int,
    open_browser: bool,
    watch: bool,
    poll: bool,
    no_lint: bool,
    graph_limit: int,
    stale_ok: bool,
    quiet: bool,
) -> None:
    """Show the wiki in a browser: pages with clickable [[links]] and backlinks, citations
    that open the cited source lines, search, the graph, lint health and an ask box.

    Read-only: sources/ and wiki/ are never written (the ask box caches its answers in
    .wikic/ as `wikic ask` does). It listens on 127.0.0.1; --host 0.0.0.0 shows the wiki,
    its sources and the ask box to anyone who can reach this machine.

    \b
    Example: wikic serve --watch --open
    """

    def run() -> int:
        from wikic.web.server import Viewer

        project = obj.project()
        viewer = Viewer(project, not no_lint, graph_limit, live=watch, stale_ok=stale_ok)
        server = _listen(viewer, host, port, open_browser)
        if watch:
            return _serve_watching(project, server, viewer, poll, quiet)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
        return 0

    guarded(False, run)


def _listen(viewer: Any, host: str, port: int, open_browser: bool) -> Any:
    """The server, bound; its URL on stderr (a warning first when it is not loopback only)."""
    from wikic.errors import UsageError
    from wikic.web.server import LOOPBACK, make_server

    if host not in LOOPBACK:
        click.echo(
            f"wikic serve: warning: listening on {host}: anyone who can reach this machine can read "
            "the wiki and its sources and use the ask box (the model); use the default 127.0.0.1 "
            "unless you mean it",
            err=True,
        )
    try:
        server = make_server(viewer, host, port)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; try --port 0") from exc
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{server.server_address[1]}/"
    click.echo(f"wikic serve: {url} (Ctrl-C to stop)", err=True)
    if open_browser:
        import webbrowser

        if not webbrowser.open(url):  # no browser here (a server, ssh): say so, not nothing
            click.echo(f"wikic serve: found no browser to open; open {url} yourself", err=True)
    return server


def _serve_watching(project: Any, server: Any, viewer: Any, poll: bool, quiet: bool) -> int:
    """The server in a thread; `wikic watch`'s own loop in this one (it handles the signals)."""
    from wikic.build.report import Progress
    from wikic.watch.watcher import Rebuild, Watcher, WatchOptions

    def emit(result: Rebuild) -> None:
        report = result.report
        written = [*report.written, *report.removed] if report is not None else []
        viewer.on_build(written, result.changed)
        for line in result.details():
            click.echo(line, err=True)
        click.echo(result.line(), err=True)

    thread = threading.Thread(target=server.serve_forever, name="wikic-serve", daemon=True)
    thread.start()
    try:
        code = Watcher(project, WatchOptions(poll=poll), emit, _say, Progress(quiet=quiet)).run()
    finally:
        server.shutdown()
        server.server_close()
    return int(code)


def _say(text: str) -> None:
    click.echo(text, err=True)


@click.command()
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
@click.option("--no-lint", is_flag=True, help="No lint findings on the pages and the health page (faster).")
@GRAPH_LIMIT
@click.option("--json", "as_json", is_flag=True, help="Print what was written and removed as JSON on stdout.")
@click.pass_obj
def site(obj: Ctx, out: Path, no_lint: bool, graph_limit: int, as_json: bool) -> None:
    """Export the wiki as a static HTML site in OUT: the same pages as `wikic serve`, with
    relative links, so it works from file:// and on any static host (GitHub Pages, S3);
    search and the graph work without a server. Run it again after a build: only the
    pages that changed are rewritten, and pages that went away are removed.

    \b
    Example: wikic site public && python -m http.server -d public
    """

    def run() -> int:
        from wikic.web.site import export

        report = export(obj.project(), out, lint=not no_lint, graph_limit=graph_limit)
        if as_json:
            click.echo(json.dumps(report.to_json(), indent=2))
        else:
            click.echo(
                f"wikic site: {out}: {report.pages} pages; {len(report.written)} files written, "
                f"{len(report.removed)} removed, in {report.seconds:.2f}s; open {out / 'index.html'}",
                err=True,
            )
        return 0

    guarded(as_json, run)


@click.command()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "dot", "graphml"]),
    default="json",
    show_default=True,
    help="Output format.",
)
@click.pass_obj
def graph(obj: Ctx, fmt: str) -> None:
    """Print the dependency graph (sources, the build's actions, pages, links), as
    `ninja -t graph` does: JSON ({"nodes": [...], "edges": [...]}), Graphviz dot or GraphML.

    \b
    Examples: wikic graph --format dot | dot -Tsvg > graph.svg
              wikic graph --format graphml > wiki.graphml   (open in Gephi)
    """

    def run() -> int:
        from wikic.web.graph import dependency_graph, render
        from wikic.web.model import Model

        sys.stdout.write(render(dependency_graph(Model.load(obj.project(), lint=False)), fmt))
        return 0

    guarded(fmt == "json", run)
