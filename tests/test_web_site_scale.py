"""`wikic site` on the generated wiki of bench/lint_scale.py (topic pages, source pages, many
[[links]], a build's state and its closing lint): a one-page re-export equals a fresh full
export into another folder, byte for byte, after each kind of hand edit; and a page whose file's
stat did not change is not read again."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from wikic.lint.runner import build_summary
from wikic.project import Project
from wikic.web.site import MANIFEST, export

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from lint_scale import generate  # noqa: E402  (a bench script's generator, as web_scale.py uses it)

HOUR = 3600 * 10**9


def _age(path: Path, step: int) -> None:
    """An mtime well before the export (a page edited a while ago): its stat is trusted."""
    past = time.time_ns() - 2 * HOUR + step * 10**9
    os.utime(path, ns=(past, past))


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = generate(tmp_path / "p", 120)
    for path in [*project.wiki_dir.iterdir(), *project.sources_dir.iterdir()]:
        _age(path, 0)
    build_summary(project)  # the lint every build ends with: each page's findings kept
    return project


def _files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}


def _same_as_fresh(project: Project, out: Path, fresh: Path, what: str, lint: bool) -> None:
    export(project, fresh, lint=lint)
    ours, theirs = _files(out), _files(fresh)
    assert ours.keys() == theirs.keys(), what
    assert [rel for rel, data in theirs.items() if rel != MANIFEST and ours[rel] != data] == [], what
    manifests = [json.loads(files[MANIFEST]) for files in (ours, theirs)]
    for manifest in manifests:
        manifest.pop("started_ns")
    assert manifests[0] == manifests[1], what


def _topics(project: Project) -> list[Path]:
    return sorted(
        p for p in project.wiki_dir.glob("*.md") if not p.stem.startswith("src-") and p.stem != "index"
    )


def _edits(project: Project) -> list[tuple[str, Path, Callable[[str], str] | None]]:
    """Each kind of hand edit, in turn; each returns the page's new text (None: deleted)."""
    first, second, third = _topics(project)[:3]
    title = first.read_text().split("title: ", 1)[1].split("\n", 1)[0]
    add = "## Sources"
    return [
        ("a hand edit of a page's text", first, lambda t: t.replace(add, "An added line.\n\n" + add)),
        ("a new link, by title", second, lambda t: t.replace(add, f"See [[{title}]].\n\n{add}")),
        ("a title change (the link by title now misses)", first, lambda t: t.replace(title, "Renamed")),
        ("a deleted page", third, None),
        ("a new page, linking to the new title", project.wiki_dir / "new.md", lambda t: NEW),
    ]


NEW = "---\ntitle: New page\n---\n\n# New page\n\nSee [[Renamed]] and [[src-s00000]].\n"


@pytest.mark.parametrize("lint", [True, False], ids=["lint", "no-lint"])
def test_a_one_page_re_export_equals_a_fresh_full_export(
    project: Project, tmp_path: Path, lint: bool
) -> None:
    out = tmp_path / "site"
    full = export(project, out, lint=lint)
    for step, (what, path, edit) in enumerate(_edits(project), 1):
        if edit is None:
            path.unlink()
        else:
            path.write_text(edit(path.read_text() if path.exists() else ""))
            _age(path, step)
        report = export(project, out, lint=lint)
        _same_as_fresh(project, out, tmp_path / f"fresh-{step}", what, lint)
        assert 0 < report.rendered < full.rendered / 10, (what, report.rendered)  # not every page again
    source = sorted(project.sources_dir.iterdir())[0]
    source.write_text(source.read_text().replace("\n", "\nAn added source line.\n", 1))
    _age(source, 9)
    export(project, out, lint=lint)  # its view shows the new line; with lint, its pages are stale
    _same_as_fresh(project, out, tmp_path / "fresh-source", "a source edited", lint)


def test_a_page_whose_stat_did_not_change_is_not_read_again(project: Project, tmp_path: Path) -> None:
    out = tmp_path / "site"
    export(project, out)
    edited, untouched = _topics(project)[:2]
    text = untouched.read_text()
    st = untouched.stat()
    swapped = text.replace("title: ", "title: Q", 1).replace("\n# ", "\n#", 1)  # same size
    assert len(swapped.encode()) == st.st_size
    untouched.write_text(swapped)
    os.utime(untouched, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size, same mtime: same stat
    edited.write_text(edited.read_text().replace("## Sources", "An added line.\n\n## Sources"))
    _age(edited, 1)
    report = export(project, out)
    assert report.written and f"p/{untouched.stem}.html" not in report.written
    assert "title: Q" not in (out / "p" / f"{untouched.stem}.html").read_text()
    title = text.split("title: ", 1)[1].split("\n", 1)[0]
    assert title in (out / "p" / f"{untouched.stem}.html").read_text()  # as the stat last saw it
