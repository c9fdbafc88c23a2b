"""A full build of many sources makes their facts, their other notes and the pages' bodies on
every CPU: forked children make each chunk's facts while the next chunk is digested
(build/prefacts.py), and all but a first share of each round of what is left (build/plan.py,
sourceplan.Memo.apart and notes_apart, assemble._Bodies.settle_all). The wiki and the rows the
plan keeps are byte for byte those of one process, whether the children made their shares,
failed or were stopped."""

from __future__ import annotations

import os
import shutil
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from forkkit import Forks, reaped

from tests.projects import make_project, run_build, wiki_files
from wikic import forked
from wikic.build import actions, assemble, digest, intake, plan, prefacts, sourceplan
from wikic.build.sourceplan import Memo, Settings, SourceFacts
from wikic.project import Project

pytestmark = pytest.mark.skipif(forked.shares(100, 10) < 2, reason="forks only on Linux with two CPUs")

TOPICS = ["Vector Search", "Write Ahead Logging", "Raft Consensus", "Bloom Filters", "Tail Latency"]


def _notes(n: int) -> dict[str, str]:
    """Sources that share names and headings, so that the plan merges topics across them."""
    notes = {}
    for i in range(n):
        a, b = TOPICS[i % len(TOPICS)], TOPICS[(i * 3 + 1) % len(TOPICS)]
        notes[f"n{i:02}.md"] = (
            f"# Note {i} on {a}\n\n{a} keeps the service {i} fast under load.\n\n## {b}\n\n"
            f"We measured {b} at {i * 7} ms on the Hetzner box in week {i}.\n"
            f"Ada Lovelace reviewed the {a} numbers with Grace Hopper.\n"
        )
    return notes


def _kept(project: Project) -> list[tuple[str, ...]]:
    with sqlite3.connect(project.state_dir / "state.db") as db:
        planned = db.execute("SELECT path, key, facts, notes_key, notes FROM planned ORDER BY path")
        names = db.execute("SELECT path, names FROM planned_names ORDER BY path")
        return planned.fetchall() + names.fetchall()


def _pair(tmp_path: Path) -> tuple[Project, Project]:
    one = make_project(tmp_path / "one", _notes(31))
    return one, Project(shutil.copytree(one.root, tmp_path / "forked"))


