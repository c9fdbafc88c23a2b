"""HTML and EPUB to Markdown with trafilatura: a page's main content without its
navigation, header and footer; an EPUB's chapters in reading order (its spine)."""

from __future__ import annotations

import posixpath
import re
from functools import cache
from typing import Any
from xml.etree import ElementTree

from wikic.errors import SourceError
from wikic.sources.extract import Extracted, Limits, Lines, open_zip
from wikic.sources.formats import missing_extra

CONTAINER = "META-INF/container.xml"
BODY_OPEN = re.compile(r"<body\b[^>]*>", re.I)
BODY_CLOSE = re.compile(r"</body\s*>", re.I)
NS = {
    "c": "urn:oasis:names:tc:opendocument:xmlns:container",
    "opf": "http://www.idpf.org/2007/opf",
}


def extract(kind: str, path: str, raw: bytes, limits: Limits) -> Extracted:
    out = Lines(path, limits)
    if kind == "epub":
        _epub(path, raw, limits, out)
    else:
        out.add(html_markdown(decode_html(raw, path), path)[1])
    return out.result()


def decode_html(raw: bytes, path: str) -> str:
    """A saved page's text: UTF-8, else the charset it declares or trafilatura guesses
    (pages saved from the web are often Latin-1 or Windows-1252)."""
    from wikic.sources.read import decode  # one decoder for every text a person saves

    try:
        return decode(raw, path)
    except SourceError:
        try:
            from trafilatura.utils import decode_file
        except ImportError:
            raise missing_extra(path, "trafilatura") from None
        return str(decode_file(raw))


@cache
def _config() -> Any:
    try:
        from trafilatura.settings import use_config
    except ImportError:
        raise missing_extra("an HTML source", "trafilatura") from None
    cfg = use_config()
    cfg.set("DEFAULT", "EXTRACTION_TIMEOUT", "0")  # its timeout uses signals: main thread only
    cfg.set("DEFAULT", "MIN_EXTRACTED_SIZE", "1")  # a short note is still a source
    cfg.set("DEFAULT", "MIN_OUTPUT_SIZE", "1")
    return cfg


def html_markdown(html: str, path: str) -> tuple[str, str]:
    """The page's title and its main content as Markdown (empty when it has none)."""
    try:
        import trafilatura
    except ImportError:
        raise missing_extra(path, "trafilatura") from None
    meta = trafilatura.extract_metadata(html)
    title = " ".join((meta.title or "").split()) if meta is not None else ""
    text = trafilatura.extract(
        html, config=_config(), output_format="markdown", include_tables=True, include_links=False
    )
    return title, text or ""


def _epub(path: str, raw: bytes, limits: Limits, out: Lines) -> None:
    with open_zip(path, raw, limits) as book:
        try:
            container = ElementTree.fromstring(book.read(CONTAINER))
            rootfile = container.find(".//c:rootfile", NS)
            opf_path = rootfile.get("full-path", "") if rootfile is not None else ""
            opf = ElementTree.fromstring(book.read(opf_path))
        except (KeyError, ElementTree.ParseError) as exc:
            raise SourceError(path, f"is not a valid EPUB (no readable {CONTAINER} or package file)") from exc
        items = {
            i.get("id"): i.get("href", "")
            for i in opf.iterfind(".//opf:manifest/opf:item", NS)
            if "nav" not in (i.get("properties") or "").split()  # the table of contents: not text
        }
        base = posixpath.dirname(opf_path)
        for ref in opf.iterfind(".//opf:spine/opf:itemref", NS):
            href = items.get(ref.get("idref"))
            if not href:
                continue
            try:
                chapter = book.read(posixpath.normpath(posixpath.join(base, href)))
            except KeyError:
                continue  # a spine entry the book does not hold
            out.add(html_markdown(_as_article(chapter.decode("utf-8", "replace")), path)[1])
            out.gap()


def _as_article(chapter: str) -> str:
    """A chapter is all content: marked as an article, trafilatura keeps its headings
    (outside one it takes short lines such as headings for page furniture)."""
    chapter = BODY_OPEN.sub(lambda m: m.group(0) + "<article>", chapter, count=1)
    return BODY_CLOSE.sub("</article></body>", chapter, count=1)
