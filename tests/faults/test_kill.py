"""Kill at any point: `wikic build` in a subprocess is SIGKILLed at many moments,
spread over its phases by a seeded RNG, during a first build and an incremental one.

After each kill every file in wiki/ is its old or its new version (temporary files
aside, which the next build removes), state.db passes `PRAGMA integrity_check`, and
the next build makes a wiki byte-identical to an uninterrupted build (log.md is left
out of that comparison, since its entries carry times; it is checked to hold only
whole entries, and its earlier entries, from which only the names of pages that
build removes and the paths of sources deleted may go: a deleted source is
forgotten) while repeating no model call that had finished: at most the one in
flight at each kill (the build runs with -j 1).

WIKIC_FAULT_KILLS (default 32) and WIKIC_FAULT_SEED (default 7) change how many
trials run and where the kills land.
"""

from __future__ import annotations

import os
import random
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from faults.harness import (
    calls,
    copy_project,
    integrity,
    log_is_well_formed,
    make_project,
    note,
    notes,
    spawn,
    stamps,
    temp_files,
    wait_until,
    wiki_snapshot,
    wikic,
)
from wikic.fsutil import TMP_MARK
from wikic.project import Project

LATENCY = 0.02
SOURCES = 12
KILLS = int(os.environ.get("WIKIC_FAULT_KILLS", "36"))
SEED = int(os.environ.get("WIKIC_FAULT_SEED", "7"))
PHASES = ["startup/scan", "digest", "write", "publish", "state save"]
SLOW_DISK = Path(__file__).parent / "slowdisk"  # its sitecustomize.py slows renames down


def to_v2(project: Project) -> None:
    """The incremental change: one source edited, one deleted, one added."""
    (project.sources_dir / "note03.md").write_text(note(3, version=2), encoding="utf-8")
    (project.sources_dir / "note05.md").unlink()
    (project.sources_dir / f"note{SOURCES:02d}.md").write_text(note(SOURCES), encoding="utf-8")


@dataclass
class Build:
    """What an uninterrupted build made, and how long its parts took."""

    before: Path  # the project as the build found it (copied for every trial)
    old: dict[str, bytes]
    old_log: bytes | None
    new: dict[str, bytes]
    calls: int
    digests: int
    first_call: float  # seconds from spawn to the first model call
    total: float
    deleted: list[str]  # sources the build finds deleted (sources/x.md)


@dataclass
class References:
    first: Build
    incremental: Build


def _reference(tmp: Path, name: str, project: Project, log: Path, deleted: list[str]) -> Build:
    before = copy_project(project.root, tmp / f"{name}-before")
    old, old_log = wiki_snapshot(project), _log(project)
    started = time.time()
    run = wikic(project.root, "build", "--json", "-q", log=log)
    total = time.time() - started
    assert run.code == 0, run.err
    made = calls(log)
    assert made, "the reference build made no model call"
    return Build(
        before.root,
        old,
        old_log,
        wiki_snapshot(project),
        len(made),
        sum(c["stage"] == "digest" for c in made),
        float(made[0]["t"]) - started,
        total,
        deleted,
    )  # type: ignore[arg-type]


def _sources(project: Project) -> set[str]:
    return {
        f"sources/{p.relative_to(project.sources_dir).as_posix()}" for p in project.sources_dir.rglob("*.md")
    }


def _log(project: Project) -> bytes | None:
    path = project.wiki_dir / "log.md"
    return path.read_bytes() if path.exists() else None


@pytest.fixture(scope="module")
def refs(tmp_path_factory: pytest.TempPathFactory) -> References:
    tmp = tmp_path_factory.mktemp("kill-ref")
    project = make_project(tmp / "ref", notes(SOURCES), latency=LATENCY)  # type: ignore[arg-type]
    first = _reference(tmp, "first", project, tmp / "first.log", [])
    sources = _sources(project)
    to_v2(project)
    incremental = _reference(
        tmp, "incremental", project, tmp / "incremental.log", sorted(sources - _sources(project))
    )
    assert first.new != incremental.new
    return References(first, incremental)


LIST_LINE = re.compile(r"^(- (?:written|removed|conflicts kept): )(.*?)((?: and \d+ more)?)$")


def _scrubbed(ref: Build) -> bytes:
    """The earlier log.md without the names of the pages the build removes (made from titles
    and headings of the deleted source, which forgetting it takes out) and the deleted paths."""
    gone, deleted = set(ref.old) - set(ref.new), ref.deleted
    lines = []
    for line in (ref.old_log or b"").decode("utf-8").split("\n"):
        m = LIST_LINE.match(line)
        if any(path in line for path in deleted):
            continue
        if m:
            kept = [item for item in m.group(2).split(", ") if item not in gone]
            if not kept and not m.group(3):
                continue
            line = f"{m.group(1)}{', '.join(kept)}{m.group(3)}"
        lines.append(line)
    return "\n".join(lines).encode("utf-8")


def check_after_kill(project: Project, ref: Build) -> dict[str, int]:
    """Every file old or new, whole; the state database sound. Returns how many of the
    files the build changes are at their old and at their new version, and the temporary files."""
    seen = {"old": 0, "new": 0, "temp": 0}
    files = wiki_snapshot(project, with_log=True)
    for name, data in files.items():
        if name.startswith(TMP_MARK):
            seen["temp"] += 1
        elif name == "log.md":
            text = data.decode("utf-8")
            assert log_is_well_formed(text), f"log.md holds a partial entry:\n{text[-400:]}"
            assert ref.old_log is None or data.startswith((ref.old_log, _scrubbed(ref))), (
                "log.md lost earlier entries"
            )
        else:
            assert name in ref.old or name in ref.new, f"{name}: neither an old nor a new page"
            assert data in (ref.old.get(name), ref.new.get(name)), (
                f"{name} is neither its old nor its new version (a partial write?)"
            )
    for name in set(ref.old) | set(ref.new):
        if ref.old.get(name) != ref.new.get(name):  # absent counts as a version
            seen["new" if files.get(name) == ref.new.get(name) else "old"] += 1
    assert integrity(project) in ("ok", "absent"), "state.db fails PRAGMA integrity_check"
    return seen


