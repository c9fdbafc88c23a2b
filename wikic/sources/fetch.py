"""Fetching a URL for `wikic add`, as a web clipper does: http(s) only, a timeout,
a size limit, a bounded number of redirects; an HTML page becomes its main content
as Markdown, a PDF stays a PDF, anything else is refused with a line saying so."""

from __future__ import annotations

import urllib.error
import urllib.request
from dataclasses import dataclass
from email.message import Message
from urllib.parse import urlsplit

from wikic import __version__
from wikic.errors import SourceError, UsageError

MAX_REDIRECTS = 5
HTML_TYPES = {"text/html", "application/xhtml+xml"}
TEXT_TYPES = {"text/plain", "text/markdown", "text/x-markdown"}
FILE_TYPES = {  # saved as they come, and extracted like any such file in sources/
    "application/pdf": ".pdf",
    "application/epub+zip": ".epub",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ".docx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": ".pptx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": ".xlsx",
    "text/csv": ".csv",
}


@dataclass(frozen=True)
class Fetched:
    """What a URL answered: the URL it ended at, its media type and its bytes."""

    url: str
    final_url: str
    media_type: str
    charset: str  # as the server declared it; "" when it did not
    body: bytes


class _Redirects(urllib.request.HTTPRedirectHandler):
    max_redirections = MAX_REDIRECTS


def check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"{url}: only http:// and https:// URLs are fetched; for a file, give its path")


def fetch(url: str, timeout: float, max_bytes: int) -> Fetched:
    """The URL's body, at most `max_bytes`, or a SourceError that names the URL and why."""
    check_url(url)
    opener = urllib.request.build_opener(_Redirects())
    request = urllib.request.Request(url, headers={"User-Agent": f"wikic/{__version__} (wikic add)"})
    try:
        with opener.open(request, timeout=timeout) as response:
            final = response.geturl()
            check_url(final)  # a redirect to file:// or ftp:// is not followed into
            headers: Message = response.headers
            body = response.read(max_bytes + 1)
    except urllib.error.HTTPError as exc:
        if 300 <= exc.code < 400:
            raise SourceError(url, f"redirects more than {MAX_REDIRECTS} times; give the final URL") from exc
        raise SourceError(url, f"answered HTTP {exc.code} {exc.reason}") from exc
    except TimeoutError as exc:
        raise SourceError(url, f"did not answer within {timeout:g} s (--timeout)") from exc
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise SourceError(url, f"did not answer within {timeout:g} s (--timeout)") from exc
        raise SourceError(url, f"cannot be fetched: {exc.reason}") from exc
    except OSError as exc:
        raise SourceError(url, f"cannot be fetched: {exc.strerror or exc}") from exc
    if len(body) > max_bytes:
        raise SourceError(url, f"is over {max_bytes:,} bytes (--max-bytes); download it and add the file")
    media = headers.get_content_type()
    return Fetched(url, final, media, headers.get_content_charset() or "", body)


def kind_of(page: Fetched) -> str:
    """ "html", "text", or the suffix a file of this type is saved with; a SourceError otherwise."""
    if page.media_type in HTML_TYPES:
        return "html"
    if page.media_type in TEXT_TYPES:
        return "text"
    if page.media_type in FILE_TYPES:
        return FILE_TYPES[page.media_type]
    raise SourceError(
        page.url,
        f"is not a web page or a document wikic reads (it is {page.media_type}); "
        "download it and `wikic add` the file if it is one",
    )
