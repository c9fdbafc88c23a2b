"""`wikic add`: a URL saved in sources/ as a web clip (Markdown with its URL, title
and fetch date in the front matter), a file copied in. Adding what is already
there, unchanged, writes nothing, so the next build has nothing to do."""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from wikic.errors import SourceError, UsageError
from wikic.fsutil import atomic_write
from wikic.sources.fetch import Fetched, fetch, kind_of
from wikic.sources.formats import TEXT_SUFFIXES, format_of
from wikic.sources.scan import SOURCES_DIR

URL_LINE = re.compile(r'^url: (".*")$', re.M)
FETCHED_LINE = re.compile(r"^fetched: .*$", re.M)
SLUG = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class Added:
    """What `wikic add` did with one argument: `status` is added, updated or unchanged."""

    what: str  # the URL or file as given
    path: str  # project-relative, sources/...
    status: str

    def to_json(self) -> dict[str, str]:
        return {"from": self.what, "path": self.path, "status": self.status}


def add_url(root: Path, url: str, timeout: float, max_bytes: int, today: dt.date) -> Added:
    page = fetch(url, timeout, max_bytes)
    kind = kind_of(page)
    if kind not in ("html", "text"):  # a PDF, DOCX, ... at a URL: saved as the file it is
        return _place(root, url, _name_from_url(page.final_url, kind), page.body)
    title, body = _clip_text(page, kind)
    if not body.strip():
        raise SourceError(url, "has no main text to keep (an empty page, or one made by scripts)")
    existing = _clip_of(root, url)
    target = existing or _free_name(root, _slug(title) or _name_from_url(page.final_url, ""), ".md")
    text = _clip(url, title, today, body)
    if existing is not None and _same_clip(existing.read_text(encoding="utf-8"), text):
        return Added(url, _rel(root, existing), "unchanged")
    atomic_write(target, text.encode("utf-8"))
    return Added(url, _rel(root, target), "updated" if existing is not None else "added")


def add_file(root: Path, file: Path, force: bool) -> Added:
    if not file.is_file():
        raise UsageError(f"{file}: no such file (a folder? add the files in it)")
    name = file.name
    if format_of(name) is None and not name.lower().endswith(TEXT_SUFFIXES):
        raise UsageError(
            f"{file}: wikic does not read this kind of file; see `wikic add --help` for those it does"
        )
    return _place(root, str(file), name, file.read_bytes(), force)


def _place(root: Path, what: str, name: str, data: bytes, force: bool = True) -> Added:
    target = root / SOURCES_DIR / name
    if target.exists():
        if target.read_bytes() == data:
            return Added(what, _rel(root, target), "unchanged")
        if not force:
            raise SourceError(
                f"{SOURCES_DIR}/{name}", "already exists with other content; rename one, or pass --force"
            )
        atomic_write(target, data)
        return Added(what, _rel(root, target), "updated")
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, data)
    return Added(what, _rel(root, target), "added")


def _clip_text(page: Fetched, kind: str) -> tuple[str, str]:
    if kind == "text":
        return "", page.body.decode(page.charset or "utf-8", "replace")
    from wikic.sources.web import decode_html, html_markdown  # trafilatura: only for a page

    try:
        html = page.body.decode(page.charset) if page.charset else decode_html(page.body, page.url)
    except (UnicodeDecodeError, LookupError):
        html = decode_html(page.body, page.url)
    title, body = html_markdown(html, page.url)
    if title and not body.lstrip().startswith("# "):
        body = f"# {title}\n\n{body}"
    return title, body


def _clip(url: str, title: str, today: dt.date, body: str) -> str:
    meta = [f"url: {json.dumps(url)}", f"title: {json.dumps(title, ensure_ascii=False)}"]
    return "---\n" + "\n".join([*meta, f"fetched: {today.isoformat()}"]) + "\n---\n\n" + body.strip() + "\n"


def _same_clip(old: str, new: str) -> bool:
    """The same page, fetched on another day."""
    return FETCHED_LINE.sub("", old, count=1) == FETCHED_LINE.sub("", new, count=1)


def _clip_of(root: Path, url: str) -> Path | None:
    """The clip saved earlier from this URL, found by the url: line of its front matter."""
    folder = root / SOURCES_DIR
    wanted = json.dumps(url)
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        try:
            with open(path, encoding="utf-8") as fh:
                head = fh.read(4096)
        except (OSError, UnicodeDecodeError):
            continue
        m = URL_LINE.search(head)
        if head.startswith("---\n") and m and m.group(1) == wanted:
            return path
    return None


def _slug(text: str) -> str:
    return SLUG.sub("-", text.lower()).strip("-")[:60].strip("-")


def _name_from_url(url: str, suffix: str) -> str:
    parts = urlsplit(url)
    stem = _slug(parts.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]) or _slug(parts.netloc) or "page"
    return stem + suffix


def _free_name(root: Path, stem: str, suffix: str) -> Path:
    """sources/<stem>.md, or <stem>-2.md, ... when that name is taken by another file."""
    stem = stem.removesuffix(suffix)
    path, n = root / SOURCES_DIR / f"{stem}{suffix}", 2
    while path.exists():
        path, n = root / SOURCES_DIR / f"{stem}-{n}{suffix}", n + 1
    return path


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()
