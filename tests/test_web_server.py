"""`wikic serve` over real HTTP on 127.0.0.1: the routes, path confinement, escaping,
the Host check, the ask endpoint (scripted backend), and that nothing is written."""

from __future__ import annotations

import http.client
import json
import os
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from projects import subprocess_env
from webkit import built_project, fetch, hostile_project, serving

from wikic.project import Project
from wikic.web.server import Viewer


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return hostile_project(tmp_path_factory.mktemp("serve"))


@pytest.fixture(scope="module")
def url(project: Project) -> object:
    with serving(Viewer(project)) as url:
        yield url


def text(url: str, path: str) -> str:
    status, _, body = fetch(url, path)
    assert status == 200, path
    return body.decode()


def test_home_is_index_md_with_links_to_pages(url: str) -> None:
    html = text(url, "/")
    assert "<title>Test wiki · Test wiki</title>" in html
    assert 'href="p/faiss.html"' in html
    assert "citations" in html  # the compile receipt


def test_a_page_has_links_citations_backlinks_type_and_sources(url: str) -> None:
    html = text(url, "/p/faiss.html")
    assert '<a class="wikilink" href="hnsw.html" title="HNSW">HNSW</a>' in html
    assert '<a class="cite" href="../s/tools.md.html#L5">tools.md:5</a>' in html
    assert '<span class="type">concept</span>' in html
    assert 'href="../s/vectors.md.html">sources/vectors.md</a>' in html
    assert 'class="backlinks"' in html
    assert 'class="near-graph"' in html


def test_a_source_is_shown_with_numbered_lines(url: str) -> None:
    html = text(url, "/s/tools.md.html")
    assert '<div class="line" id="L5"><a class="ln" href="#L5">5</a>' in html
    assert "FAISS is a library for similarity search written by Meta." in html


@pytest.mark.parametrize(
    "path",
    [
        "/s/../schema.yaml.html",
        "/s/%2e%2e/schema.yaml.html",
        "/s/..%2fschema.yaml.html",
        "/s/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd.html",
        "/source/../../etc/passwd",
        "/source/%2e%2e/%2e%2e/etc/passwd",
        "/s/%252e%252e/schema.yaml.html",
        "/s/tools.md",
        "/s//etc/passwd.html",
        "/p/../schema.yaml.html",
        "/p/..%2f..%2fetc%2fpasswd.html",
        "/p/log.html",
        "/assets/../server.py",
        "/assets/..%2fserver.py",
        "/../schema.yaml",
        "/wiki/faiss.md",
        "/sources/tools.md",
        "/.wikic/state.db",
        "/s/tools.md.html%00",
    ],
)
def test_paths_outside_the_viewer_are_404(url: str, path: str) -> None:
    status, _, body = fetch(url, path)
    assert status == 404, path
    assert b"root:" not in body and b"title:" not in body


def test_page_and_source_html_is_escaped(url: str) -> None:
    for path in ("/p/hostile-notes.html", "/p/hostile-page.html", "/s/hostile.md.html"):
        html = text(url, path)
        assert "<script>window" not in html and "<img src=x" not in html and "<b onmouseover" not in html
        assert 'href="javascript' not in html.lower()
        assert "&lt;script&gt;" in html or "&lt;img" in html


def test_search_index_cannot_close_its_script(url: str) -> None:
    status, headers, body = fetch(url, "/data/search.js")
    assert status == 200 and headers["content-type"].startswith("text/javascript")
    script = body.decode()
    assert script.startswith("window.WIKIC_SEARCH = ")
    assert "</script" not in script.lower() and "<img" not in script
    entries = json.loads(script.removeprefix("window.WIKIC_SEARCH = ").rstrip(";\n"))
    assert {"u": "p/faiss.html", "t": "FAISS"}.items() <= entries[
        [e["t"] for e in entries].index("FAISS")
    ].items()


