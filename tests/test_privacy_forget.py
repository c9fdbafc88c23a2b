"""Deleting is forgetting: after `wikic forget` (and after a plain delete and build) no
file of the project, state.db and its WAL included, holds a canary string of the
source, byte for byte; hand-edited answers are kept and reported; `wikic gc`;
the offline replay of the rest still works."""

from __future__ import annotations

import json
import os
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from projects import make_project, run_build

from wikic import snapshot
from wikic.ask.runner import AskOptions, ask
from wikic.backends.scripted import ScriptedBackend
from wikic.cli.main import cli
from wikic.config import ModelConfig
from wikic.privacy import forget
from wikic.project import Project
from wikic.state import Meta, State
from wikic.state.connection import Connection


def canary() -> str:
    return "Zq" + uuid.uuid4().hex[:12]  # unique per test; capitalised: a topic name too


def secret_note(word: str) -> str:
    return f"""# Incident notes

## Chunking

The {word} cluster kept chunks of a few hundred tokens for the {word} index.

## {word}

The **{word}** service stores its keys next to the chunking index.
"""


def invoke(project: Project, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["-C", str(project.root), *args])
    return result.exit_code, result.stdout if "--json" in args else result.output


def holding(project: Project, word: str) -> list[str]:
    """Every file under the project whose bytes contain `word` (any case)."""
    needles = [word.encode(), word.lower().encode()]
    return [
        str(p.relative_to(project.root))
        for p in project.root.rglob("*")
        if p.is_file() and any(n in p.read_bytes() for n in needles)
    ]


def built_with_secret(tmp_path: Path, word: str, mode: str = "prose", text: str = "") -> Project:
    project = make_project(tmp_path)
    schema = project.schema_path.read_text() + f"write:\n  mode: {mode}\n"
    project.schema_path.write_text(schema, encoding="utf-8")
    (project.sources_dir / "incident.md").write_text(text or secret_note(word), encoding="utf-8")
    report, _ = run_build(project)
    assert report.ok, report.errors
    assert holding(project, word)  # the canary is everywhere before
    return project


def ask_and_save(project: Project, question: str) -> dict[str, object]:
    backend = ScriptedBackend(ModelConfig(backend="scripted", name="v1"))
    result = ask(project, question, AskOptions(save=True), backend_factory=lambda s: backend)
    return result.to_json()


def saved_prefix_state(project: Project, word: str) -> None:
    """What the llama backend leaves after `ask`: a model state holding the whole prefix."""
    folder = project.state_dir / "prefix"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "0123abcd.bin").write_bytes(b"\0state of a prefix with " + word.encode())
    (folder / "0123abcd.json").write_text(json.dumps({"format": 1, "model_id": "llama:x"}))


def test_forget_leaves_no_byte_of_the_source(tmp_path: Path) -> None:
    word = canary()
    project = built_with_secret(tmp_path, word)
    saved = ask_and_save(project, f"What is {word}?")
    assert saved["saved"] and word.lower() in str(saved["pages"]).lower()
    saved_prefix_state(project, word)
    code, out = invoke(project, "forget", "sources/incident.md", "--json")
    assert code == 0, out
    assert json.loads(out)["forgotten"] == ["sources/incident.md"]
    assert holding(project, word) == []
    assert not (project.root / saved["saved"]).exists()  # type: ignore[operator]
    # the other sources' pages are all there, and their notes on the shared page
    chunking = (project.wiki_dir / "chunking.md").read_text()
    assert "rag.md" in chunking and "incident.md" not in chunking
    assert invoke(project, "build", "--json")[0] == 0


def body_note(word: str) -> str:
    """The canary in the text only: no heading or bold term makes it a page name."""
    return f"# Incident notes\n\n## Chunking\n\nThe {word} cluster kept chunks of a few hundred tokens.\n"


def test_a_plain_delete_and_build_forgets_too(tmp_path: Path) -> None:
    word = canary()
    project = built_with_secret(tmp_path, word, text=body_note(word))
    (project.sources_dir / "incident.md").write_text(body_note(word) + f"It ran {word} twice.\n")
    assert run_build(project)[0].ok  # an older version too
    saved_prefix_state(project, word)
    log = (project.wiki_dir / "log.md").read_text()
    (project.sources_dir / "incident.md").unlink()
    report, _ = run_build(project)
    assert report.ok, report.errors
    # earlier entries stay (only names of pages that went and the source's path leave them)
    after = (project.wiki_dir / "log.md").read_text()
    assert re.findall(r"^## .* build$", log, re.M) == re.findall(r"^## .* build$", after, re.M)[:-1]
    assert holding(project, word) == []
    wal = project.state_dir / "state.db-wal"
    assert not wal.exists() or b"incident" not in wal.read_bytes()


