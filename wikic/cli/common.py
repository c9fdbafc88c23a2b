"""What every command shares: the -C context, printing, and turning a WikicError into a
message and an exit code. Without click: `wikic build`'s quick path (entry.py) uses it."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wikic.errors import WikicError, interrupted, refused

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class Ctx:
    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    def project(self) -> Any:
        from wikic.project import find_project

        return find_project(self.directory or Path.cwd())


def echo(text: str, err: bool = False) -> None:
    """One line on stdout (or stderr), flushed: what click.echo does with plain text."""
    stream = sys.stderr if err else sys.stdout
    if stream is None:  # no console (pythonw): nowhere to say it
        return
    stream.write(text + "\n")
    stream.flush()


def fail(exc: WikicError, as_json: bool) -> None:
    if as_json:
        echo(json.dumps({"error": str(exc), "exit_code": exc.exit_code}))
    echo(f"wikic: error: {exc}", err=True)
    sys.exit(exc.exit_code)


def guarded(as_json: bool, fn: Callable[[], int]) -> None:
    try:
        code = fn()
    except (KeyboardInterrupt, Exception) as exc:
        if interrupted(exc):
            echo("wikic: interrupted; finished work is kept, run the command again to resume", err=True)
            sys.exit(130)
        error = exc if isinstance(exc, WikicError) else refused(exc) if isinstance(exc, OSError) else None
        if error is None:
            raise
        fail(error, as_json)
    sys.exit(code)