def test_safety_headers(url: str) -> None:
    _, headers, _ = fetch(url, "/p/faiss.html")
    assert "script-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"


def test_head_answers_as_get_without_a_body(url: str) -> None:
    name, port = url.removeprefix("http://").rstrip("/").rsplit(":", 1)
    for path, status in (("/p/faiss.html", 200), ("/s/..%2f..%2fetc%2fpasswd", 404)):
        conn = http.client.HTTPConnection(name, int(port), timeout=30)
        try:
            conn.request("HEAD", path)
            resp = conn.getresponse()
            assert (resp.status, resp.read()) == (status, b""), path
            assert "script-src 'self'" in (resp.getheader("Content-Security-Policy") or "")
        finally:
            conn.close()


def test_a_foreign_host_header_is_refused(url: str) -> None:
    status, _, _ = fetch(url, "/", host="attacker.example:80")
    assert status == 403
    assert fetch(url, "/", host="localhost:1234")[0] == 200


def test_graph_draws_every_page(url: str, project: Project) -> None:
    html = text(url, "/graph.html")
    pages = len([p for p in project.wiki_dir.glob("*.md") if p.name not in ("index.md", "log.md")])
    assert html.count('<circle class="page') == pages


def linted(url: str, path: str) -> str:
    """The view once the server's background lint is done (a state, with a deadline)."""
    deadline = time.monotonic() + 120
    while "Lint is running" in (html := text(url, "/health.html")):
        assert time.monotonic() < deadline, "lint did not finish"
        time.sleep(0.05)
    return html if path == "/health.html" else text(url, path)


def test_health_lists_findings_per_page(url: str) -> None:
    html = linted(url, "/health.html")
    assert "citations that open a source line" in html
    assert "wiki/hostile-page.md" in html  # a hand-made page: at least a hand-edit or frontmatter finding
    assert '<aside class="findings">' in linted(url, "/p/hostile-page.html")