def test_a_database_not_zeroed_throughout_is_rewritten_once_then_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every connection zeroes what it deletes (secure_delete), so forgetting a source empties
    the WAL and rewrites nothing else; a database older than that (no Meta.ZEROED) may hold
    deleted bytes from before: the first forgetting rewrites it whole (VACUUM) and marks it."""
    rewrites: list[str] = []
    execute = Connection.execute

    def spied(self: Connection, sql: str, parameters: Any = ()) -> Any:
        if sql.strip().upper() == "VACUUM":
            rewrites.append(sql)
        return execute(self, sql, parameters)

    monkeypatch.setattr(Connection, "execute", spied)
    word = canary()
    project = built_with_secret(tmp_path, word, text=body_note(word))
    (project.sources_dir / "other.md").write_text("# Other\n\nSomething else entirely.\n", encoding="utf-8")
    assert run_build(project)[0].ok
    with State.open(project.state_path) as state:
        assert state.db.execute("PRAGMA secure_delete").fetchone()[0] == 1
        assert state.get_meta(Meta.ZEROED) == "1"  # made so
        state.delete_meta(Meta.ZEROED)  # as a database made before it was
    (project.sources_dir / "incident.md").unlink()
    assert run_build(project)[0].ok
    with State.open(project.state_path) as state:
        assert state.get_meta(Meta.ZEROED) == "1"
    assert holding(project, word) == [] and len(rewrites) == 1
    (project.sources_dir / "other.md").unlink()
    assert run_build(project)[0].ok
    assert len(rewrites) == 1  # its bytes zeroed as they went, nothing rewritten
    wal = project.state_dir / "state.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0 or b"Something else" not in wal.read_bytes()
    assert all(b"Something else" not in p.read_bytes() for p in project.state_dir.rglob("*") if p.is_file())


def test_a_deleted_source_s_title_leaves_log_md(tmp_path: Path) -> None:
    """The title names the source's page, and log.md's entries list that name."""
    word = canary()
    title = f"# {word} runbook\n\n## Chunking\n\nThe cluster kept chunks of a few hundred tokens.\n"
    project = built_with_secret(tmp_path, word, text=title)
    assert (project.wiki_dir / "retrieval-augmented-generation.md").exists()  # kept below
    assert any(
        word.lower() in line.lower() for line in (project.wiki_dir / "log.md").read_text().splitlines()
    )
    (project.sources_dir / "incident.md").unlink()
    code, out = invoke(project, "build", "--json")
    assert code == 0, out
    assert holding(project, word) == []
    log = (project.wiki_dir / "log.md").read_text()
    assert "incident.md" not in log and "retrieval-augmented-generation.md" in log  # others stay


def test_notes_mode_and_an_older_version_of_the_source(tmp_path: Path) -> None:
    word, older = canary(), canary()
    project = built_with_secret(tmp_path, older, mode="notes")
    (project.sources_dir / "incident.md").write_text(secret_note(word), encoding="utf-8")
    assert run_build(project)[0].ok  # the older text's cached answers are unreferenced now
    code, out = invoke(project, "forget", str(project.sources_dir / "incident.md"))
    assert code == 0, out
    assert holding(project, word) == [] and holding(project, older) == []


def test_a_hand_edited_answer_is_kept_and_reported(tmp_path: Path) -> None:
    word = canary()
    project = built_with_secret(tmp_path, word)
    saved = ask_and_save(project, f"What is {word}?")
    page = project.root / str(saved["saved"])
    page.write_text(page.read_text() + "\nMy own note.\n", encoding="utf-8")
    code, out = invoke(project, "forget", "sources/incident.md", "--json")
    assert code == 0, out
    assert page.exists()
    assert any("edited by hand" in w for w in json.loads(out)["build"]["warnings"])


def test_forget_refuses_what_is_not_a_source(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    run_build(project)
    code, out = invoke(project, "forget", "schema.yaml")
    assert code == 2 and "not under" in out
    code, out = invoke(project, "forget", "sources/nope.md")
    assert code == 2 and "no such source" in out


def test_the_rest_replays_offline_after_forget_and_gc(tmp_path: Path) -> None:
    word = canary()
    project = built_with_secret(tmp_path, word)
    (project.sources_dir / "rag.md").write_text(
        "# RAG\n\nRAG retrieves **chunks** first.\n", encoding="utf-8"
    )
    assert run_build(project)[0].ok  # leaves rag.md's older answers behind
    with State.open(project.state_path) as state:
        before = state.db.execute("SELECT COUNT(*) FROM cache").fetchone()[0]
    code, out = invoke(project, "gc", "--json")
    assert code == 0, out
    done = json.loads(out)
    assert done["model_answers"] >= 1
    with State.open(project.state_path) as state:
        after = state.db.execute("SELECT COUNT(*) FROM cache").fetchone()[0]
    assert after == before - done["model_answers"] - done["loose_answers"]
    assert invoke(project, "forget", "sources/incident.md")[0] == 0
    for page in project.wiki_dir.glob("*.md"):
        page.unlink()
    code, out = invoke(project, "build", "--offline", "--json")
    assert code == 0, out
    assert json.loads(out)["actions"]["ran"] == 0
    assert (project.wiki_dir / "chunking.md").exists()


def test_gc_keeps_the_answers_of_the_current_wiki(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    assert run_build(project)[0].ok
    backend = ScriptedBackend(ModelConfig(backend="scripted", name="v1"))
    question = "What is FAISS?"
    ask(project, question, backend_factory=lambda s: backend)
    code, out = invoke(project, "gc", "--json")
    assert code == 0 and json.loads(out)["loose_answers"] == 0
    assert ask(project, question, backend_factory=lambda s: backend).answer_cached
    (project.sources_dir / "tools.md").write_text("# Tools\n\n## FAISS\n\nFAISS is fast.\n", encoding="utf-8")
    assert run_build(project)[0].ok
    code, out = invoke(project, "gc", "--json")
    assert code == 0 and json.loads(out)["loose_answers"] == 1 and json.loads(out)["compacted"]


def test_the_answers_of_other_stages_are_found_from_their_index(tmp_path: Path) -> None:
    """drop_cache(MODEL_STAGES, other=True) drops the answers of every other stage (ask's, an
    older wikic's), those alone, found from the partial index of them (schema.py's
    cache_others), not by reading every answer."""
    from wikic.privacy.forget import MODEL_STAGES

    with State.open(tmp_path / "state.db") as state:
        with state.transaction():
            for key, stage in [("k1", "digest"), ("k2", "write"), ("k3", "ask"), ("k4", "an old stage")]:
                state.put_cache(key, stage, {"text": key}, 1, 1)
        said: list[str] = []
        state.db.set_trace_callback(said.append)
        with state.transaction():
            assert state.drop_cache(MODEL_STAGES, other=True) == 2
        state.db.set_trace_callback(None)
        assert sorted(state.cached_many(["k1", "k2", "k3", "k4"])) == ["k1", "k2"]
        delete = next(sql for sql in said if sql.startswith("DELETE FROM cache"))
        plan = " ".join(str(row[-1]) for row in state.db.execute(f"EXPLAIN QUERY PLAN {delete}"))
        assert plan == "SCAN cache USING INDEX cache_others"  # its rows alone: the others' answers


def test_the_answers_no_action_refers_to_are_dropped_and_only_those(tmp_path: Path) -> None:
    """drop_cache(unreferenced=True) looks the cache's keys up in the actions' index: an action
    with no key (NULL makes `IN` say NULL for every key it does not find) drops nothing more
    and nothing less; a stage not asked for is kept."""
    from wikic.state.build import ActionRecord

    with State.open(tmp_path / "state.db") as state:
        with state.transaction():
            for key, stage in [("k1", "digest"), ("k2", "digest"), ("k3", "write"), ("k4", "ask")]:
                state.put_cache(key, stage, {"text": key}, 1, 1)
            state.set_action(ActionRecord("digest:sources/a.md", "digest", "k1", {}))
            state.set_action(ActionRecord("write:topic:x", "write", None, {}))  # type: ignore[arg-type]
        with state.transaction():
            assert state.drop_cache(("digest", "write"), unreferenced=True) == 2
        assert sorted(state.cached_many(["k1", "k2", "k3", "k4"])) == ["k1", "k4"]


def test_the_ask_records_let_go_are_those_not_as_wiki_holds_them_by_the_builds_walk_or_by_stat(
    tmp_path: Path,
) -> None:
    """The records ask keeps of pages changed or gone since it read them go (they may hold a
    forgotten source's text): found in the build's walk of wiki/ as it left it, or, where the
    build has none that took every entry, by a stat of each page; the same pages either way."""
    project = make_project(tmp_path)
    assert run_build(project)[0].ok
    for page in project.wiki_dir.glob("*.md"):  # written a while ago: ask keeps their stats
        os.utime(page, ns=(page.stat().st_atime_ns, page.stat().st_mtime_ns - 60 * 10**9))
    backend = ScriptedBackend(ModelConfig(backend="scripted", name="v1"))
    ask(project, "What is chunking?", AskOptions(stale_ok=True), backend_factory=lambda s: backend)
    with State.open(project.state_path) as state:
        asked = sorted(rel for rel, _, _ in state.ask_stats())
    edited, deleted = "wiki/chunking.md", "wiki/faiss.md"
    assert {edited, deleted} <= set(asked)
    page = project.root / edited
    page.write_text(page.read_text(encoding="utf-8") + "\nMy own line.\n", encoding="utf-8")
    (project.root / deleted).unlink()
    walked = snapshot.wiki(project)
    with State.open(project.state_path) as state:
        assert sorted(forget._asked_changed(project, state)) == [edited, deleted]
        assert sorted(forget._asked_changed(project, state, walked)) == [edited, deleted]
        walked.complete = False  # an entry it could not stat: each page stat'ed instead
        assert sorted(forget._asked_changed(project, state, walked)) == [edited, deleted]