def kill(project: Project, ref: Build, phase: str, rng: random.Random, log: Path) -> tuple[str, int]:
    """Start a build and SIGKILL it in `phase`; returns what the kill hit, and its call count."""
    base = len(calls(log))
    wiki, log_md = project.wiki_dir, project.wiki_dir / "log.md"
    before, log_before = stamps(wiki), stamps(wiki).get("log.md")
    # publishing renames every temporary file within a millisecond: on a slow disk, a kill lands between
    slow = {"PYTHONPATH": str(SLOW_DISK), "WIKIC_TEST_SLOW_RENAME": "0.005"} if phase == "publish" else {}
    proc = spawn(project.root, "build", "--json", "-q", log=log, **slow)
    if phase == "startup/scan":
        time.sleep(rng.uniform(0, ref.first_call))
    elif phase in ("digest", "write"):
        lo, hi = (0, ref.digests - 1) if phase == "digest" else (ref.digests, ref.calls - 1)
        target = rng.randint(lo, max(lo, hi))
        wait_until(lambda: len(calls(log)) - base >= target or proc.poll() is not None)
        time.sleep(rng.uniform(0, LATENCY))
    elif phase == "publish":  # after the k-th page of those the build changes, k at random
        changes = sum(ref.old.get(name) != ref.new.get(name) for name in set(ref.old) | set(ref.new))
        target = rng.randint(1, max(1, changes - 1))

        def published() -> int:
            now = stamps(wiki)
            return sum(
                not name.startswith(TMP_MARK) and before.get(name) != m for name, m in now.items()
            ) + sum(name not in now for name in before)

        wait_until(lambda: published() >= target or proc.poll() is not None)
        time.sleep(rng.uniform(0, 0.004))  # sometimes inside a write: a temporary file left behind
    elif phase == "state save":
        wait_until(
            lambda: (log_md.exists() and stamps(wiki).get("log.md") != log_before) or proc.poll() is not None
        )
        time.sleep(rng.uniform(0, 0.03))
    else:  # anywhere
        time.sleep(rng.uniform(0, ref.total))
    finished = proc.poll() is not None
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    return ("finished first" if finished else phase), len(calls(log)) - base


def test_kill_at_any_point(refs: References, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    plan = [
        (kind, PHASES[i % len(PHASES)])
        for i, kind in enumerate(["first", "incremental"] * (KILLS // 2) + ["first"] * (KILLS % 2))
    ]
    rng.shuffle(plan)
    hits: dict[str, int] = {}
    mid_publish: dict[str, int] = {}
    with_temps = kills = repeated = 0
    started = time.monotonic()
    for n, (kind, phase) in enumerate(plan):
        ref = refs.first if kind == "first" else refs.incremental
        project = copy_project(ref.before, tmp_path / f"t{n}")
        log = tmp_path / f"t{n}.log"
        kills_here = 2 if n % 5 == 4 else 1  # every fifth trial is killed twice before it resumes
        phases = [phase] + ["anywhere"] * (kills_here - 1)
        for p in phases:
            hit, _ = kill(project, ref, p, rng, log)
            hits[f"{kind}: {hit}"] = hits.get(f"{kind}: {hit}", 0) + 1
            seen = check_after_kill(project, ref)
            if seen["old"] and seen["new"]:
                mid_publish[hit] = mid_publish.get(hit, 0) + 1
            if seen["temp"]:  # what a kill mid-write leaves is no page to anything that lists pages
                linted = wikic(project.root, "lint", "--format", "json")
                assert TMP_MARK not in linted.out and "Traceback" not in linted.err, linted.err
            with_temps += seen["temp"] > 0
            kills += hit != "finished first"
        before_resume = len(calls(log))
        run = wikic(project.root, "build", "--json", "-q", log=log)
        assert run.code == 0, f"trial {n} ({kind}, {phases}): the resumed build failed:\n{run.err}"
        report = run.json()
        assert report["conflicts"] == [], f"trial {n}: a page written before the kill read as a hand edit"
        assert report["llm"]["calls"] == len(calls(log)) - before_resume
        assert wiki_snapshot(project) == ref.new, f"trial {n} ({kind}, {phases}): the wiki differs"
        assert not temp_files(project)
        assert log_is_well_formed((project.wiki_dir / "log.md").read_text(encoding="utf-8"))
        assert integrity(project) == "ok"
        total = len(calls(log))
        assert total <= ref.calls + kills_here, (
            f"trial {n} ({kind}, {phases}): {total} model calls, the uninterrupted build made "
            f"{ref.calls}: a finished call was repeated"
        )
        repeated += max(0, total - ref.calls)
    elapsed = time.monotonic() - started
    print(
        f"\n{kills} kills in {len(plan)} trials, {elapsed:.0f}s; landed: {hits}; "
        f"mid-publish (changed pages old and new side by side), by phase: {mid_publish}; "
        f"temporary files left: {with_temps}; calls repeated (in flight at the kill): {repeated}"
    )
    assert kills >= min(30, KILLS - 2), f"only {kills} kills landed before the build finished: {hits}"
    assert mid_publish, "no kill landed in the middle of publishing"
