"""`wikic mcp`."""

from __future__ import annotations

import click

from wikic.cli.common import Ctx, guarded

DEFAULT_PORT = 8765


@click.command()
@click.option(
    "--http",
    is_flag=True,
    help="Serve Streamable HTTP on 127.0.0.1 (at /mcp) instead of stdio, for clients that connect by URL.",
)
@click.option(
    "--port", type=click.IntRange(1, 65535), help=f"With --http: the port (default {DEFAULT_PORT})."
)
@click.option(
    "--allow-write",
    is_flag=True,
    help="Also offer the tools that change the project: build and save_answer (they take the project "
    "lock, as the CLI does).",
)
@click.pass_obj
def mcp(obj: Ctx, http: bool, port: int | None, allow_write: bool) -> None:
    """Serve the compiled wiki to AI agents over the Model Context Protocol.

    Tools: search, read_page, read_source, index, ask, lint; with --allow-write also
    build and save_answer. Resources: every page as wiki://page/<name>, and wiki://index.
    Read-only by default; read_source reads inside sources/ only; text from pages and
    sources is returned as data. Messages go to stderr: stdout is the protocol's.

    \b
    Claude Code:  claude mcp add wikic -- wikic -C /path/to/project mcp
    Over HTTP:    wikic mcp --http --port 8765   (then http://127.0.0.1:8765/mcp)
    """

    def run() -> int:
        from wikic.errors import UsageError
        from wikic.mcp.tools import Tools

        try:
            from wikic.mcp.server import serve
        except ModuleNotFoundError as exc:
            if (exc.name or "").split(".")[0] != "mcp":
                raise
            raise UsageError(
                "wikic mcp needs the MCP SDK, which is not installed: pip install 'wikic[mcp]'"
            ) from exc
        if port is not None and not http:
            raise UsageError("--port applies to --http only (stdio needs no port)")
        listen = port or DEFAULT_PORT
        project = obj.project()
        if http:
            click.echo(f"wikic mcp: serving {project.root} at http://127.0.0.1:{listen}/mcp", err=True)
        serve(Tools(project, allow_write), http, listen)
        return 0

    guarded(False, run)
