"""ninja-style progress lines of a build on stderr. Apart from report.py (which imports it
from here) so that the no-op build, which prints no report class, loads no dataclass."""

from __future__ import annotations

import sys
from typing import TextIO


class Progress:
    """`[3/12] write concept: Vector databases` on stderr; one updating line on a terminal."""

    def __init__(self, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.tty = self.stream.isatty()
        self._open = False

    def step(self, done: int, total: int, label: str) -> None:
        if self.quiet:
            return
        line = f"[{done}/{total}] {label}"
        if self.tty:
            self.stream.write("\r\x1b[K" + line[:200])
            self._open = True
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def message(self, text: str) -> None:
        if self.quiet:
            return
        self.end_line()
        self.stream.write(text + "\n")
        self.stream.flush()

    def end_line(self) -> None:
        if self._open:
            self.stream.write("\n")
            self._open = False
