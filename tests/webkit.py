"""Helpers for the web tests: a built project and a real `wikic serve` server on 127.0.0.1
(no pytest fixtures here)."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from projects import NOTES, make_project, run_build

from wikic.project import Project
from wikic.web.server import Viewer, make_server

XSS_SOURCE = """# Hostile notes

Hostile notes hold <script>window.__xss = 1</script> inside a sentence.
A link to [click me](javascript:window.__xss=2) is only text.
An image tag <img src=x onerror="window.__xss=3"> is shown, never run.
"""

XSS_PAGE = """---
title: Hostile page
type: concept
---

# Hostile page

Raw HTML <script>window.__xss = 4</script> and <b onmouseover="window.__xss=5">bold</b>.

A [javascript link](javascript:window.__xss=6) and [[<img src=x onerror=window.__xss=7>]].
"""


def built_project(root: Path, extra: dict[str, str] | None = None) -> Project:
    """The test notes (and `extra` sources), built with the scripted backend."""
    project = make_project(root, {**NOTES, **(extra or {})})
    run_build(project)
    return project


@contextmanager
def serving(viewer: Viewer) -> Iterator[str]:
    """A real server on a free loopback port, for the length of the block; yields its URL."""
    server = make_server(viewer, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def fetch(url: str, path: str, host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    """GET `path` exactly as given (no normalisation of `..` or %2e), like a hostile client."""
    where = url.removeprefix("http://").rstrip("/")
    name, port = where.rsplit(":", 1)
    conn = http.client.HTTPConnection(name, int(port), timeout=30)
    try:
        conn.putrequest("GET", path, skip_host=host is not None)
        if host is not None:
            conn.putheader("Host", host)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def hostile_project(root: Path) -> Project:
    """A built project with a source and a page that try to run script in the viewer."""
    project = built_project(root, {"hostile.md": XSS_SOURCE})
    (project.wiki_dir / "hostile-page.md").write_text(XSS_PAGE, encoding="utf-8")
    return project
