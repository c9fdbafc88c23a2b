"""The viewer in a real headless browser: Debian's chromium driven by playwright (the
system browser, never a downloaded one). Flows a reader follows: home, a wikilink, a
citation to its highlighted lines, search, the graph, the ask box, a hostile source that
must not run, live reload under --watch, and the static site from file://.

Set WIKIC_SCREENSHOTS=1 to refresh the README's screenshots in docs/ from these runs."""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from projects import subprocess_env
from webkit import built_project, hostile_project, serving

from wikic.project import Project
from wikic.web.server import Viewer
from wikic.web.site import export

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_MS = 30_000  # a deadline for a state to arrive, not a wait: CI is a loaded 2-core box

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="no /usr/bin/chromium: install Debian's chromium (.ci/install does)"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:  # launch() gives each run a fresh temporary profile of its own
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1100, "height": 760})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    yield page
    context.close()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return hostile_project(tmp_path_factory.mktemp("browse"))


@pytest.fixture(scope="module")
def url(project: Project) -> Iterator[str]:
    with serving(Viewer(project, stale_ok=True)) as url:
        yield url


def test_home_then_a_wikilink(page: Any, url: str) -> None:
    page.goto(url)
    page.click('a.wikilink[href="p/faiss.html"]')
    page.wait_for_url("**/p/faiss.html")
    assert page.inner_text("h1") == "FAISS"
    page.click('.body a.wikilink:text("HNSW")')
    page.wait_for_url("**/p/hnsw.html")
    assert page.errors == []


def test_a_citation_opens_its_lines_highlighted_and_in_view(page: Any, url: str) -> None:
    page.goto(url + "p/faiss.html")
    page.click('a.cite[href="../s/tools.md.html#L5"]')
    page.wait_for_url("**/s/tools.md.html#L5")
    page.wait_for_selector(".line.hl")
    assert page.eval_on_selector_all(".line.hl", "els => els.map(e => e.id)") == ["L5"]
    assert "written by Meta" in page.inner_text("#L5")
    assert page.is_visible("#L5")
    in_view = "el => { const r = el.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; }"
    assert page.eval_on_selector("#L5", in_view)


def test_a_line_range_is_highlighted_whole(page: Any, url: str) -> None:
    page.goto(url + "s/vectors.md.html#L7-L8")
    page.wait_for_selector(".line.hl")
    assert page.eval_on_selector_all(".line.hl", "els => els.map(e => e.id)") == ["L7", "L8"]


def test_search_finds_a_page_with_a_snippet(page: Any, url: str) -> None:
    page.goto(url)
    page.fill("header input[name=q]", "similarity search")
    page.press("header input[name=q]", "Enter")
    page.wait_for_selector("#search-results li")
    first = page.locator("#search-results a.result").first
    assert first.inner_text() == "FAISS"
    assert "similarity" in page.locator("#search-results mark").first.inner_text().lower()
    first.click()
    page.wait_for_url("**/p/faiss.html")


def test_the_graph_draws_one_node_per_page(page: Any, url: str, project: Project) -> None:
    page.goto(url + "graph.html")
    pages = len([p for p in project.wiki_dir.glob("*.md") if p.name not in ("index.md", "log.md")])
    assert page.locator("svg.wiki-graph circle.page").count() == pages
    box = page.locator("svg.wiki-graph").bounding_box()
    assert box is not None and box["width"] > 300
    page.uncheck('input[data-type="concept"]')
    assert page.locator('svg.wiki-graph a.node[data-type="concept"].hidden').count() > 0


def test_the_ask_box_streams_an_answer(page: Any, url: str) -> None:
    page.goto(url + "p/faiss.html")
    page.fill("#ask-question", "What is FAISS?")
    page.click("#ask form button, #ask-form button")
    page.wait_for_selector("#ask-answer[data-done='1']")
    assert page.inner_text("#ask-answer").strip()
    assert "error" not in (page.get_attribute("#ask-answer", "class") or "")


HOSTILE = ("p/hostile-notes.html", "s/hostile.md.html", "p/hostile-page.html", "search.html?q=hostile")


