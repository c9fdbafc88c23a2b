"""Office files to Markdown: Word (python-docx: headings, lists, tables in document
order), slides (python-pptx: one section per slide, its text and notes), sheets
(openpyxl) and CSV (stdlib) as tables of at most Limits.max_rows rows."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from typing import Any

from wikic.errors import SourceError
from wikic.sources.extract import Extracted, Limits, Lines, open_zip
from wikic.sources.formats import missing_extra


def extract(kind: str, path: str, raw: bytes, limits: Limits) -> Extracted:
    out = Lines(path, limits)
    if kind == "csv":
        _csv(path, raw, limits, out)
        return out.result()
    open_zip(path, raw, limits).close()  # bound what the library will unpack, first
    if kind == "docx":
        _docx(raw, out)
    elif kind == "pptx":
        _pptx(raw, out)
    else:
        _xlsx(raw, limits, out)
    return out.result()


def _docx(raw: bytes, out: Lines) -> None:
    try:
        import docx
        from docx.table import Table
    except ImportError:
        raise missing_extra(out.path, "python-docx") from None
    document = docx.Document(io.BytesIO(raw))
    # a style's name by its id, looked up once: Paragraph.style searches the styles part
    # for the default style on every unstyled paragraph (70% of the time on a plain file)
    names = {style.style_id: style.name or "" for style in document.styles}
    in_list = False
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            text, style = table([[cell.text for cell in row.cells] for row in block.rows]), ""
        else:
            text = " ".join(block.text.split())
            style = names.get(block._p.style or "", "")
        if not text:
            continue
        if in_list and not style.startswith("List"):
            out.gap()  # a list's items stay together; a blank line after the list
        out.add(_styled(text, style))
        in_list = style.startswith("List")
        if not in_list:
            out.gap()


def _styled(text: str, style: str) -> str:
    """A paragraph as Markdown by its Word style: Title and Heading N are headings."""
    if style == "Title":
        return f"# {text}"
    if style.startswith("Heading") and style[-1:].isdigit():
        return f"{'#' * min(int(style.split()[-1]) + 1, 6)} {text}"
    if style.startswith("List Number"):
        return f"1. {text}"
    if style.startswith("List"):
        return f"- {text}"
    return text


def _pptx(raw: bytes, out: Lines) -> None:
    try:
        from pptx import Presentation
    except ImportError:
        raise missing_extra(out.path, "python-pptx") from None
    for n, slide in enumerate(Presentation(io.BytesIO(raw)).slides, 1):
        title_shape = slide.shapes.title
        title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None else ""
        out.add(f"## Slide {n}: {title}" if title else f"## Slide {n}")
        out.gap()
        for shape in slide.shapes:
            if title_shape is not None and shape.shape_id == title_shape.shape_id:
                continue
            if getattr(shape, "has_table", False):
                out.add(table([[c.text for c in row.cells] for row in shape.table.rows]))
            elif getattr(shape, "has_text_frame", False):
                for para in shape.text_frame.paragraphs:
                    text = " ".join("".join(r.text for r in para.runs).split())
                    if text:
                        out.add(f"{'  ' * para.level}- {text}")
            out.gap()
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes = slide.notes_slide.notes_text_frame.text.strip()
            if notes:
                out.add(f"Notes: {' '.join(notes.split())}")
                out.gap()


def _xlsx(raw: bytes, limits: Limits, out: Lines) -> None:
    try:
        from openpyxl import load_workbook  # type: ignore[import-untyped]
    except ImportError:
        raise missing_extra(out.path, "openpyxl") from None
    book = load_workbook(io.BytesIO(raw), read_only=True, data_only=True)
    try:
        for sheet in book.worksheets:
            rows = [[_cell(v) for v in row] for row in _bounded(sheet.iter_rows(values_only=True), limits)]
            out.add(f"## {sheet.title}")
            out.gap()
            _rows(out, [r for r in rows if any(r)], limits, sheet.max_row)
            out.gap()
    finally:
        book.close()


def _csv(path: str, raw: bytes, limits: Limits, out: Lines) -> None:
    from wikic.sources.read import decode  # one decoder for every text a person saves

    text = decode(raw, path)
    try:
        dialect: Any = csv.Sniffer().sniff(text[:4096], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    try:
        rows = list(_bounded(csv.reader(io.StringIO(text), dialect), limits))
    except csv.Error as exc:
        raise SourceError(path, f"is not valid CSV: {exc}") from exc
    _rows(out, rows, limits, None)


def _bounded(rows: Iterable[Sequence[Any]], limits: Limits) -> Iterable[Sequence[Any]]:
    """The header row and up to max_rows rows after it, and one more to tell that it was cut."""
    for n, row in enumerate(rows):
        if n > limits.max_rows + 1:
            return
        yield row


def _rows(out: Lines, rows: list[Sequence[Any]], limits: Limits, total: int | None) -> None:
    """The rows as a table, and a line saying so where rows were left out."""
    out.add(table(rows[: limits.max_rows + 1]) if rows else "(empty)")
    if len(rows) > limits.max_rows + 1:
        of = f" of {total:,}" if total else ""
        out.add(f"(only the first {limits.max_rows:,} rows{of} are read)")


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def table(rows: list[Sequence[Any]]) -> str:
    """Rows as a Markdown table, the first row as its header."""
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    cells = [
        [" ".join(str(c).split()).replace("|", "\\|") for c in r] + [""] * (width - len(r)) for r in rows
    ]
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + " --- |" * width]
    lines += ["| " + " | ".join(r) + " |" for r in cells[1:]]
    return "\n".join(lines)
