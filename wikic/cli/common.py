"""What every command shares: the -C context, and turning a WikicError into a
message and an exit code."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

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
