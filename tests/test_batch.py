"""`wikic build --batch`: a stage's model calls through an OpenAI-compatible Batch API,
with the real `openai` client against a fake of the API (tests/batchapi.py), in process
(httpx.MockTransport) and, for a killed build, on 127.0.0.1 with `wikic` in another process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from tests.batchapi import FakeBatchAPI
from tests.projects import NOTES, subprocess_env, wiki_files
from wikic.backends.openai_compat import OpenAIBackend
from wikic.build.report import Progress, Report
from wikic.build.run import BuildOptions, build
from wikic.config import Schema
from wikic.project import Project, init_project

SCHEMA = """\
title: Batch wiki
model:
  backend: openai
  name: fake
  base_url: {url}
  batch_poll: 0.01
  retries: 0
{extra}"""


def _project(root: Path, url: str = "http://fake.test/v1", extra: str = "") -> Project:
    project = init_project(root)
    project.schema_path.write_text(SCHEMA.format(url=url, extra=extra), encoding="utf-8")
    for name, text in NOTES.items():
        (project.sources_dir / name).write_text(text, encoding="utf-8")
    return project


def _build(project: Project, fake: FakeBatchAPI, **opts: object) -> Report:
    def factory(schema: Schema) -> OpenAIBackend:
        return OpenAIBackend(schema.model, http_client=httpx.Client(transport=fake.transport()))

    return build(project, BuildOptions(**opts), Progress(quiet=True), backend_factory=factory)  # type: ignore[arg-type]


def _live_wiki(tmp_path: Path) -> dict[str, bytes]:
    """The same project built with live calls to the same fake model: what batches must make."""
    project = _project(tmp_path / "live")
    report = _build(project, FakeBatchAPI())
    assert report.ok and not report.batches
    return _pages(project)


def _pages(project: Project) -> dict[str, bytes]:
    files = wiki_files(project)
    files.pop("log.md", None)
    return files


def test_a_build_through_two_stages_of_batches(tmp_path: Path) -> None:
    fake = FakeBatchAPI()
    project = _project(
        tmp_path / "p", extra="  price: {input: 0.5, output: 2.0, batch_input: 0.25, batch_output: 1.0}\n"
    )
    first = _build(project, fake, batch=True)
    assert first.ok and first.waiting == 3 and fake.live == 0
    assert [b["status"] for b in first.batches] == ["submitted"] and first.batches[0]["stage"] == "digest"
    assert first.lint is None and not (project.wiki_dir / "index.md").exists()
    assert "waiting on the Batch API" in first.summary()

    second = _build(project, fake, batch=True)  # digests collected, the pages' writes submitted
    assert second.ok and second.waiting > 0 and second.batches[-1]["stage"] == "write"
    assert second.ran == 3 and second.batch_prompt_tokens == 300

    third = _build(project, fake)  # no --batch: collecting needs none
    assert third.ok and not third.waiting and third.lint is not None
    assert fake.live == 0 and len(fake.created) == 2
    assert third.batch_prompt_tokens == third.prompt_tokens > 0
    assert third.cost == pytest.approx((third.prompt_tokens * 0.25 + third.completion_tokens * 1.0) / 1e6)
    assert _pages(project) == _live_wiki(tmp_path)
    assert _build(project, fake).nothing_to_do


def test_wait_polls_until_each_batch_is_done(tmp_path: Path) -> None:
    fake = FakeBatchAPI(polls_to_finish=2)
    project = _project(tmp_path / "p")
    report = _build(project, fake, batch=True, batch_wait=True)
    assert report.ok and not report.waiting and len(fake.created) == 2 and fake.live == 0
    assert _pages(project) == _live_wiki(tmp_path)


def test_auto_batches_a_stage_with_enough_pending_actions(tmp_path: Path) -> None:
    fake = FakeBatchAPI()
    project = _project(tmp_path / "p", extra="  batch: auto\n  batch_min: 4\n")
    first = _build(project, fake)  # 3 digests go live, the 4 pages' writes in a batch
    assert first.ok and fake.live == 3
    assert first.waiting == 4 and first.batches[0]["stage"] == "write"
    second = _build(project, fake)
    assert second.ok and not second.waiting and fake.live == 3 and len(fake.created) == 1


def test_failed_lines_go_live_and_expired_ones_into_the_next_batch(tmp_path: Path) -> None:
    fake = FakeBatchAPI(fail={"Retrieval-augmented"}, expire_after=2)
    project = _project(tmp_path / "p")
    assert _build(project, fake, batch=True).waiting == 3
    report = _build(project, fake, batch=True)
    collected = report.batches[0]
    assert collected["status"] == "expired" and collected["expired"] == 1
    # the expired digest waits in a new batch; the rest, answered or asked live, are stored
    assert report.waiting == 1 and report.batches[-1]["actions"] == 1 and len(fake.created) == 2
    fake.expire_after = None
    done = _build(project, fake, batch=True, batch_wait=True)
    assert done.ok and not done.waiting
    assert fake.live >= 1  # the failed line
    assert _pages(project) == _live_wiki(tmp_path)


def test_malformed_lines_and_unusable_answers(tmp_path: Path) -> None:
    fake = FakeBatchAPI(malformed=True, garbage={"Tools we use"})
    project = _project(tmp_path / "p")
    _build(project, fake, batch=True)
    report = _build(project, fake, batch=True, batch_wait=True)
    assert report.ok and not report.waiting
    said = " ".join(report.warnings)
    assert "line 1: not a batch result" in said and '{"no_custom_id": true}' in said
    # the unusable answer was repaired as a live one is: by asking again, live
    assert fake.live == 1
    assert _pages(project) == _live_wiki(tmp_path)


def test_offline_submits_nothing(tmp_path: Path) -> None:
    fake = FakeBatchAPI()
    project = _project(tmp_path / "p")
    report = _build(project, fake, batch=True, offline=True)
    assert not report.ok and report.failed == 3 and not fake.created


def test_a_build_killed_after_submitting_submits_nothing_twice(tmp_path: Path) -> None:
    fake = FakeBatchAPI(hold_create=threading.Event())
    with fake.serve() as url:
        project = _project(tmp_path / "p", url=url)
        cmd = [sys.executable, "-m", "wikic", "build", "--batch", "-q"]
        proc = subprocess.Popen(cmd, cwd=project.root, env=subprocess_env(), stderr=subprocess.PIPE)
        try:
            assert fake.creating.wait(60), proc.stderr.read() if proc.stderr else ""
        finally:
            os.kill(proc.pid, signal.SIGKILL)  # the batch exists; its id was never recorded
            proc.wait()
        assert fake.hold_create is not None
        fake.hold_create.set()
        assert fake.created == ["batch_1"]
        resumed = subprocess.run(
            [*cmd, "--wait", "--json"], cwd=project.root, env=subprocess_env(), capture_output=True, text=True
        )
        assert resumed.returncode == 0, resumed.stderr
        assert fake.created == ["batch_1", "batch_2"]  # its own digest batch found again, then the writes
        assert fake.live == 0 and (project.wiki_dir / "index.md").exists()


def test_batch_needs_an_openai_compatible_backend(tmp_path: Path) -> None:
    from tests.projects import make_project

    project = make_project(tmp_path / "p")
    result = subprocess.run(
        [sys.executable, "-m", "wikic", "build", "--batch"],
        cwd=project.root,
        env=subprocess_env(),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "model.backend: openai" in result.stderr


def test_dry_run_estimates_tokens_and_cost_per_stage(tmp_path: Path) -> None:
    priced = _project(
        tmp_path / "p", extra="  price: {input: 1.0, output: 4.0, batch_input: 0.5, batch_output: 2.0}\n"
    )
    report = _build(priced, FakeBatchAPI(), dry_run=True)
    digest = report.estimate["digest"]
    assert digest["calls"] == 3
    want = (digest["prompt_tokens"] * 1.0 + digest["completion_tokens"] * 4.0) / 1e6
    assert digest["cost"] == pytest.approx(want) and digest["batch_cost"] == pytest.approx(want / 2)
    assert "~$" in report.summary() and "batched" in report.summary()
    unpriced = _project(tmp_path / "q")
    report = _build(unpriced, FakeBatchAPI(), dry_run=True)
    assert report.estimate["digest"]["cost"] is None and "no model.price" in report.summary()
