"""The `wikic` program's entry point. `wikic build` with only its own flags (the command run
again and again, most often with nothing to do) runs without loading click, whose import
alone is a fifth of a no-op build at 10,000 sources; any other command line, help and
every mistake included, goes to the click commands (main.py), which parse it as before."""

from __future__ import annotations

import atexit
import gc
import os
import sys
from pathlib import Path
from typing import Any

FLAGS = {
    "--explain": "explain",
    "--dry-run": "dry_run",
    "--offline": "offline",
    "--force": "force",
    "--retry-failed": "retry_failed",
    "--batch": "batch",
    "--wait": "batch_wait",
    "--json": "as_json",
    "--no-wait": "no_wait",
    "-q": "quiet",
    "--quiet": "quiet",
    "--strict": "strict",
}
JOBS = ("-j", "--jobs")


def quick_build(argv: list[str]) -> tuple[Path | None, dict[str, Any]] | None:
    """`[-C DIR] build [flags...]` as (DIR, the build command's options), or None for anything
    click must parse: another command, --help, an unknown or malformed option, a -C that is
    not a readable folder (click says why)."""
    directory = None
    if argv[:1] == ["-C"] and len(argv) > 1:
        if not (os.path.isdir(argv[1]) and os.access(argv[1], os.R_OK)):
            return None
        directory, argv = Path(argv[1]), argv[2:]
    if argv[:1] != ["build"]:
        return None
    options: dict[str, Any] = {}
    rest = iter(argv[1:])
    for arg in rest:
        if arg in FLAGS:
            options[FLAGS[arg]] = True
            continue
        if arg in JOBS:
            arg = next(rest, "")
        elif arg.startswith("--jobs="):
            arg = arg.removeprefix("--jobs=")
        elif arg.startswith("-j") and arg[2:].isdigit():
            arg = arg[2:]
        else:
            return None
        if not (arg.isascii() and arg.isdigit() and 1 <= int(arg) <= 64):
            return None
        options["jobs"] = int(arg)
    return directory, options


def main() -> None:
    # registered first, so run last: the interpreter's final collection walks every object the
    # command left (0.4-0.6 s after a -j 64 build of 128 sources); the OS frees them at once
    atexit.register(gc.freeze)
    # A command builds large structures of small objects that live until it ends (a kept plan
    # of 100,000 sources decodes into millions): the collector's default pace walks them over
    # and over (0.07-0.1 s of a one-source edit at 10,000 sources, 0.5 s at 100,000, 4% of a
    # full build). Our cycles are few; a young generation this large lets them wait, as mypy does.
    gc.set_threshold(200_000, 30, 30)
    # pydantic looks for plugins (the entry points of every installed distribution: 40 ms with
    # importlib.metadata) when it builds a model, and wikic's are built where first used
    # (config.py): the wikic program never runs one; a user's own setting is kept
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    quick = quick_build(sys.argv[1:])
    if quick is None:
        from wikic.cli.main import cli

        cli(prog_name="wikic")
        return
    from wikic.cli.building import run_build
    from wikic.cli.common import Ctx

    directory, options = quick
    run_build(Ctx(directory), **options)
