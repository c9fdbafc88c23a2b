"""What `wikic mcp`'s tools do, as plain Python over wikic's own modules (search and pages
from loaded.py, ask's runner, lint's runner, the build as every caller runs it), so they
are testable without the protocol. Each returns JSON-ready data or raises a WikicError
with the message the CLI would print. Text from pages and sources is returned as data:
nothing here acts on what it reads."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from wikic.ask.passages import line_ref
from wikic.errors import PageError, SourceError, UsageError
from wikic.mcp.loaded import WikiCache, own_links
from wikic.project import Project
from wikic.sources.extract import store_dir
from wikic.sources.formats import format_of
from wikic.sources.read import Source, source_text
from wikic.wiki.page import SEAL, Citation, Page, split_page
from wikic.wiki.read import INDEX

if TYPE_CHECKING:
    from wikic.backends import Backend
    from wikic.config import Schema

MAX_LIMIT = 50  # search results at most
CITED_LINES = 6  # lines of one citation quoted by read_page (read_source gives the rest)
MAX_SOURCE_LINES = 400  # read_source without a range: the first this many lines
MAX_SOURCE_BYTES = 5_000_000  # as sources.max_bytes' default: read_source never loads more
LINES = re.compile(r"\s*L?(\d+)\s*(?:-\s*L?(\d+)\s*)?")
READ_ONLY = "this server is read-only: start it with `wikic mcp --allow-write` to let clients {what}"

BackendFactory = Callable[["Schema"], "Backend"]


class Tools:
    """The tools of one project's server. Calls may come from several threads at once: the
    loaded wiki is shared (loaded.WikiCache), and calls that use the model or write take turns."""

    def __init__(
        self, project: Project, allow_write: bool = False, backend_factory: BackendFactory | None = None
    ) -> None:
        self.project = project
        self.allow_write = allow_write
        self.wiki = WikiCache(project)
        self._factory = backend_factory
        self._backends: dict[str, Backend] = {}
        self._model_lock = threading.Lock()  # one model call or build at a time in this process

    # --- read-only ------------------------------------------------------------------
    def search(self, query: str, limit: int = 10) -> dict[str, Any]:
        if not query.strip():
            raise UsageError("search for what? give a query, e.g. 'vector database'")
        limit = max(1, min(limit, MAX_LIMIT))
        hits = self.wiki.get().search(query, limit)
        results = [
            {"title": h.page.title, "path": h.page.rel, "type": h.page.type, "snippet": h.snippet}
            for h in hits
        ]
        return {"query": query, "results": results}

    def read_page(self, name: str) -> dict[str, Any]:
        loaded = self.wiki.get()
        known = loaded.page(name)
        page = self._fresh(known)
        links = []
        for link in own_links(page):
            slug = loaded.wiki.resolve(link.target)
            target = loaded.wiki.pages.get(slug) if slug else None
            links.append({"target": link.target, "line": link.line, "path": target.rel if target else None})
        backlinks = [{"title": p.title, "path": p.rel} for p in loaded.backlinks(known)]
        return {
            "path": page.rel,
            "title": page.title,
            "type": page.type,
            "front_matter": page.meta,
            "text": without_seal(page.text),
            "links": links,
            "backlinks": backlinks,
            "citations": self._citations(page),
        }

    def page_markdown(self, name: str) -> str:
        """A page's file as it is on disk, without wikic's seal line (the wiki://page/ resource)."""
        return without_seal(self._fresh(self.wiki.get().page(name)).text)

    def pages(self) -> list[Page]:
        return self.wiki.get().pages

    def index(self) -> dict[str, Any]:
        loaded = self.wiki.get()
        path = self.project.wiki_dir / INDEX
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise PageError(f"wiki/{INDEX} cannot be read ({exc}); run `wikic build`") from exc
        return {"path": f"wiki/{INDEX}", "pages": len(loaded.pages), "text": without_seal(text)}

    def read_source(self, path: str, lines: str = "") -> dict[str, Any]:
        rel, all_lines = self._source(path)
        total = len(all_lines)
        start, end = parse_lines(lines, total) if lines.strip() else (1, min(total, MAX_SOURCE_LINES))
        out: dict[str, Any] = {"path": rel, "start": start, "end": end, "total_lines": total}
        out["text"] = "\n".join(all_lines[start - 1 : end])
        if not lines.strip() and total > end:
            out["truncated"] = f"the first {end} of {total} lines; ask for more with lines='{end + 1}-...'"
        return out

    def lint(self, rules: list[str] | None = None) -> dict[str, Any]:
        from wikic.lint.runner import LintOptions, format_json
        from wikic.lint.runner import lint as run_lint

        result = run_lint(self.project, LintOptions(list(rules or [])))
        return {
            "findings": json.loads(format_json(result)),
            "counts": result.counts(),
            "pages": result.pages,
            "notes": result.notes,
        }

    def ask(self, question: str, stale_ok: bool = False) -> dict[str, Any]:
        return self._ask(question, stale_ok, save=False)

    # --- writing: only with --allow-write ---------------------------------------------
    def build(self) -> dict[str, Any]:
        from wikic.build.run import BuildOptions
        from wikic.build.run import build as run_build

        self._writable("build the wiki")
        with self._model_lock:
            report = run_build(self.project, BuildOptions(), None, self._backend)
        return report.to_json()

    def save_answer(self, question: str, stale_ok: bool = False) -> dict[str, Any]:
        self._writable("save answers in wiki/")
        return self._ask(question, stale_ok, save=True)

    # --- helpers ----------------------------------------------------------------------
    def _writable(self, what: str) -> None:
        if not self.allow_write:
            raise UsageError(READ_ONLY.format(what=what))

    def _ask(self, question: str, stale_ok: bool, save: bool) -> dict[str, Any]:
        from wikic.ask.runner import AskOptions
        from wikic.ask.runner import ask as run_ask

        with self._model_lock:
            result = run_ask(
                self.project, question, AskOptions(save=save, stale_ok=stale_ok), None, self._backend
            )
        return result.to_json()

    def _backend(self, schema: Schema) -> Backend:
        """One backend per model configuration for the server's life: the embedded model is
        loaded once, not at every question."""
        key = schema.model.model_dump_json()
        if key not in self._backends:
            if self._factory is not None:
                self._backends[key] = self._factory(schema)
            else:
                from wikic.backends import make_backend

                self._backends[key] = make_backend(schema.model, self.project.root)
        return self._backends[key]

    def _fresh(self, page: Page) -> Page:
        """The page as it is on disk now: an edit made in place since the wiki was loaded shows."""
        try:
            text = (self.project.root / page.rel).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise PageError(
                f"{page.rel} was removed; `search` or `index` lists the pages there are"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise PageError(f"{page.rel} cannot be read: {exc}") from exc
        return split_page(text, page.rel)

    def _citations(self, page: Page) -> list[dict[str, Any]]:
        out, seen = [], set()
        files: dict[str, list[str] | None] = {}
        for ref in page.citations:
            cite = ref.citation
            if cite in seen:
                continue
            seen.add(cite)
            item: dict[str, Any] = {"source": cite.source, "lines": line_ref(cite).split(":")[-1]}
            item["page_line"] = ref.line
            text = self._cited(cite, files)
            item["text" if text is not None else "error"] = text if text is not None else "lines not found"
            out.append(item)
        return out

    def _cited(self, cite: Citation, files: dict[str, list[str] | None]) -> str | None:
        if cite.source not in files:
            try:
                files[cite.source] = self._source(cite.source)[1]
            except (SourceError, UsageError):
                files[cite.source] = None
        lines = files[cite.source]
        if lines is None or not 1 <= cite.start <= min(cite.end, len(lines)):
            return None
        return "\n".join(lines[cite.start - 1 : min(cite.end, cite.start + CITED_LINES - 1)])

    def _source(self, path: str) -> tuple[str, list[str]]:
        """A file inside sources/ (given as sources/x.md or x.md), as the build numbers its lines."""
        name = path.strip().replace("\\", "/").removeprefix("./")
        if name.startswith("../sources/"):  # as a page's citation links write it
            name = name.removeprefix("../")
        if not name or "\x00" in name or name.startswith("/"):
            raise UsageError(f"read_source reads files inside sources/ only, not {path!r}")
        rel = name if name.startswith("sources/") else f"sources/{name}"
        sources = self.project.sources_dir.resolve()
        full = (self.project.root / rel).resolve()
        if not full.is_relative_to(sources) or full == sources:
            raise UsageError(f"read_source reads files inside sources/ only, not {path!r}")
        limit = MAX_SOURCE_BYTES * (20 if format_of(full.name) else 1)  # a PDF, DOCX, ... (read.py)
        try:
            with open(full, "rb") as fh:
                raw = fh.read(limit + 1)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise SourceError(rel, "no such file in sources/; a page's citations name its sources") from None
        except OSError as exc:
            raise SourceError(rel, f"cannot read: {exc.strerror or exc}") from exc
        if len(raw) > limit:
            raise SourceError(rel, f"is over {limit:,} bytes; wikic does not read it either")
        rel = full.relative_to(self.project.root.resolve()).as_posix()
        # a PDF, DOCX, ... as its extracted text: the lines the build digested and pages cite
        text = source_text(rel, raw, store_dir(self.project.root)).text
        return rel, Source(rel, text, "").lines


def parse_lines(lines: str, total: int) -> tuple[int, int]:
    """ "12", "12-20" or "L12-L20" to (start, end), end clipped to the file."""
    m = LINES.fullmatch(lines)
    if not m:
        raise UsageError(f"lines must look like '12' or '12-20', not {lines!r}")
    start = int(m.group(1))
    end = int(m.group(2) or start)
    if start < 1 or end < start:
        raise UsageError(f"lines {lines!r}: the first line is 1 and a range runs forward, e.g. '12-20'")
    if start > total:
        raise UsageError(f"lines {lines!r}: the file has {total} lines")
    return start, min(end, total)


def without_seal(text: str) -> str:
    """A file without the last line wikic seals its pages with (a hash, no content)."""
    return SEAL.sub("\n", text)
