"""How fast `wikic watch` turns a save into a page, on a 1,000-source project.

    python bench/watch_latency.py [--sources 1000] [--runs 20] [--debounce 300] [--poll] [--profile]

Generates a project (scripted backend, so the model costs nothing and the
figures are wikic's own), builds it once, starts `wikic watch --json` as a
user would, then:

1. latency: `--runs` times, rewrites one source (its summary line and one fact)
   and times from the moment the save returns to the moment the source's page
   on disk holds the new text; median, min, max, with the build's own seconds
   beside it (the rest is the debounce quiet period plus event delivery);
2. burst: 50 writes to 10 sources spread over about 0.25 s; counts the builds
   that follow (1 is right) and the model calls they made;
3. with --profile, one single-source rebuild in process under cProfile: where
   the time of an incremental build goes at this size.

Prints a JSON summary on stdout; progress on stderr.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import queue
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from wikic.build.pipeline import BuildOptions, build
from wikic.build.report import Progress
from wikic.project import Project, init_project

SCHEMA = "title: Bench wiki\nscope: generated notes\nmodel:\n  backend: scripted\n  name: bench\n"
TOPICS = [
    f"{a} {b}"
    for a in (
        "Vector",
        "Graph",
        "Stream",
        "Cache",
        "Index",
        "Queue",
        "Shard",
        "Token",
        "Schema",
        "Kernel",
        "Buffer",
        "Cluster",
    )
    for b in (
        "search",
        "storage",
        "routing",
        "compaction",
        "replication",
        "eviction",
        "planning",
        "hashing",
        "batching",
        "scheduling",
        "encoding",
        "recovery",
    )
]  # 144 topics


def source_text(i: int, revision: int) -> str:
    a, b, c = TOPICS[i % len(TOPICS)], TOPICS[(i * 7 + 3) % len(TOPICS)], TOPICS[(i * 13 + 5) % len(TOPICS)]
    return (
        f"# Note {i}\n\n"
        f"Revision {revision}: note {i} covers {a.lower()} and {b.lower()}.\n\n"
        f"## {a}\n\nFact {revision} from note {i} about {a.lower()}.\n"
        f"A second line from note {i}, with **{c}** in it.\n\n"
        f"## {b}\n\nNote {i} says {b.lower()} matters at scale.\n"
    )


def generate(root: Path, n: int) -> Project:
    project = init_project(root, "Bench wiki")
    project.schema_path.write_text(SCHEMA, encoding="utf-8")
    for i in range(n):
        (project.sources_dir / f"note{i:04d}.md").write_text(source_text(i, 0), encoding="utf-8")
    return project


class Watch:
    def __init__(self, project: Project, debounce: int, poll: bool, log: Path) -> None:
        args = [
            sys.executable,
            "-m",
            "wikic",
            "-C",
            str(project.root),
            "watch",
            "--json",
            "-q",
            "--debounce",
            str(debounce),
        ] + (["--poll", "--poll-interval", "0.25"] if poll else [])
        env = dict(os.environ, WIKIC_SCRIPTED_LOG=str(log))
        self.proc = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
        )
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def next(self, timeout: float = 120.0) -> dict[str, Any]:
        return self.lines.get(timeout=timeout)

    def drain(self, quiet: float) -> list[dict[str, Any]]:
        got = []
        while True:
            try:
                got.append(self.lines.get(timeout=quiet))
            except queue.Empty:
                return got

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=60)


def wait_for_text(path: Path, text: str, timeout: float = 120.0) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if text in path.read_text(encoding="utf-8"):
                return time.monotonic()
        except FileNotFoundError:
            pass
        time.sleep(0.002)
    raise TimeoutError(f"{path} never showed {text!r}")


def latency(project: Project, w: Watch, runs: int, n: int) -> dict[str, Any]:
    seen, builds = [], []
    for r in range(1, runs + 1):
        i = (r * 37) % n
        src = project.sources_dir / f"note{i:04d}.md"
        page = project.wiki_dir / f"note-{i}.md"
        src.write_text(source_text(i, r), encoding="utf-8")
        saved = time.monotonic()
        seen.append(wait_for_text(page, f"Revision {r}: note {i}") - saved)
        report = w.next()
        builds.append(report["seconds"])
        print(
            f"  run {r}: {seen[-1] * 1000:.0f} ms to page (build {report['seconds'] * 1000:.0f} ms, "
            f"{report['llm']['calls']} calls)",
            file=sys.stderr,
        )
    return {
        "median_s": round(statistics.median(seen), 3),
        "min_s": round(min(seen), 3),
        "max_s": round(max(seen), 3),
        "build_median_s": round(statistics.median(builds), 3),
    }


def burst(project: Project, w: Watch, log: Path, n: int) -> dict[str, Any]:
    before = len(log.read_text().splitlines()) if log.exists() else 0
    for k in range(50):
        i = (500 + k % 10) % n  # existing sources, in a small project too
        (project.sources_dir / f"note{i:04d}.md").write_text(source_text(i, 1000 + k), encoding="utf-8")
        time.sleep(0.005)
    reports = [w.next()] + w.drain(3.0)
    after = len(log.read_text().splitlines())
    return {
        "writes": 50,
        "builds": len(reports),
        "changed": sum(len(r["changed"]) for r in reports),
        "model_calls": after - before,
    }


def profile_one_edit(project: Project, top: int = 18) -> dict[str, Any]:
    noop = time.monotonic()
    build(project, BuildOptions(), Progress(quiet=True))
    noop = time.monotonic() - noop
    (project.sources_dir / "note0001.md").write_text(source_text(1, 9999), encoding="utf-8")
    prof = cProfile.Profile()
    started = time.monotonic()
    prof.enable()
    report = build(project, BuildOptions(), Progress(quiet=True))
    prof.disable()
    elapsed = time.monotonic() - started
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(top)
    print(out.getvalue(), file=sys.stderr)
    return {"noop_build_s": round(noop, 3), "one_edit_build_s": round(elapsed, 3), "calls": report.calls}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sources", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--debounce", type=int, default=300, help="ms, passed to wikic watch")
    ap.add_argument("--poll", action="store_true")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--dir", type=Path, help="where to generate the project (default: a temporary folder)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="wikic-watch-bench-") as tmp:
        root = args.dir or Path(tmp) / "project"
        log = Path(tmp) / "calls.jsonl"
        project = generate(root, args.sources)
        started = time.monotonic()
        first = build(project, BuildOptions(), Progress(quiet=True))
        initial = time.monotonic() - started
        print(
            f"initial build: {args.sources} sources, {first.pages} pages, {first.calls} calls, "
            f"{initial:.1f}s",
            file=sys.stderr,
        )
        w = Watch(project, args.debounce, args.poll, log)
        try:
            start = w.next()
            print(f"watch up; its first build (a no-op) took {start['seconds']:.2f}s", file=sys.stderr)
            result: dict[str, Any] = {
                "sources": args.sources,
                "pages": first.pages,
                "debounce_ms": args.debounce,
                "mode": "poll" if args.poll else "native",
                "initial_build_s": round(initial, 2),
                "watch_first_build_s": start["seconds"],
                "latency": latency(project, w, args.runs, args.sources),
                "burst": burst(project, w, log, args.sources),
            }
        finally:
            result_code = w.stop()
        result["sigterm_exit"] = result_code
        if args.profile:
            result["profile"] = profile_one_edit(project)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
