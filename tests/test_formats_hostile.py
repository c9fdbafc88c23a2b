"""Bad PDF, DOCX and EPUB files get one clear line naming the file, and the rest
of the project builds: encrypted, no text layer, corrupt, a zip bomb, too long,
and the formats extra missing."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import formatkit as fk
from projects import make_project, run_build, subprocess_env

from wikic.project import Project
from wikic.sources.extract import store_dir

GOOD = {"good.md": "# Good\n\nNinja is a small build system written by Evan Martin.\n"}


def build_with(tmp_path: Path, name: str, data: bytes, schema_extra: str = "") -> tuple[Project, list[str]]:
    project = make_project(tmp_path, GOOD)
    if schema_extra:
        with project.schema_path.open("a", encoding="utf-8") as fh:
            fh.write(schema_extra)
    (project.sources_dir / name).write_bytes(data)
    report, _ = run_build(project)
    errors = [f"{e['where']}: {e['message']}" for e in report.errors]
    assert any("good" in p.name for p in project.wiki_dir.glob("*.md")), "the rest must still build"
    assert not list(store_dir(project.root).glob("*.md")), "a failed extraction is not stored"
    return project, errors


def only_error(errors: list[str], name: str) -> str:
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"sources/{name}: "), errors
    assert "\n" not in errors[0] and "Traceback" not in errors[0]
    return errors[0]


def test_an_encrypted_pdf(tmp_path: Path) -> None:
    _, errors = build_with(tmp_path, "secret.pdf", fk.encrypted_pdf())
    assert "encrypted with a password" in only_error(errors, "secret.pdf")


def test_a_pdf_without_a_text_layer(tmp_path: Path) -> None:
    _, errors = build_with(tmp_path, "scan.pdf", fk.scanned_pdf())
    assert "no text layer" in only_error(errors, "scan.pdf")
    assert "OCR is not supported" in errors[0]


def test_a_corrupt_docx(tmp_path: Path) -> None:
    good = fk.docx("Notes", {"Make": ["Make compares timestamps."]})
    _, errors = build_with(tmp_path, "broken.docx", good[: len(good) // 2])
    assert "not a valid zip container" in only_error(errors, "broken.docx")


def test_a_docx_that_is_a_zip_of_something_else(tmp_path: Path) -> None:
    _, errors = build_with(tmp_path, "other.docx", fk.epub("A book", [("One", "<p>Text.</p>")]))
    assert "cannot be read as DOCX" in only_error(errors, "other.docx")


def test_a_zip_bomb_is_refused_before_it_is_inflated(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.docx"
    fk.zip_bomb(bomb, 30_000_000, fk.docx("Notes", {"Make": ["Make compares timestamps."]}))
    assert bomb.stat().st_size < 200_000
    _, errors = build_with(tmp_path / "p", "bomb.docx", bomb.read_bytes(), "sources:\n  max_bytes: 1000000\n")
    message = only_error(errors, "bomb.docx")
    assert "would unpack to 30," in message and "zip bomb" in message


def test_an_epub_zip_bomb(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.epub"
    fk.zip_bomb(bomb, 30_000_000, fk.epub("A book", [("One", "<p>Text.</p>")]))
    _, errors = build_with(tmp_path / "p", "bomb.epub", bomb.read_bytes(), "sources:\n  max_bytes: 1000000\n")
    assert "zip bomb" in only_error(errors, "bomb.epub")


def test_a_2000_page_pdf_is_bounded_by_max_parts(tmp_path: Path) -> None:
    huge = fk.pdf([[f"Page {n} says that build number {n} passed."] for n in range(2000)])
    started = time.monotonic()
    _, errors = build_with(tmp_path, "huge.pdf", huge, "sources:\n  part_lines: 20\n  max_parts: 3\n")
    message = only_error(errors, "huge.pdf")
    assert "sources.max_parts" in message and "over 60 lines" in message
    # extraction stops at the limit: a few pages read, not 2,000 (a generous bound for a loaded box)
    assert time.monotonic() - started < 60


def test_a_missing_extra_is_one_line_naming_it(tmp_path: Path) -> None:
    project = make_project(tmp_path, GOOD)
    (project.sources_dir / "report.pdf").write_bytes(fk.pdf([["Ninja is small."]]))
    # pypdf made unimportable in that process, as when the extra is not installed
    code = "import sys; sys.modules['pypdf'] = None; from wikic.cli.main import main; main()"
    proc = subprocess.run(
        [sys.executable, "-c", code, "build", "--json"],
        cwd=project.root,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert len(report["errors"]) == 1
    message = json.dumps(report["errors"][0])
    assert "sources/report.pdf" in message and "pip install 'wikic[formats]'" in message
    assert "Traceback" not in proc.stderr