@pytest.fixture
def made_here(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sources whose facts this process made (a child's go to its own copy of the list)."""
    made: list[str] = []
    facts = sourceplan.source_facts

    def counted(src: plan.SourceInfo, settings: Settings, names: str | None = None) -> SourceFacts:
        made.append(src.path)
        return facts(src, settings, names)

    monkeypatch.setattr(sourceplan, "source_facts", counted)
    return made


@pytest.fixture
def rendered_here(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The pages whose bodies this process rendered (a child's go to its own copy of the list)."""
    rendered: list[str] = []
    render = assemble._Bodies._render

    def rendering(bodies: assemble._Bodies, pid: str) -> str:
        rendered.append(pid)
        return render(bodies, pid)

    monkeypatch.setattr(assemble._Bodies, "_render", rendering)
    return rendered


def _built(project: Project) -> tuple[dict[str, bytes], list[tuple[str, ...]], list[tuple[str, ...]]]:
    """The wiki, the rows the plan keeps, and each action's key (what the model was asked)."""
    report, _ = run_build(project)
    assert report.ok, report.errors
    with sqlite3.connect(project.state_dir / "state.db") as db:
        keys = db.execute("SELECT id, key FROM actions ORDER BY id").fetchall()
    return {k: v for k, v in wiki_files(project).items() if k != "log.md"}, _kept(project), keys


def test_facts_made_by_children_are_those_made_here(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    forks: Forks,
    made_here: list[str],
    rendered_here: list[str],
) -> None:
    one, shared = _pair(tmp_path)
    forks.allowed = False
    rendered = rendered_here
    alone = _built(one)
    assert forks == [] and len(made_here) == 31
    pages, made_here[:], rendered[:] = len(rendered), [], []
    forks.allowed = True
    monkeypatch.setattr(forked, "EACH", 4)
    monkeypatch.setattr(plan, "ROUND", 13)  # in rounds of 15 and 16, each shared
    assert _built(shared) == alone
    assert len(forks) >= 4  # a child for each round: for the facts, the other notes; more
    assert len(made_here) <= 31 - 2 * 5  # about half of each round made by its child
    assert 0 < len(rendered) < pages - 5  # the pages' bodies rendered by a child too
    again, calls = run_build(shared)
    assert again.ok and calls.requests == []


def test_a_full_assembly_shares_its_topic_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forks: Forks, rendered_here: list[str]
) -> None:
    """The topic pages, a few pages of most of the weight, are spread among the source pages
    (assemble._spread): by name they come last, in a last round too small to share, which
    this process rendered alone."""
    one, shared = _pair(tmp_path)
    rendered = rendered_here
    forks.allowed = False
    alone = _built(one)
    topics = [pid for pid in rendered if pid.startswith("topic:")]
    assert 2 <= len(topics) < 12
    forks.allowed, rendered[:] = True, []
    monkeypatch.setattr(forked, "EACH", 6)  # fewer than 12 pages are not shared
    monkeypatch.setattr(assemble, "ROUND", 31)  # rounds of 31 pages, the topic pages spread among them
    assert _built(shared) == alone
    here = [pid for pid in rendered if pid.startswith("topic:")]
    assert 0 < len(here) < len(topics)  # a child rendered some of them
    assert len(rendered) < 31


def test_a_child_that_fails_leaves_its_facts_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forks: Forks
) -> None:
    one, shared = _pair(tmp_path)
    forks.allowed = False
    alone = _built(one)
    forks.allowed = True
    parent, apart = os.getpid(), Memo.apart

    def failing(memo: Memo, src: plan.SourceInfo) -> tuple[str, str] | None:
        if os.getpid() != parent and src.path.endswith("7.md"):
            raise RuntimeError("a child's failure")
        return apart(memo, src)

    monkeypatch.setattr(Memo, "apart", failing)
    monkeypatch.setattr(forked, "EACH", 4)
    monkeypatch.setattr(plan, "ROUND", 13)
    assert _built(shared) == alone and len(forks) >= 4


def test_facts_made_ahead_during_the_digest_are_those_made_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forks: Forks, made_here: list[str]
) -> None:
    """A full build reads and digests its sources a chunk at a time (intake.CHUNK); a child
    makes each chunk's facts but the last's while the next is digested (build/prefacts.py),
    and another each chunk's names while it is digested (the first) or the chunk before is
    (the others, with their digests' hints, requests and keys): the plan makes only the last
    chunk's facts here, with the names made ahead, and the digest only the first chunk's hints
    and requests; the wiki, the actions' keys and the rows are one process's."""
    one, shared = _pair(tmp_path)
    monkeypatch.setattr(intake, "CHUNK", 6)  # 31 sources: chunks of 5, 5, 5, 5, 5 and 6
    forks.allowed = False
    alone = _built(one)
    facts: list[str] = []
    names: list[str] = []
    hinted: list[str] = []
    asked: list[str] = []
    collect = prefacts._collect

    def taken(child: prefacts._Child) -> dict[str, Any]:
        made = collect(child)
        for path, what in made.items():  # facts: (key, text); names: (names, hints, requests)
            (facts if isinstance(what[1], str) else names).append(path)
            if isinstance(what[1], list):
                hinted.append(path)
            if len(what) == 3 and what[2] is not None:
                asked.append(path)
        return made

    parent, hints_here, candidates = os.getpid(), list[str](), digest.candidates

    def hinting(lines: list[str], part: Any) -> list[str]:
        if os.getpid() == parent:
            hints_here.append(lines[0])
        return candidates(lines, part)

    monkeypatch.setattr(digest, "candidates", hinting)
    keyed_here, key = list[str](), actions.action_key

    def keying(stage: str, request: Any, *more: str) -> str:
        if os.getpid() == parent and stage == "digest":
            keyed_here.append(request.messages[-1]["content"])
        return key(stage, request, *more)

    monkeypatch.setattr(actions, "action_key", keying)
    rendered_here, messages = list[str](), digest._Digester._messages

    def rendering(digester: digest._Digester, part: Any) -> Any:
        if os.getpid() == parent:
            rendered_here.append(digester.source.path)
        return messages(digester, part)

    monkeypatch.setattr(digest._Digester, "_messages", rendering)

    monkeypatch.setattr(prefacts, "_collect", taken)
    named_here: list[str] = []
    source_names = sourceplan.source_names

    def naming(lines: list[str]) -> str:
        named_here.append(lines[0])  # a child's, in its own copy
        return source_names(lines)

    monkeypatch.setattr(sourceplan, "source_names", naming)
    made_here.clear()
    forks.allowed = True
    monkeypatch.setattr(forked, "EACH", 2)
    assert _built(shared) == alone
    assert sorted(facts) == [f"sources/n{i:02}.md" for i in range(25)]  # all but the last chunk's
    assert sorted(names) == [f"sources/n{i:02}.md" for i in range(31)]  # every chunk's
    assert set(made_here) <= {f"sources/n{i:02}.md" for i in range(25, 31)}  # here, or by the plan's child
    assert named_here == []  # with the names made ahead
    assert sorted(hinted) == [f"sources/n{i:02}.md" for i in range(5, 31)]  # every chunk's but the first's
    assert sorted(hints_here) == [f"# Note {i} on {TOPICS[i % 5]}" for i in range(5)]  # the first's
    assert sorted(asked) == sorted(hinted)  # their requests and keys with them
    first = [f"sources/n{i:02}.md" for i in range(5)]
    assert sorted(rendered_here) == first  # here, the first chunk's requests alone
    assert sorted(int(content.split("# Note ")[1].split()[0]) for content in keyed_here) == list(range(5))
    assert len(forks) >= 11 and all(map(reaped, forks))
    again, calls = run_build(shared)
    assert again.ok and calls.requests == []


@pytest.mark.parametrize("work", ["made_apart", "_names"])
def test_a_child_that_fails_during_the_digest_leaves_its_work_to_the_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forks: Forks, work: str
) -> None:
    """A child making a chunk's facts (made_apart) or names (_names) that fails: the plan
    makes them itself."""
    one, shared = _pair(tmp_path)
    monkeypatch.setattr(intake, "CHUNK", 6)
    forks.allowed = False
    alone = _built(one)
    parent, making, done = os.getpid(), getattr(prefacts, work), tmp_path / "done"

    def failing(*args: Any, **settings: object) -> object:
        arg = args[-1]  # a source (made_apart), a chunk's paths and texts (_names)
        paths = [arg.path] if work == "made_apart" else arg[0]
        if os.getpid() != parent and any(p.endswith(("07.md", "19.md", "27.md")) for p in paths):
            os._exit(3)  # killed, say: the chunk's file half written or empty
        if os.getpid() != parent:
            with done.open("a") as log:  # appended to by every child that does its work
                log.write(f"{paths[0]}\n")
        return making(*args, **settings)

    monkeypatch.setattr(prefacts, work, failing)
    forks.allowed = True
    monkeypatch.setattr(forked, "EACH", 2)
    assert _built(shared) == alone
    assert len(forks) >= 11 and all(map(reaped, forks))
    assert done.read_text()  # the other chunks' children did theirs


def test_facts_ahead_closed_stops_the_children_at_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forks: Forks
) -> None:
    """A build stopped (Ctrl-C, a failure) while children make facts ahead: none is left."""
    monkeypatch.setattr(forked, "EACH", 1)
    monkeypatch.setattr(prefacts, "made_apart", lambda src, **settings: threading.Event().wait(30))
    monkeypatch.setattr(prefacts, "_names", lambda *chunk: threading.Event().wait(30))
    infos = [plan.SourceInfo(f"sources/{n}.md", "T", None, None, text="a\n") for n in range(4)]
    started = time.monotonic()
    with prefacts.FactsAhead(plan.Settings("prose", 30), tmp_path) as ahead:
        ahead.start(infos)
        ahead.name([f"sources/{n}.md" for n in range(4, 8)], ["a\n"] * 4)  # the next chunk's
        assert ahead.has("sources/2.md") and not ahead.has("sources/9.md")
    assert len(forks) == 2 and all(map(reaped, forks))
    assert time.monotonic() - started < 20  # stopped, not waited for
    assert list(tmp_path.iterdir()) == []  # its file gone
