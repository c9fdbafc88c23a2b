"""Hostile model output, served by the scripted backend (WIKIC_SCRIPTED_RESPONSES)
through the real backend interface: page names that are paths, reserved or empty;
Markdown and HTML that try to inject front matter; JSON that is malformed, cut
short, the wrong shape or enormous. Nothing is written outside wiki/ and .wikic/,
names become safe unique slugs, invalid output is retried then reported, and
remembered so that no later build pays for the same failure."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from faults.harness import calls, make_project, notes, tree, wiki_snapshot, wikic
from wikic.build.pipeline import BuildOptions, build
from wikic.build.report import Progress, Report
from wikic.project import Project
from wikic.wiki.page import WIKILINK, plain_links, split_page

LONG = "A" * 500
EVIL1 = f"""# Evil one

../../etc/passwd is where the secrets live.
/abs/path is an absolute path.
CON is a reserved device name on Windows.
index is the name of the catalogue page.
log is the name of the build log page.
{LONG} is a very long name.
--- title: pwned type: hacked --- is front matter.
<script>alert(1)</script> is markup.
"""
EVIL2 = """# Evil two

C:\\Windows\\System32 is a folder on Windows.
index.md is the catalogue file itself.
Index is the catalogue again, capitalised.
nul is another reserved device name.
../../etc/passwd comes back here as well.
.. is the parent folder.
"""


def digest(summary: str, *named: tuple[str, int]) -> str:
    return json.dumps(
        {"summary": summary, "topics": [{"name": n, "type": "concept", "lines": [line]} for n, line in named]}
    )


HOSTILE_SUMMARY = "---\ntitle: pwned\n---\n<script>alert(1)</script> [[../../etc/passwd]] sums it up."
HOSTILE_WRITES = [
    json.dumps(
        {
            "paragraphs": [
                {
                    "text": "---\ntitle: pwned\ntype: hacked\n---\n# Injected heading "
                    "<script>alert(1)</script> links to [[../../etc/passwd]], "
                    "[[/abs/path|abs]], [[index]] and [[CON]].",
                    "cites": [1],
                }
            ]
        }
    ),
    "```json\n"
    + json.dumps(
        {
            "paragraphs": [
                {
                    "text": "<img src=x onerror=alert(1)> A paragraph with "
                    "[[log]], [[  ]], [[a|b|c]] and a ]] stray.",
                    "cites": [99, -1, "1", None],
                }
            ]
        }
    )
    + "\n```",
    json.dumps({"paragraphs": [{"text": "word " * 200_000, "cites": list(range(100_000))}] * 50}),
]


def script(tmp_path: Path, answers: dict[str, list[str]]) -> Path:
    path = tmp_path / "responses.json"
    path.write_text(json.dumps(answers), encoding="utf-8")
    return path


def run_build(project: Project) -> Report:
    return build(project, BuildOptions(), Progress(quiet=True))


def test_hostile_names_and_markup_stay_inside_wiki(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {
        "digest:<script>alert(1)</script> is markup": [
            digest(
                HOSTILE_SUMMARY,
                ("../../etc/passwd", 3),
                ("/abs/path", 4),
                ("CON", 5),
                ("index", 6),
                ("log", 7),
                ("", 8),
                (LONG, 8),
                ("---\ntitle: pwned\ntype: hacked\n---", 9),
            )
        ],
        "digest:is the parent folder": [
            digest(
                "Second.",
                ("C:\\Windows\\System32", 3),
                ("index.md", 4),
                ("Index", 5),
                ("nul", 6),
                ("../../etc/passwd", 7),
                ("..", 8),
                ("<script>alert(1)</script>", 3),
            )
        ],
        "write": HOSTILE_WRITES,
    }
    monkeypatch.setenv("WIKIC_SCRIPTED_RESPONSES", str(script(tmp_path, answers)))
    project = make_project(tmp_path / "p", {**notes(3), "evil1.md": EVIL1, "evil2.md": EVIL2})
    (tmp_path / "etc").mkdir()
    before = tree(tmp_path, skip=("p/wiki", "p/.wikic"))
    report = run_build(project)
    assert report.errors == [], report.errors
    assert tree(tmp_path, skip=("p/wiki", "p/.wikic")) == before  # nothing written anywhere else
    assert not (tmp_path / "etc" / "passwd").exists()

    files = wiki_snapshot(project, with_log=True)
    names = sorted(files)
    for name in names:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*\.md", name), name
    assert files["index.md"].startswith(b"# Fault wiki\n")
    assert files["log.md"].startswith(b"# Build log\n")
    for expected in (
        "etc-passwd.md",
        "abs-path.md",
        "con-page.md",
        "index-page.md",
        "log-page.md",
        "nul-page.md",
        "c-windows-system32.md",
    ):
        assert expected in files, (expected, names)
    assert any(name.startswith("a" * 60) and len(name) <= 83 for name in names)  # the 500-character name

    pages = {
        name: split_page(data.decode("utf-8"))
        for name, data in files.items()
        if name not in ("index.md", "log.md")
    }
    titles = [str(p.meta["title"]) for p in pages.values()]
    assert len(set(titles)) == len(titles)  # one page per name: merged, never two files for one title
    for name, page in pages.items():
        assert set(page.meta) <= {"title", "type", "aliases", "sources"}, (name, page.meta)
        assert page.meta["type"] in ("concept", "entity", "source"), (name, page.meta)
        assert "\n" not in str(page.meta["title"]) and len(str(page.meta["title"])) <= 120
        assert all(str(s).startswith("sources/") for s in page.meta["sources"])
        assert "\n---\n" not in page.body.split("\n", 1)[1], name  # no second front matter block
        assert "<script" not in page.body and "onerror" not in page.body, name
        assert not re.search(r"^#+ .*[Ii]njected", page.body, re.M), name
        for m in WIKILINK.finditer(page.body):
            assert f"{m.group(1)}.md" in files, (name, m.group(0))  # every link names a real page
    assert "<script" not in files["index.md"].decode("utf-8")
    # The other sources' pages are as they are without the hostile ones.
    monkeypatch.delenv("WIKIC_SCRIPTED_RESPONSES")
    clean = make_project(tmp_path / "clean", notes(3))
    run_build(clean)
    clean_files = wiki_snapshot(clean)
    for name in ("note-0.md", "note-1.md", "note-2.md", "topic-0.md", "topic-1.md", "topic-2.md"):
        assert pages[name].meta == split_page(clean_files[name].decode("utf-8")).meta


BAD = {
    "not json": "I am sorry, I cannot produce JSON today.",
    "wrong shape": '{"topics": 5, "summary": ["no"]}',
    "a list": "[1, 2, 3]",
    "cut short": '{"summa',
    "ungrounded": '{"summary": "x", "topics": [{"name": "Nothing here", "type": "concept", "lines": [999]}]}',
    "too deep": "[" * 100_000 + "]" * 100_000,
    "enormous": '{"summary": "' + "x" * 3_000_000 + '", "topics": 7}',
    "wrong types inside": '{"summary": 5, "topics": [{"name": {"a": 1}, "type": [], "lines": 7}]}',
}


def test_invalid_json_is_repaired_or_replaced_by_source_lines_and_never_paid_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "calls.log"
    monkeypatch.setenv("WIKIC_SCRIPTED_LOG", str(log))
    # The reference: notes 0-6 built, then note 7 and note 8 added.
    ref = make_project(tmp_path / "ref", notes(7))
    run_build(ref)
    for name, text in notes(9).items():
        (ref.sources_dir / name).write_text(text, encoding="utf-8")
    start = len(calls(log))
    run_build(ref)
    adding = len(calls(log)) - start

    bad = list(BAD.values())
    answers = {
        "digest:This note number 7 ": bad[:3],  # three bad answers: the source's own lines instead
        "digest:This note number 8 ": bad[3:6],  # likewise
        "digest:This note number 2 ": bad[6:7],  # one bad answer, then a good one: repaired
        'write:Notes about "Topic 4"': bad[7:8],  # the write stage is repaired the same way
    }
    monkeypatch.setenv("WIKIC_SCRIPTED_RESPONSES", str(script(tmp_path, answers)))
    project = make_project(tmp_path / "p", notes(9))
    start = len(calls(log))
    report = run_build(project)
    made = len(calls(log)) - start
    assert report.errors == [] and report.failed == 0
    warned = [w for w in report.warnings if "stayed unusable after 3 tries" in w]
    assert [w.split(":")[0] for w in warned] == ["digest sources/note07.md", "digest sources/note08.md"]
    assert all("\n" not in w and "opening lines" in w for w in warned)
    assert report.calls == made  # every try is counted: each was paid for
    # Notes 0-6 built as in the reference's first build; notes 7 and 8 have their page, from their
    # own first lines, and feed no topic.
    clean = make_project(tmp_path / "clean", notes(7))
    monkeypatch.delenv("WIKIC_SCRIPTED_RESPONSES")
    start_clean = len(calls(log))
    run_build(clean)
    assert made == len(calls(log)) - start_clean + 3 + 3 + 1 + 1  # the unusable tries and the two repairs
    got, want = wiki_snapshot(project), wiki_snapshot(clean)
    assert set(got) - set(want) == {"note-7.md", "note-8.md"}
    assert {k: v for k, v in got.items() if k in want and k != "index.md"} == {
        k: v for k, v in want.items() if k != "index.md"
    }
    page = split_page(got["note-7.md"].decode())
    assert "This note number 7 describes part 7" in page.body and "no topics were found" in page.body

    # The next build pays for nothing: the result stands like any answer.
    start = len(calls(log))
    report = run_build(project)
    assert len(calls(log)) == start and report.calls == 0 and report.errors == []

    # --retry-failed (the model behaves now) makes exactly the calls that adding notes 7 and 8 makes.
    report = build(project, BuildOptions(retry_failed=True, explain=True), Progress(quiet=True))
    assert report.errors == [] and report.warnings == []
    assert len(calls(log)) - start == adding
    retried = [e for e in report.explain if e["reason"].startswith("--retry-failed")]
    assert [e["action"] for e in retried] == ["digest sources/note07.md", "digest sources/note08.md"]
    assert wiki_snapshot(project) == wiki_snapshot(ref)
    start = len(calls(log))
    report = build(project, BuildOptions(retry_failed=True), Progress(quiet=True))
    assert len(calls(log)) == start  # nothing left to retry


def test_a_page_the_model_never_writes_lists_its_notes_with_their_citations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = {'write:Notes about "Topic 1"': ["{}"] * 10}
    monkeypatch.setenv("WIKIC_SCRIPTED_RESPONSES", str(script(tmp_path, answers)))
    project = make_project(tmp_path / "p", notes(3))
    report = run_build(project)
    assert report.errors == []
    assert [w.split(":")[0] for w in report.warnings] == ["write concept"]
    assert "Topic 1" in report.warnings[0] and "lists its notes" in report.warnings[0]
    body = split_page((project.wiki_dir / "topic-1.md").read_text(encoding="utf-8")).body
    # the notes are the source's lines, each cited where it stands (the topic's lines: its section)
    src = (project.sources_dir / "note01.md").read_text(encoding="utf-8").splitlines()
    n = next(i for i, line in enumerate(src, start=1) if line.startswith("Topic 1 is explained"))
    paragraph = next(p for p in body.split("\n\n") if p.startswith("Topic 1 is explained"))
    text = plain_links(paragraph)  # "[[avoid-repeated-work|avoid repeated work]]": a term's page
    assert src[n - 1] in text and "avoid repeated work between runs." in text
    assert paragraph.endswith(f"[note01.md:{n}-{n + 1}](../sources/note01.md#L{n}-L{n + 1})"), paragraph


def test_the_cli_warns_keeps_the_fallback_and_retries_it_on_request(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", notes(3))
    log = tmp_path / "calls.log"
    bad = script(tmp_path, {"digest:This note number 1 ": ["not json"] * 3})
    first = wikic(project.root, "build", "--json", log=log, WIKIC_SCRIPTED_RESPONSES=str(bad))
    assert first.code == 0, first.err
    assert [w.split(":")[0] for w in first.json()["warnings"]] == ["digest sources/note01.md"]
    assert "warning: digest sources/note01.md: the model's answers stayed unusable" in first.err
    again = wikic(project.root, "build", "--json", log=log)
    assert again.json()["llm"]["calls"] == 0 and again.json()["nothing_to_do"]
    before = len(calls(log))
    retry = wikic(project.root, "build", "--json", "--retry-failed", "--explain", log=log)
    assert retry.code == 0, retry.err
    report = retry.json()
    assert report["warnings"] == [] and report["llm"]["calls"] == len(calls(log)) - before > 0
    assert "explain: digest sources/note01.md: --retry-failed: its last answer was made without" in retry.err
