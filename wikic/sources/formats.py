"""Which files are sources and how each kind is read: plain text as it is, the
other formats (PDF, Word, slides, spreadsheets, HTML, EPUB) through an extractor
named here with its version. Stdlib only: the scan and the no-op build import it."""

from __future__ import annotations

from dataclasses import dataclass

from wikic.errors import SourceError

TEXT_SUFFIXES = (".md", ".txt", ".markdown")
EXTRA = "formats"  # pip install 'wikic[formats]'


@dataclass(frozen=True)
class Format:
    """A kind of source that is extracted to Markdown: `module` has `extract(raw, limits)`.

    `version` is wikic's own conversion's; bump it when the same file would extract to
    different text. With the libraries' versions it is the extractor's id, which keys the
    extracted-text store and every digest action of the source."""

    name: str
    suffixes: tuple[str, ...]
    module: str
    libraries: tuple[str, ...]  # distributions whose version is part of the extractor's id
    version: int = 1


FORMATS = (
    Format("pdf", (".pdf",), "wikic.sources.pdf", ("pypdf",)),
    Format("docx", (".docx",), "wikic.sources.office", ("python-docx",)),
    Format("pptx", (".pptx",), "wikic.sources.office", ("python-pptx",)),
    Format("xlsx", (".xlsx",), "wikic.sources.office", ("openpyxl",)),
    Format("csv", (".csv",), "wikic.sources.office", ()),
    Format("html", (".html", ".htm"), "wikic.sources.web", ("trafilatura",)),
    Format("epub", (".epub",), "wikic.sources.web", ("trafilatura",)),
)
BY_SUFFIX = {suffix: f for f in FORMATS for suffix in f.suffixes}

# what sources.include holds by default: every suffix wikic reads
DEFAULT_INCLUDE = [f"**/*{s}" for s in TEXT_SUFFIXES] + [f"**/*{s}" for f in FORMATS for s in f.suffixes]


def format_of(path: str) -> Format | None:
    """The format a source is extracted with; None for a text source (read as it is)."""
    dot = path.rfind(".")
    return BY_SUFFIX.get(path[dot:].lower()) if dot > path.rfind("/") else None


def extractor_id(fmt: Format, path: str) -> str:
    """The extractor's id, e.g. "pdf/1 pypdf 7.1.1": what made the extracted text. A SourceError names the
    missing extra when a library is not installed."""
    from importlib import metadata  # here: 16 ms (email.*), which a build of text sources never needs

    versions = []
    for lib in fmt.libraries:
        try:
            versions.append(f"{lib} {metadata.version(lib)}")
        except metadata.PackageNotFoundError:
            raise missing_extra(path, lib) from None
    return " ".join([f"{fmt.name}/{fmt.version}", *versions])


def missing_extra(path: str, lib: str) -> SourceError:
    return SourceError(
        path, f"needs {lib} to be read, which the '{EXTRA}' extra installs: pip install 'wikic[{EXTRA}]'"
    )
