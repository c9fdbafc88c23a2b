"""PDF to text with pypdf: the text layer, page by page, with the first line of
each page kept so that citations can link to the page."""

from __future__ import annotations

import io

from pypdf import PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError, PdfReadError

from wikic.errors import SourceError
from wikic.sources.extract import Extracted, Limits, Lines


def extract(kind: str, path: str, raw: bytes, limits: Limits) -> Extracted:
    try:
        reader = PdfReader(io.BytesIO(raw), strict=False)
        _decrypt(reader, path)
        out = Lines(path, limits)
        for page in reader.pages:
            out.page()
            out.add(page.extract_text() or "")
            out.gap()
    except (FileNotDecryptedError, DependencyError) as exc:
        raise _encrypted(path) from exc
    except PdfReadError as exc:
        raise SourceError(path, f"cannot be read as PDF (damaged?): {exc}") from exc
    result = out.result()
    if not result.text.strip():
        raise SourceError(
            path,
            f"has no text layer ({len(reader.pages)} pages of images: a scan?): OCR is not supported; "
            "run it through an OCR tool (e.g. ocrmypdf) and put the result in sources/",
        )
    return result


def _decrypt(reader: PdfReader, path: str) -> None:
    """Many PDFs are encrypted with an empty password only to restrict printing: read those."""
    if reader.is_encrypted and not reader.decrypt(""):
        raise _encrypted(path)


def _encrypted(path: str) -> SourceError:
    return SourceError(
        path, "is encrypted with a password; save a decrypted copy (e.g. qpdf --decrypt) in sources/"
    )
