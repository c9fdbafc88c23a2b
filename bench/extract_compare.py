"""Two candidates per format on the same real files (bench/extract.py --compare):
pypdf vs pdfminer.six for PDF, trafilatura vs readability-lxml + markdownify for
HTML: seconds, words kept, Markdown headings kept. A candidate that is not
installed is reported as such, not failed."""

from __future__ import annotations

import io
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HEADING = re.compile(r"^#{1,6} +\S", re.M)


def _pypdf(raw: bytes) -> str:
    from pypdf import PdfReader

    return "\n".join(p.extract_text() or "" for p in PdfReader(io.BytesIO(raw)).pages)


def _pdfminer(raw: bytes) -> str:
    from pdfminer.high_level import extract_text

    return str(extract_text(io.BytesIO(raw)))


def _trafilatura(raw: bytes) -> str:
    from wikic.sources.web import html_markdown

    return html_markdown(raw.decode("utf-8", "replace"), "bench")[1]


def _readability(raw: bytes) -> str:
    from markdownify import markdownify
    from readability import Document

    return str(markdownify(Document(raw.decode("utf-8", "replace")).summary(), heading_style="ATX"))


CANDIDATES: dict[str, list[tuple[str, Callable[[bytes], str]]]] = {
    ".pdf": [("pypdf", _pypdf), ("pdfminer.six", _pdfminer)],
    ".html": [("trafilatura", _trafilatura), ("readability-lxml", _readability)],
}


def compare(files: list[Path]) -> list[dict[str, Any]]:
    rows = []
    for path in files:
        raw = path.read_bytes()
        for name, run in CANDIDATES.get(path.suffix.lower(), []):
            row: dict[str, Any] = {"file": path.name, "candidate": name}
            try:
                started = time.perf_counter()
                text = run(raw)
                row.update(seconds=time.perf_counter() - started, words=len(text.split()))
                row["headings"] = len(HEADING.findall(text))
            except ImportError:
                row["error"] = "not installed"
            rows.append(row)
    print("| file | candidate | seconds | words | headings |\n|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['file']} | {r['candidate']} | {r['error']} | | |")
        else:
            print(
                f"| {r['file']} | {r['candidate']} | {r['seconds']:.2f} | {r['words']:,} | {r['headings']} |"
            )
    return rows
