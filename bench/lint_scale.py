"""Benchmark: deterministic `wikic lint` of a generated 10,000-page wiki.

Generates, in a temporary folder, a project shaped like a built one: sources,
topic pages with cited paragraphs and [[links]], source pages, index.md, and a
state.db recording every page and source (so hand-edit and stale-page take
their real paths). Then times the lint in-process (every deterministic rule,
and each rule alone with --per-rule) and end to end through the CLI.

    python bench/lint_scale.py [--pages 10000] [--per-rule] [--keep]

The target (issue 4): under 5 seconds for 10,000 pages.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wikic.build.assemble import PageEntry, render_index
from wikic.hashing import bytes_hash, text_hash
from wikic.lint.runner import RULES, LintOptions, lint
from wikic.project import Project, init_project
from wikic.sources.read import normalise
from wikic.state import FileRecord, State
from wikic.wiki.frontmatter import render_front_matter
from wikic.wiki.page import Citation

SOURCES_PER_PAGE = 10  # one source page per ten pages
LINES = 30


def _words(rng: random.Random, n: int) -> list[str]:
    consonants, vowels = "bcdfghklmnprstvz", "aeiou"
    out: set[str] = set()
    while len(out) < n:
        out.add("".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(rng.randint(2, 4))))
    return sorted(out)


def _sentence(rng: random.Random, vocab: list[str]) -> str:
    words = rng.sample(vocab, rng.randint(8, 14))
    return " ".join(words).capitalize() + "."


def generate(root: Path, n_pages: int, seed: int = 7) -> Project:
    rng = random.Random(seed)
    project = init_project(root, "Bench")
    vocab = _words(rng, 4000)
    n_sources = max(1, n_pages // SOURCES_PER_PAGE)
    n_topics = n_pages - n_sources
    sources: dict[str, list[str]] = {}
    for i in range(n_sources):
        lines = [f"# Source {i}", ""] + [_sentence(rng, vocab) for _ in range(LINES - 2)]
        rel = f"sources/s{i:05d}.md"
        text = normalise("\n".join(lines))
        (root / rel).write_text(text, encoding="utf-8")
        sources[rel] = lines
    titles = set()
    while len(titles) < n_topics:
        titles.add(" ".join(rng.sample(vocab, rng.randint(2, 3))).capitalize())
    topics = [(t.lower().replace(" ", "-"), t) for t in sorted(titles)]
    files: dict[str, str] = {}
    entries: list[PageEntry] = []
    feeds: dict[str, list[tuple[str, str]]] = {rel: [] for rel in sources}
    src_rels = sorted(sources)
    for slug, title in topics:
        used = rng.sample(src_rels, rng.randint(1, 3))
        paras = []
        for rel in used:
            n = rng.randint(3, LINES)
            other = topics[rng.randrange(len(topics))]
            claim = sources[rel][n - 1].rstrip(".")
            paras.append(f"{claim}, see [[{other[0]}|{other[1]}]]. {Citation(rel, n, n).markdown()}")
            feeds[rel].append((slug, title))
        body = [f"# {title}", "", *[p + "\n" for p in paras], "## Sources", ""]
        body += [
            f"- [[src-{Path(rel).stem}|Source {int(Path(rel).stem[1:])}]]: {Citation(rel, 3, 3).markdown()}"
            for rel in used
        ]
        meta = {"title": title, "type": rng.choice(["concept", "entity"]), "sources": used}
        files[f"{slug}.md"] = render_front_matter(meta) + "\n" + "\n".join(body) + "\n"
        entries.append(PageEntry(slug, title, meta["type"], description=paras[0][:60]))
    for i, rel in enumerate(src_rels):
        slug = f"src-{Path(rel).stem}"
        body = [
            f"# Source {i}",
            "",
            f"{sources[rel][2]} {Citation(rel, 1, LINES).markdown()}",
            "",
            "## Topics",
            "",
        ]
        body += [f"- [[{s}|{t}]]" for s, t in feeds[rel]] or ["- (no topics were found in this source)"]
        meta = {"title": f"Source {i}", "type": "source", "sources": [rel]}
        files[f"{slug}.md"] = render_front_matter(meta) + "\n" + "\n".join(body) + "\n"
        entries.append(PageEntry(slug, f"Source {i}", "source", description=sources[rel][2][:60]))
    files["index.md"] = render_index("Bench", "", entries, ["concept", "entity", "source", "answer"])
    with State.open(project.state_path) as state, state.transaction():
        for name, text in files.items():
            path = root / "wiki" / name
            data = text.encode("utf-8")
            path.write_bytes(data)
            st = path.stat()
            state.set_file(FileRecord(f"wiki/{name}", bytes_hash(data), st.st_size, st.st_mtime_ns))
        for rel in sources:
            st = (root / rel).stat()
            state.set_source(rel, st.st_size, st.st_mtime_ns, text_hash((root / rel).read_text()))
    return project


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--per-rule", action="store_true", help="also time each rule alone")
    parser.add_argument("--keep", action="store_true", help="keep the generated project and print its path")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="wikic-lint-bench-"))
    try:
        started = time.perf_counter()
        project = generate(tmp / "wiki-project", args.pages)
        print(f"generated {args.pages} pages in {time.perf_counter() - started:.1f}s", file=sys.stderr)
        started, cpu = time.perf_counter(), time.process_time()
        result = lint(project)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        counts = result.counts()
        print(
            f"lint (in-process, all deterministic rules): {result.pages} pages in {seconds:.2f}s "
            f"({cpu:.2f}s CPU; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs); "
            f"{counts['error']} errors, {counts['warning']} warnings"
        )
        if args.per_rule:
            for rule in RULES:
                t0 = time.perf_counter()
                lint(project, LintOptions(rules=[rule]))
                print(f"  --rule {rule}: {time.perf_counter() - t0:.2f}s (reading the wiki included)")
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "wikic", "-C", str(project.root), "lint", "--format", "json"],
            capture_output=True,
            env=env,
            check=False,
        )
        print(f"wikic lint (CLI, end to end): {time.perf_counter() - t0:.2f}s, exit {proc.returncode}")
        t0 = time.perf_counter()  # the first kept the lint cache (state.db exists): this one reads it
        again = subprocess.run(proc.args, capture_output=True, env=env, check=False)
        print(
            f"wikic lint again (CLI, nothing changed, from the lint cache): {time.perf_counter() - t0:.2f}s"
        )
        if again.stdout != proc.stdout:
            print("wikic lint from the cache differs from the first", file=sys.stderr)
            return 1
        if args.keep:
            print(f"kept: {project.root}")
        # The CLI must find what the in-process lint found: exit 1 with errors, else 0.
        if proc.returncode != (1 if counts["error"] else 0):
            print(f"wikic lint failed:\n{proc.stderr.decode()[-3000:]}", file=sys.stderr)
            return 1
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
