"""`wikic serve`: the wiki in a browser, from the standard library's threading HTTP server
(no web framework: a handful of read-only routes, one streamed POST, and nothing to import
on any other command's path). Only known pages, known sources and the packaged assets are
served; any other path is a 404, whatever its encoding. Nothing is written to the project
but what `wikic ask` itself caches in .wikic/."""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from wikic.errors import WikicError
from wikic.project import Project
from wikic.web.model import Model, lint_findings, page_path
from wikic.web.views import (
    Mode,
    graph_view,
    health_view,
    home_view,
    page_view,
    search_data,
    search_view,
    source_view,
)

ASSETS = Path(__file__).parent / "assets"
TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}
HTML = "text/html; charset=utf-8"
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
PAGE = re.compile(r"/p/([^/]+)\.html")
SOURCE = re.compile(r"/s/(.+)\.html")
CACHED_VIEWS = 512

Response = tuple[int, str, bytes]


class Viewer:
    """The model of the wiki, read again when the wiki changes, and the views rendered from it."""

    def __init__(
        self,
        project: Project,
        lint: bool = True,
        graph_limit: int = 500,
        live: bool = False,
        stale_ok: bool = False,
    ):
        self.project, self.lint, self.graph_limit, self.live = project, lint, graph_limit, live
        self.stale_ok = stale_ok  # the ask box answers from a wiki older than its sources
        self.build = 0  # builds finished under --watch
        self.changed: dict[str, int] = {}  # project path -> the build that last changed it
        self._lock = threading.Lock()
        self.asking = threading.Lock()  # one question at a time: a local model is not thread-safe
        self._model: Model | None = None
        self._mark: tuple[int, ...] = ()
        self._views: OrderedDict[str, Response] = OrderedDict()
        self._generation = 0  # bumped whenever the views are forgotten

    def _wiki_mark(self) -> tuple[int, ...]:
        """Cheap and enough: builds replace files by rename, which changes the folders' mtimes."""
        marks = []
        for folder in (self.project.wiki_dir, self.project.sources_dir):
            try:
                marks.append(os.stat(folder).st_mtime_ns)
            except OSError:
                marks.append(0)
        return tuple(marks)

    def model(self) -> Model:
        with self._lock:
            mark = self._wiki_mark()
            if self._model is None or mark != self._mark:
                self._model = Model.load(self.project, lint=False)
                self._mark = mark
                self._forget()
                if self.lint:  # pages show at once; their findings when lint is done
                    self._model.linting = True
                    threading.Thread(target=self._lint, args=(self._model,), daemon=True).start()
            return self._model

    def _forget(self) -> None:
        """Drop the rendered views (under self._lock): the model or its findings changed."""
        self._views.clear()
        self._generation += 1

    def _lint(self, model: Model) -> None:
        try:
            findings = lint_findings(self.project)
        except WikicError:
            findings = {}  # the pages say why themselves; a broken schema.yaml fails the model load
        with self._lock:
            model.findings, model.linting = findings, False
            if model is self._model:
                self._forget()

    def on_build(self, written: list[str], changed: list[str]) -> None:
        with self._lock:
            self.build += 1
            self._generation += 1
            for path in [*written, *changed]:
                self.changed[path] = self.build
            self._model = None

    def mode(self) -> Mode:
        return Mode(served=True, live=self.live, build=self.build)

    def get(self, raw_path: str) -> Response:
        parts = urlsplit(raw_path)
        path = unquote(parts.path)
        if "\x00" in path or "\\" in path:
            return _not_found()
        if path == "/api/build":
            want = parse_qs(parts.query).get("path", [""])[0]
            data = {"build": self.build, "changed": self.changed.get(want, 0)}
            return 200, "application/json", json.dumps(data).encode()
        if path.startswith("/assets/"):
            return _asset(path.removeprefix("/assets/"))
        try:
            model = self.model()
        except WikicError as exc:  # e.g. schema.yaml mid-edit under --watch: say so, keep serving
            return 500, "text/plain; charset=utf-8", f"wikic: error: {exc}\n".encode()
        key = f"{self.build}:{path}"
        with self._lock:
            if key in self._views:
                self._views.move_to_end(key)
                return self._views[key]
            generation = self._generation
        found = self._view(model, path)
        if found is None:
            return _not_found()
        with self._lock:
            if generation != self._generation:  # lint finished or the wiki changed meanwhile:
                return found  # this view may show the state before, so it is not kept
            self._views[key] = found
            while len(self._views) > CACHED_VIEWS:
                self._views.popitem(last=False)
        return found

    def _view(self, model: Model, path: str) -> Response | None:
        mode = self.mode()
        views: dict[str, Callable[[], str]] = {
            "/": lambda: home_view(model, mode),
            "/index.html": lambda: home_view(model, mode),
            "/search.html": lambda: search_view(model, mode),
            "/graph.html": lambda: graph_view(model, mode, self.graph_limit),
            "/health.html": lambda: health_view(model, mode),
        }
        if path in views:
            return 200, HTML, views[path]().encode()
        if path == "/data/search.js":
            return 200, TYPES[".js"], search_data(model).encode()
        m = PAGE.fullmatch(path)
        if m and (page := model.page(m.group(1))) is not None and page_path(page.slug) == path[1:]:
            return 200, HTML, page_view(model, page, mode).encode()
        m = SOURCE.fullmatch(path)
        if m and f"sources/{m.group(1)}" in model.sources:  # only files the scan lists: never `..`
            return 200, HTML, source_view(model, f"sources/{m.group(1)}", mode).encode()
        return None


