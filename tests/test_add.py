"""`wikic add` against a real HTTP server on 127.0.0.1: an article page is saved as
its main content (not the navigation and footer) with its url, title and fetch
date; re-adding it changes nothing; a page that is not HTML, a server that never
answers, a redirect loop and a file copied in."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import formatkit as fk
import pytest
from click.testing import CliRunner
from projects import make_project, run_build

from wikic.cli.main import cli
from wikic.project import Project
from wikic.wiki.frontmatter import split_front_matter
from wikic.wiki.page import parse_citations


class Site:
    """What the server answers, per path, and an Event its slow path waits on."""

    def __init__(self) -> None:
        self.pages: dict[str, tuple[str, bytes]] = {
            "/blog/restat.html": ("text/html; charset=utf-8", fk.ARTICLE.encode()),
            "/data.bin": ("application/octet-stream", b"\x00\x01\x02" * 100),
            "/report.pdf": ("application/pdf", fk.pdf([["Ninja is a small build system."]])),
        }
        self.release = threading.Event()
        self.requests: list[str] = []


@pytest.fixture
def site() -> Iterator[tuple[Site, str]]:
    state = Site()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.requests.append(self.path)
            if self.path == "/slow":
                state.release.wait(30)  # until the test is over: the client must give up first
                return
            if self.path.startswith("/loop"):
                self.send_response(302)
                self.send_header("Location", f"/loop{len(state.requests)}")
                self.end_headers()
                return
            if self.path not in state.pages:
                self.send_error(404)
                return
            media, body = state.pages[self.path]
            self.send_response(200)
            self.send_header("Content-Type", media)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()


def add(project: Project, *args: str) -> tuple[int, dict[str, list[dict[str, str]]]]:
    result = CliRunner().invoke(
        cli, ["-C", str(project.root), "add", "--json", *args], catch_exceptions=False
    )
    return result.exit_code, json.loads(result.stdout)


def test_an_article_is_saved_as_its_main_content(tmp_path: Path, site: tuple[Site, str]) -> None:
    project = make_project(tmp_path, {})
    url = f"{site[1]}/blog/restat.html"
    code, out = add(project, url)
    assert code == 0 and out["errors"] == []
    assert out["added"] == [
        {"from": url, "path": "sources/how-restat-gives-ninja-early-cutoff.md", "status": "added"}
    ]
    text = (project.root / out["added"][0]["path"]).read_text(encoding="utf-8")
    front = split_front_matter(text)
    assert front.meta["url"] == url
    assert front.meta["title"] == "How restat gives ninja early cutoff"
    assert str(front.meta["fetched"])[:2] == "20"
    assert "With restat, a rule whose output is unchanged stops the rebuild" in front.body
    assert "## Why it matters" in front.body
    for chrome in fk.CHROME:
        assert chrome not in text, chrome
    report, _ = run_build(project)
    assert report.errors == []
    pages = {p.name: split_front_matter(p.read_text()) for p in project.wiki_dir.glob("*.md")}
    assert "How restat gives ninja early cutoff" in [page.meta.get("title") for page in pages.values()]
    # the clip's front matter is metadata: no page quotes it, and the body keeps its line numbers
    assert not any("fetched:" in page.body or "url:" in page.body for page in pages.values())
    lines = text.splitlines()
    for page in pages.values():
        for cite, _ in parse_citations(page.body):
            assert any(line.strip() for line in lines[cite.start - 1 : cite.end]), cite


def test_re_adding_an_unchanged_url_changes_nothing(tmp_path: Path, site: tuple[Site, str]) -> None:
    project = make_project(tmp_path, {})
    url = f"{site[1]}/blog/restat.html"
    add(project, url)
    run_build(project)
    saved = {p.name: p.stat().st_mtime_ns for p in project.sources_dir.iterdir()}
    code, out = add(project, url)
    assert code == 0 and out["added"][0]["status"] == "unchanged"
    assert {p.name: p.stat().st_mtime_ns for p in project.sources_dir.iterdir()} == saved
    report, backend = run_build(project)
    assert report.nothing_to_do and backend.requests == []
    site[0].pages["/blog/restat.html"] = (
        "text/html",
        fk.ARTICLE.replace("rarely change", "seldom change").encode(),
    )
    code, out = add(project, url)
    assert out["added"][0] == {
        "from": url,
        "path": "sources/how-restat-gives-ninja-early-cutoff.md",
        "status": "updated",
    }
    assert len(list(project.sources_dir.iterdir())) == 1


def test_a_url_that_is_not_a_page(tmp_path: Path, site: tuple[Site, str]) -> None:
    project = make_project(tmp_path, {})
    code, out = add(project, f"{site[1]}/data.bin")
    assert code == 1 and out["added"] == []
    assert (
        "is not a web page or a document wikic reads (it is application/octet-stream)"
        in out["errors"][0]["error"]
    )
    assert list(project.sources_dir.iterdir()) == []


def test_a_pdf_at_a_url_is_saved_as_the_pdf(tmp_path: Path, site: tuple[Site, str]) -> None:
    project = make_project(tmp_path, {})
    code, out = add(project, f"{site[1]}/report.pdf")
    assert code == 0 and out["added"][0]["path"] == "sources/report.pdf"
    assert (project.sources_dir / "report.pdf").read_bytes() == site[0].pages["/report.pdf"][1]


def test_a_url_that_times_out(tmp_path: Path, site: tuple[Site, str]) -> None:
    project = make_project(tmp_path, {})
    code, out = add(project, "--timeout", "0.5", f"{site[1]}/slow", f"{site[1]}/blog/restat.html")
    assert code == 1
    assert "did not answer within 0.5 s (--timeout)" in out["errors"][0]["error"]
    assert [a["status"] for a in out["added"]] == ["added"]  # the other URL is still added


def test_redirects_are_bounded(tmp_path: Path, site: tuple[Site, str]) -> None:
    project = make_project(tmp_path, {})
    code, out = add(project, f"{site[1]}/loop")
    assert code == 1 and "redirects more than 5 times" in out["errors"][0]["error"]
    assert len(site[0].requests) <= 7


def test_only_http_urls(tmp_path: Path) -> None:
    project = make_project(tmp_path, {})
    code, out = add(project, "ftp://example.org/x.html")
    assert code == 1 and "only http:// and https:// URLs" in out["errors"][0]["error"]


def test_a_file_is_copied_in(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", {})
    doc = tmp_path / "notes.docx"
    doc.write_bytes(fk.docx("Notes", {"Make": ["Make compares timestamps."]}))
    code, out = add(project, str(doc))
    assert code == 0 and out["added"][0]["path"] == "sources/notes.docx"
    assert (project.sources_dir / "notes.docx").read_bytes() == doc.read_bytes()
    assert add(project, str(doc))[1]["added"][0]["status"] == "unchanged"
    doc.write_bytes(fk.docx("Notes", {"Make": ["Make was written in 1976."]}))
    code, out = add(project, str(doc))
    assert code == 1 and "already exists with other content" in out["errors"][0]["error"]
    assert add(project, "--force", str(doc))[1]["added"][0]["status"] == "updated"
    odd = tmp_path / "image.png"
    odd.write_bytes(b"\x89PNG")
    code, out = add(project, str(odd))
    assert code == 1 and "does not read this kind of file" in out["errors"][0]["error"]
