"""A build killed midway resumes without repeating a finished model call."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from projects import make_project, subprocess_env

NOTES = {
    f"note{i:02d}.md": f"# Note {i}\n\n## Topic {i}\n\nFact number {i}.\n\n## Shared\n\nShared fact {i}.\n"
    for i in range(12)
}


def calls(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def wikic(project: Path, log: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "wikic", "-C", str(project), "build", "-q", "--json"],
        env=subprocess_env(WIKIC_SCRIPTED_LOG=str(log)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_killed_build_resumes_without_repeating_calls(tmp_path: Path) -> None:
    reference = make_project(tmp_path / "ref", NOTES, latency=0.05)
    ref_log = tmp_path / "ref.log"
    assert wikic(reference.root, ref_log).wait(60) == 0
    expected = len(calls(ref_log))

    project = make_project(tmp_path / "killed", NOTES, latency=0.05)
    log = tmp_path / "killed.log"
    proc = wikic(project.root, log)
    deadline = time.monotonic() + 30
    while len(calls(log)) < expected // 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    before = len(calls(log))
    assert 0 < before < expected

    resumed = wikic(project.root, log)
    out, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    report = json.loads(out)
    # Every call finished before the kill was kept: at most the one in flight is repeated.
    assert len(calls(log)) - before == report["llm"]["calls"]
    assert len(calls(log)) <= expected + 1
    assert report["actions"]["cached"] + report["actions"]["up_to_date"] >= before - 1
    ref_pages = {p.name: p.read_bytes() for p in reference.wiki_dir.glob("*.md") if p.name != "log.md"}
    pages = {p.name: p.read_bytes() for p in project.wiki_dir.glob("*.md") if p.name != "log.md"}
    assert pages == ref_pages
    assert not list(project.wiki_dir.glob(".wikic-tmp-*"))