def _asset(name: str) -> Response:
    allowed = {p.name for p in ASSETS.iterdir() if p.suffix in TYPES}
    if name not in allowed:
        return _not_found()
    return 200, TYPES[Path(name).suffix], (ASSETS / name).read_bytes()


def _not_found() -> Response:
    return 404, "text/plain; charset=utf-8", b"not found\n"


class Handler(BaseHTTPRequestHandler):
    """One request; `viewer` and `loopback` are set on the subclass that make_server makes."""

    server_version = "wikic"
    viewer: Viewer
    loopback: bool

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass  # a viewer is not an access log

    def _host_ok(self) -> bool:
        """On loopback, only local host names: a web page elsewhere cannot rebind its name to us."""
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
        return not self.loopback or host in LOOPBACK

    def _send(self, status: int, kind: str, body: bytes, head: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self._safety_headers()
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _safety_headers(self) -> None:
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        if not self._host_ok():
            self._send(403, "text/plain", b"wrong Host header\n")
            return
        self._send(*self.viewer.get(self.path))

    def do_HEAD(self) -> None:  # noqa: N802
        """GET's status and headers without the body (`curl -I`, link checkers)."""
        if not self._host_ok():
            self._send(403, "text/plain", b"wrong Host header\n", head=True)
            return
        self._send(*self.viewer.get(self.path), head=True)

    def do_POST(self) -> None:  # noqa: N802
        if not self._host_ok() or urlsplit(self.path).path != "/api/ask":
            self._send(404, "text/plain", b"not found\n")
            return
        if not (self.headers.get("Content-Type") or "").startswith("application/json"):
            self._send(415, "text/plain", b"send JSON\n")  # a cross-site form cannot
            return
        length = min(int(self.headers.get("Content-Length") or 0), 65536)
        try:
            question = str(json.loads(self.rfile.read(length) or b"{}").get("question", ""))
        except (ValueError, AttributeError):
            self._send(400, "text/plain", b"bad JSON\n")
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self._safety_headers()
        self.end_headers()
        stream_answer(self.viewer, question, self._line)

    def _line(self, data: dict[str, Any]) -> None:
        self.wfile.write(json.dumps(data).encode() + b"\n")
        self.wfile.flush()


def stream_answer(viewer: Viewer, question: str, send: Callable[[dict[str, Any]], None]) -> None:
    """`wikic ask` as the CLI runs it (same cached prefix, same stored answers), streamed as
    lines of JSON: {"text"} pieces, then {"done", "pages", "unsupported"} or {"error"}."""
    from wikic.ask.runner import AskOptions, ask

    try:
        opts = AskOptions(stale_ok=viewer.stale_ok)
        with viewer.asking:
            result = ask(viewer.project, question, opts, lambda piece: send({"text": piece}))
    except WikicError as exc:
        send({"error": str(exc)})
        return
    model = viewer.model()
    pages = []
    for rel in result.pages:
        slug = rel.removeprefix("wiki/").removesuffix(".md")
        page = model.page(slug)
        if page is not None:
            pages.append({"href": page_path(slug), "title": page.title, "path": rel})
    send({"done": True, "pages": pages, "unsupported": result.unsupported, "answer": result.answer})


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A browser that goes away mid-answer is not an error worth a traceback."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


def make_server(viewer: Viewer, host: str, port: int) -> ThreadingHTTPServer:
    handler = type("BoundHandler", (Handler,), {"viewer": viewer, "loopback": host in LOOPBACK})
    return Server((host, port), handler)