def visit_hostile(page: Any, base: str) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    for path in HOSTILE:
        page.goto(base + path)
        page.wait_for_load_state("load")
        for link in page.locator("a").all():
            href = link.get_attribute("href") or ""
            assert not href.lower().startswith(("javascript:", "data:")), href
        page.locator("text=Hostile").first.hover()
        assert page.evaluate("window.__xss") is None, path
    page.goto(base + "p/hostile-page.html")
    assert "<script>window.__xss = 4</script>" in page.inner_text(".body")  # shown as text
    assert dialogs == []


def test_a_hostile_source_and_page_do_not_run(page: Any, url: str) -> None:
    visit_hostile(page, url)


def test_a_hostile_source_and_page_do_not_run_in_the_static_site(
    page: Any, project: Project, tmp_path: Path
) -> None:
    """No Content-Security-Policy header from file://: only the escaping stands in the way."""
    export(project, tmp_path / "site")
    visit_hostile(page, (tmp_path / "site").as_uri() + "/")


def test_the_static_site_works_from_file_urls(page: Any, project: Project, tmp_path: Path) -> None:
    out = tmp_path / "site"
    export(project, out)
    page.goto((out / "index.html").as_uri())
    page.click('a.wikilink[href="p/faiss.html"]')
    page.wait_for_url("**/p/faiss.html")
    page.click('a.cite[href="../s/tools.md.html#L5"]')
    page.wait_for_selector(".line.hl")
    page.goto((out / "search.html").as_uri() + "?q=faiss")
    page.wait_for_selector("#search-results li")
    page.goto((out / "graph.html").as_uri())
    assert page.locator("svg.wiki-graph circle.page").count() == len(list((out / "p").glob("*.html")))
    assert page.locator("#ask-form").count() == 0  # no server: no ask box
    assert page.errors == []


class ServeWatch:
    """`wikic serve --watch` as a user runs it; its stderr read on a thread."""

    def __init__(self, project: Project) -> None:
        args = [
            sys.executable,
            "-m",
            "wikic",
            "-C",
            str(project.root),
            "serve",
            "--watch",
            "--port",
            "0",
            "-q",
        ]
        self.proc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, env=subprocess_env())
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line)

    def wait_for(self, needle: str, timeout: float = 60) -> str:
        while True:
            line = self.lines.get(timeout=timeout)
            if needle in line:
                return line

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def test_live_reload_after_an_edit_under_watch(page: Any, tmp_path: Path) -> None:
    project = built_project(tmp_path / "p")
    serve = ServeWatch(project)
    try:
        url = serve.wait_for("wikic serve: http://").split()[2]
        serve.wait_for("build 1")
        page.goto(url + "p/faiss.html")
        assert "in 2017" not in page.inner_text(".body")
        tools = project.sources_dir / "tools.md"
        tools.write_text(tools.read_text().replace("written by Meta", "written by Meta in 2017"))
        page.locator(".body", has_text="in 2017").wait_for()  # after the reload the build caused
    finally:
        serve.stop()


def test_screenshots(page: Any, tmp_path: Path) -> None:
    """The README's pictures, from the repository's own wiki as a static site."""
    work = tmp_path / "repo"
    work.mkdir()
    for name in ("schema.yaml", "sources", "wiki"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, work / name)
    out = tmp_path / "site"
    export(Project(work), out)
    shots = {
        "page.png": (out / "p" / "early-cutoff.html").as_uri(),
        "citation.png": (out / "s" / "ninja.md.html").as_uri() + "#L13-L14",
        "graph.png": (out / "graph.html").as_uri(),
    }
    target = ROOT / "docs" if os.environ.get("WIKIC_SCREENSHOTS") else tmp_path / "shots"
    target.mkdir(exist_ok=True)
    page.set_viewport_size({"width": 1000, "height": 700})
    for name, where in shots.items():
        page.goto(where)
        page.wait_for_load_state("load")
        if name == "graph.png":
            page.locator(".canvas").screenshot(path=str(target / name))
        else:
            page.screenshot(path=str(target / name))
        assert (target / name).stat().st_size > 5000