def ask(
    url: str, question: str, content_type: str = "application/json"
) -> tuple[int, list[dict[str, object]]]:
    req = urllib.request.Request(
        url + "api/ask",
        data=json.dumps({"question": question}).encode(),
        headers={"Content-Type": content_type},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, [json.loads(line) for line in resp.read().decode().splitlines() if line]
    except urllib.error.HTTPError as exc:
        return exc.code, []


def test_ask_streams_the_answer_then_its_pages(tmp_path: Path) -> None:
    project = built_project(tmp_path / "p")
    with serving(Viewer(project)) as url:
        status, lines = ask(url, "What is FAISS?")
    assert status == 200
    assert any("text" in line for line in lines)
    done = lines[-1]
    assert done["done"] is True and isinstance(done["pages"], list)
    assert "".join(str(line.get("text", "")) for line in lines) == done["answer"]


def test_ask_on_a_stale_wiki_says_how_to_fix_it(tmp_path: Path) -> None:
    project = built_project(tmp_path / "p")
    (project.sources_dir / "new.md").write_text("# New\n\nA new note.\n", encoding="utf-8")
    with serving(Viewer(project)) as url:
        _, lines = ask(url, "What is FAISS?")
    assert "wikic build" in str(lines[-1]["error"])


def test_ask_wants_json_so_a_cross_site_form_cannot_post(url: str) -> None:
    assert ask(url, "What is FAISS?", "application/x-www-form-urlencoded")[0] == 415


def test_viewing_writes_nothing_to_sources_or_wiki(tmp_path: Path) -> None:
    project = built_project(tmp_path / "p")
    before = _tree(project)
    with serving(Viewer(project)) as url:
        for path in ("/", "/p/faiss.html", "/s/tools.md.html", "/graph.html", "/health.html", "/search.html"):
            text(url, path)
        ask(url, "What is FAISS?")
    assert _tree(project) == before


def test_findings_come_from_the_lint_cache_which_serving_never_writes(tmp_path: Path) -> None:
    project = built_project(tmp_path / "p")
    faiss = project.wiki_dir / "faiss.md"
    faiss.write_text(faiss.read_text().replace("similarity search", "fast similarity search"))
    before = _lint_state(project)
    with serving(Viewer(project)) as url:
        assert "hand-edit" in linted(url, "/p/faiss.html")  # the edit is seen, checked again
    assert _lint_state(project) == before  # ... and not stored: only `wikic build`/`site` store


def _lint_state(project: Project) -> list[object]:
    db = sqlite3.connect(project.state_path)
    try:
        rows = db.execute("SELECT * FROM lint_pages ORDER BY rel").fetchall()
        meta = db.execute("SELECT * FROM meta ORDER BY k").fetchall()
    finally:
        db.close()
    return [rows, meta]


def _tree(project: Project) -> dict[str, bytes]:
    found = {}
    for folder in (project.sources_dir, project.wiki_dir):
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                found[str(path)] = path.read_bytes()
    found["schema"] = project.schema_path.read_bytes()
    return found


def test_the_viewer_shows_a_rebuilt_wiki(tmp_path: Path) -> None:
    project = built_project(tmp_path / "p")
    with serving(Viewer(project)) as url:
        assert "Brand new note" not in text(url, "/")
        (project.sources_dir / "brand.md").write_text("# Brand new note\n\nIt is new.\n", encoding="utf-8")
        from projects import run_build

        run_build(project)
        assert "Brand new note" in text(url, "/")


def test_cli_serve_prints_its_url_and_warns_off_loopback(tmp_path: Path) -> None:
    project = built_project(tmp_path / "p")
    args = [
        sys.executable,
        "-m",
        "wikic",
        "-C",
        str(project.root),
        "serve",
        "--port",
        "0",
        "--host",
        "0.0.0.0",
    ]
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, env=subprocess_env())
    try:
        assert proc.stderr is not None
        warning = proc.stderr.readline()
        assert "warning: listening on 0.0.0.0" in warning
        line = proc.stderr.readline()
        assert line.startswith("wikic serve: http://0.0.0.0:")
        port = int(line.split(":")[3].split("/")[0])
        assert fetch(f"http://127.0.0.1:{port}/", "/p/faiss.html")[0] == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert os.path.isdir(project.wiki_dir)


def test_cli_serve_on_a_busy_port_says_what_to_do(tmp_path: Path) -> None:
    project = built_project(tmp_path / "p")
    with serving(Viewer(project)) as url:
        port = url.rstrip("/").rsplit(":", 1)[1]
        proc = subprocess.run(
            [sys.executable, "-m", "wikic", "-C", str(project.root), "serve", "--port", port],
            capture_output=True,
            text=True,
            env=subprocess_env(),
            timeout=60,
        )
    assert proc.returncode == 2
    assert "--port 0" in proc.stderr and "Traceback" not in proc.stderr


def test_a_broken_schema_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    project = built_project(tmp_path / "p")
    with serving(Viewer(project)) as url:
        project.schema_path.write_text("title: [unclosed\n", encoding="utf-8")
        os.utime(project.wiki_dir)  # as a build would: the viewer reads the project again
        status, _, body = fetch(url, "/")
        assert status == 500 and b"schema.yaml" in body and b"Traceback" not in body


def test_a_source_with_spaces_and_accents_opens_from_its_citation(tmp_path: Path) -> None:
    import re
    from urllib.parse import urljoin

    notes = {"My Notes/über x.md": "# Über notes\n\nThe Über notes mention FAISS twice.\n"}
    project = built_project(tmp_path / "p", notes)
    with serving(Viewer(project)) as url:
        html = text(url, "/p/uber-notes.html")
        (cite,) = set(re.findall(r'class="cite" href="([^"]*)"', html))
        assert cite == "../s/My%20Notes/%C3%BCber%20x.md.html#L3"
        assert "mention FAISS twice" in text(url, urljoin("/p/uber-notes.html", cite).split("#")[0])
