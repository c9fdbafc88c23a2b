"""Real files of every format wikic extracts, made by the libraries that write them
(fpdf2, pypdf, python-docx, python-pptx, openpyxl, ebooklib): no committed binaries."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

ARTICLE = """<!doctype html>
<html><head><title>Restat and early cutoff | Build Blog</title></head><body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/about">About the blog</a></li>
<li><a href="/archive">Archive of every post</a></li></ul></nav>
<header><div class="menu">Menu Subscribe Login Newsletter</div></header>
<article><h1>How restat gives ninja early cutoff</h1>
<p>Ninja reruns a rule only when one of its inputs changed since the last build.</p>
<p>With restat, a rule whose output is unchanged stops the rebuild from spreading.</p>
<h2>Why it matters</h2>
<p>Generated headers are rewritten often, but their bytes rarely change.</p>
</article>
<footer><p>Copyright 2026 Build Blog. All rights reserved. Privacy policy. Cookie settings.</p></footer>
</body></html>
"""
CHROME = ("About the blog", "Archive of every post", "Newsletter", "All rights reserved", "Cookie")


def pdf(pages: list[list[str]]) -> bytes:
    """A PDF with a text layer: each page its lines."""
    from fpdf import FPDF

    doc = FPDF()
    doc.set_font("helvetica", size=11)
    for lines in pages:
        doc.add_page()
        for line in lines:
            doc.cell(0, 6, line, new_x="LMARGIN", new_y="NEXT")
    return bytes(doc.output())


def scanned_pdf(pages: int = 2) -> bytes:
    """A PDF of drawings only, as a scanner makes (images, no text layer)."""
    from fpdf import FPDF

    doc = FPDF()
    for _ in range(pages):
        doc.add_page()
        doc.rect(20, 20, 120, 60, style="F")
    return bytes(doc.output())


def encrypted_pdf(password: str = "secret") -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for page in PdfReader(io.BytesIO(pdf([["A secret plan for the launch."]]))).pages:
        writer.add_page(page)
    writer.encrypt(user_password=password, algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def docx(title: str, sections: dict[str, list[str]], table: list[list[str]] | None = None) -> bytes:
    import docx as python_docx

    doc = python_docx.Document()
    doc.add_heading(title, level=0)
    for heading, paragraphs in sections.items():
        doc.add_heading(heading, level=1)
        for text in paragraphs:
            if text.startswith("- "):
                doc.add_paragraph(text[2:], style="List Bullet")
            else:
                doc.add_paragraph(text)
    if table:
        grid = doc.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                grid.cell(r, c).text = value
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def pptx(slides: list[tuple[str, list[str], str]]) -> bytes:
    """Slides of (title, bullets, speaker notes)."""
    from pptx import Presentation

    deck = Presentation()
    for title, bullets, notes in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        body = slide.placeholders[1].text_frame
        body.text = bullets[0]
        for bullet in bullets[1:]:
            body.add_paragraph().text = bullet
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def xlsx(sheets: dict[str, list[list[object]]]) -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def epub(title: str, chapters: list[tuple[str, str]]) -> bytes:
    """An EPUB of (chapter title, HTML body) chapters, in order."""
    from ebooklib import epub as ebook

    book = ebook.EpubBook()
    book.set_identifier("wikic-test")
    book.set_title(title)
    book.set_language("en")
    items = []
    for n, (name, body) in enumerate(chapters, 1):
        item = ebook.EpubHtml(title=name, file_name=f"chap{n}.xhtml", lang="en")
        item.content = f"<html><body><h1>{name}</h1>{body}</body></html>"
        book.add_item(item)
        items.append(item)
    book.toc = items
    book.add_item(ebook.EpubNcx())
    book.add_item(ebook.EpubNav())
    book.spine = ["nav", *items]
    out = io.BytesIO()
    ebook.write_epub(out, book)
    return out.getvalue()


def zip_bomb(path: Path, inflated: int, like: bytes) -> None:
    """A copy of the zip file `like` with one more member that inflates to `inflated` bytes."""
    path.write_bytes(like)
    with (
        zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as archive,
        archive.open("word/media/bomb.bin", "w", force_zip64=True) as member,
    ):
        chunk = b"\0" * 1_000_000
        for _ in range(inflated // len(chunk)):
            member.write(chunk)
