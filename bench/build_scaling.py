"""How wikic's build engine scales: 100, 1,000 and 10,000 generated sources,
side by side with ninja and with a process that only stats the files.

    python bench/build_scaling.py                  # 100, 1,000 and 10,000 sources
    python bench/build_scaling.py --quick          # 100 and 1,000, fewer repeats
    python bench/build_scaling.py --sizes 2000 --runs 9 --profile

For each size, in a temporary folder (bench/gen.py makes the sources; the
scripted backend answers, with a fixed latency per call, so that what is timed
is the engine, not a model), every figure from a fresh `python -m wikic build`
process, as a user runs it:

- full build: wall time, and engine overhead = wall - calls x latency;
- no-op build: median wall (and CPU) time of --runs builds with nothing to do;
- one-source edit: every text line of sources/s00000.md rewritten, rebuilt,
  --edits times; median wall time and the model calls, checked against the
  minimal set computed from the wiki itself: the source's digest plus one
  write per page that lists the source in its front matter `sources` (and
  cites its lines: a page's prose is written from at most 10 notes, the first
  sources in path order, so s00000 is one of them wherever it counts);
- a source added: a new source written and built, --edits times; median wall time, and
  whether each build assembled the quick way and patched its lint summary;
- a source deleted: those sources deleted again, one build each; the same figures;
- a source moved: sources/s00001.md moved to a folder and back, in turn; the same figures;
- a source retitled: sources/s00002.md's title rewritten and its second heading made plural,
  then both back, in turn (its page renamed under its slug, a topic page taking the plural as
  an alias and letting it go); the same figures;
- a heading misspelt: the longest heading of sources/s00000.md (the first source, in path
  order, to write its topic's name) with two letters swapped, then put right, in turn (the
  misspelt name comes first in the topic's cluster, which keeps its page's id: the topic page
  takes an alias); the same figures;
- a hand-made page: wiki/my-reading-list.md added, then its links edited; the same figures;
- a saved answer: wiki/what-is-it.md written, its link edited, deleted, in turn; the same figures;
- peak memory: the largest ru_maxrss of the child processes;
- ninja: the same graph as a build.ninja (N sources -> N digests -> one output
  per page with the page's sources as inputs -> index.md), built once, then its
  no-op timed --runs times, interleaved with wikic's;
- floor: a Python process that only walks and stats sources/ and wiki/.

With --profile, the no-op and the one-source edit at the largest size are run
once more under cProfile (in a fresh process) and the hot spots printed.

With --baseline REF (a commit of this checkout, e.g. 6ca5253, the code on main when issue
17 was filed), the full build at the largest size is run again --baseline-runs times
with this checkout's wikic and with REF's (`git archive`, compiled), in turn, each on a
fresh copy of one generated project: the engine's time per call of each (wall less the
scripted latency, as the issue measured it) and its CPU per call, and the median of each
pair's ratio, the same machine at the same hour; run before the other measures, and the copies kept to the end
(`against`: on this machine's ext4, without a journal, files just removed slow the creation
of new ones). Issue 17's target, 1.5 ms of engine per call where it says
the code took 2.7 ms "now", is judged so: an engine time per call 1.5/2.7 of that code's,
or less (an absolute figure moves with the machine: ninja's no-op here has been 82 to 252
ms).
Prints a table on stdout (and --json FILE for the raw figures); progress on stderr.

Targets (issue 6), at 10,000 sources: no-op within 2.5x ninja's and under
0.5 s; the edit makes exactly the minimal calls; peak memory under 300 MB.
"""

from __future__ import annotations

import argparse
import compileall
import io
import json
import os
import pstats
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml
from gen import generate, source_name, source_text

EDITED = "sources/" + source_name(0)
FLOOR = """
import os, sys
n = 0
os.stat("schema.yaml")
for top in ("sources", "wiki"):
    for dirpath, dirnames, names in os.walk(top):
        for name in names:
            os.stat(os.path.join(dirpath, name))
            n += 1
"""
Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# The code on main when issue 17 was filed ("2.7 ms now", the issue says). Its figures were
# the README's of that day, measured on earlier code (c233054: full build 27.8 s, 2.7 ms of
# engine time per call); the layout and the pages' checks had since added about 70% to the
# full build's CPU, so this code took more than 2.7 ms. The target is read as the issue's
# share of "now": 1.5/2.7 of this code's engine time per call.
FILED = "6ca5253"
FILED_SHARE = 1.5 / 2.7  # the target, 1.5 ms per call, as a share of that code's


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# --- running a child and measuring it ----------------------------------------------
@dataclass
class Run:
    wall: float
    cpu: float
    maxrss_mb: float
    rc: int
    stdout: str
    stderr: str


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> Run:
    """Run to completion; wall time, CPU time and peak RSS of that one child (wait4)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(
            wall,
            usage.ru_utime + usage.ru_stime,
            usage.ru_maxrss / 1024,
            proc.returncode,
            out.read().decode(),
            err.read().decode(),
        )


def wikic_build(
    root: Path, log: Path | None = None, extra: tuple[str, ...] = (), code: Path | None = None
) -> tuple[Run, dict[str, Any]]:
    """`code`: a folder holding another wikic package, imported first (--baseline)."""
    # as an installed wikic runs: from bytecode (pip compiles it on install), not its sources
    # compiled again on every run where the machine sets PYTHONDONTWRITEBYTECODE
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if log is not None:
        env["WIKIC_SCRIPTED_LOG"] = str(log)
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code), env.get("PYTHONPATH")]))
    result = run([sys.executable, "-m", "wikic", "build", "--json", "-q", *extra], root, env)
    if result.rc != 0:
        raise SystemExit(f"wikic build failed in {root} (exit {result.rc}):\n{result.stderr[-3000:]}")
    return result, json.loads(result.stdout)


def count_lines(path: Path) -> int:
    try:
        with open(path, encoding="utf-8") as fh:
            return sum(1 for _ in fh)
    except FileNotFoundError:
        return 0


# --- against another commit's code ---------------------------------------------------
def baseline_code(ref: str, base: Path) -> tuple[Path, str]:
    """A folder holding the wikic package as it was at `ref` in this checkout, compiled (as
    pip compiles an install), and the commit `ref` names."""
    repo = Path(__file__).resolve().parent.parent
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", f"{ref}^{{commit}}"], capture_output=True
    )
    archive = subprocess.run(["git", "-C", str(repo), "archive", ref, "wikic"], capture_output=True)
    if commit.returncode != 0 or archive.returncode != 0:
        problem = (commit.stderr or archive.stderr).decode(errors="replace").strip()
        raise SystemExit(f"--baseline {ref}: not a commit of this checkout ({problem})")
    folder = base / "baseline"
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later: nothing outside `folder`
            tar.extractall(folder, filter="data")
        else:  # git's own archive of this checkout
            tar.extractall(folder)  # noqa: S202
    compileall.compile_dir(folder / "wikic", quiet=1)
    return folder, commit.stdout.decode().strip()


def against(
    n: int, latency: float, ref: str, code: tuple[Path, str], runs: int, base: Path
) -> dict[str, Any]:
    """Full builds of one generated project with this checkout's wikic and with `ref`'s (in
    `code`), in turn, `runs` of each, every one on a fresh copy: the engine's time per call
    (wall less the scripted latency) and its CPU per call. The copies are removed at the end
    (main), not after each build: on a file system without a journal (this machine's ext4),
    ext4 skips the inodes deleted in the last minute or more one by one as it allocates new
    ones (find_inode_bit, recently_deleted), and a build writing its 10,000 pages right after
    the last copy's 20,000 files were removed paid 1-3 s more system time for it, whoever's
    code it ran (perf: 43% of a page write's time). What the last build left to write back is
    written before the next starts (sync), not while it runs."""
    project = base / f"against{n}"
    generate(project, n, f"  backend: scripted\n  name: bench\n  latency: {latency}\n")
    per_call: dict[str, list[float]] = {"baseline": [], "this": []}
    engine: dict[str, list[float]] = {"baseline": [], "this": []}
    folder_then, commit = code
    for k in range(runs):
        for who, folder in (("baseline", folder_then), ("this", None)):
            root, log = base / f"against{n}-{who}-{k}", base / f"against{n}-{who}-{k}.jsonl"
            shutil.copytree(project, root)
            os.sync()  # what the last build and the copy left to write, written before this one
            full, _ = wikic_build(root, log, code=folder)
            calls = max(count_lines(log), 1)
            per_call[who].append(full.cpu * 1000 / calls)
            engine[who].append((full.wall - calls * latency) * 1000 / calls)
            whose = ref if folder else "this checkout"
            say(
                f"[{n}] full build with {whose}: {engine[who][-1]:.2f} ms of engine time per call "
                f"({per_call[who][-1]:.2f} ms CPU)"
            )
    return {
        "ref": ref,
        "commit": commit,
        "sources": n,
        "per_call_ms": per_call,
        "ratio": _paired(per_call),
        "engine_ms": engine,
        "engine_ratio": _paired(engine),
        # the statistic the thirtieth to thirty-second sessions printed (_paired says why not)
        "engine_ratio_of_medians": median(engine["this"]) / median(engine["baseline"]),
    }


def _paired(figures: dict[str, list[float]]) -> float:
    """The median of each pair's ratio (this code's figure over the baseline's, the two built
    one after the other): the hour cancels out within a pair, where it does not between the
    medians of each code's figures (one slow hour for the baseline, 5.52 ms against 3.46 and
    3.51, made those 0.618 where the pairs were 0.41, 0.50 and 0.62)."""
    return median([this / then for this, then in zip(figures["this"], figures["baseline"], strict=True)])


# --- the wiki as the build left it ---------------------------------------------------
@dataclass
class Page:
    name: str
    title: str
    type: str
    sources: list[str]
    body: str


def read_pages(wiki: Path) -> list[Page]:
    pages = []
    for path in sorted(wiki.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        end = text.find("\n---\n", 4)
        if not text.startswith("---\n") or end == -1:
            continue  # index.md, log.md
        meta = yaml.load(text[4:end], Loader=Loader) or {}
        pages.append(
            Page(
                path.name,
                str(meta.get("title")),
                str(meta.get("type")),
                list(meta.get("sources") or []),
                text[end + 5 :],
            )
        )
    return pages


def minimal_set(pages: list[Page], source: str) -> tuple[set[str], set[str]]:
    """Labels of the write actions an edit of `source` must rerun, from the pages themselves:
    (pages listing it in front matter `sources`, those of them that also cite its lines)."""
    feeds = {f"write {p.type}: {p.title}" for p in pages if p.type != "source" and source in p.sources}
    anchor = f"(../{source}#L"
    cites = {
        f"write {p.type}: {p.title}"
        for p in pages
        if p.type != "source" and source in p.sources and anchor in p.body
    }
    return feeds, cites


# --- ninja: the same graph ----------------------------------------------------------
def ninja_graph(folder: Path, root: Path, pages: list[Page]) -> int:
    """build.ninja over the project's own source files; returns the number of edges."""
    folder.mkdir(parents=True)
    lines = ["rule touch", "  command = touch $out", ""]
    sources = sorted({s for p in pages for s in p.sources})
    edges = 0
    for src in sources:
        lines.append(f"build dig/{Path(src).stem}.json: touch {root / src}")
        edges += 1
    outs = []
    for p in pages:
        deps = " ".join(f"dig/{Path(s).stem}.json" for s in p.sources)
        lines.append(f"build wiki/{p.name}: touch {deps}")
        outs.append(f"wiki/{p.name}")
        edges += 1
    lines.append(f"build wiki/index.md: touch {' '.join(outs)}")
    (folder / "build.ninja").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return edges + 1


# --- one size ------------------------------------------------------------------------
@dataclass
class SizeResult:
    sources: int
    pages: int = 0
    latency: float = 0.0
    full: dict[str, Any] = field(default_factory=dict)
    noop: dict[str, Any] = field(default_factory=dict)
    edit: dict[str, Any] = field(default_factory=dict)
    add: dict[str, Any] = field(default_factory=dict)
    removed: dict[str, Any] = field(default_factory=dict)
    moved: dict[str, Any] = field(default_factory=dict)
    retitled: dict[str, Any] = field(default_factory=dict)
    misspelt: dict[str, Any] = field(default_factory=dict)
    hand: dict[str, Any] = field(default_factory=dict)
    answer: dict[str, Any] = field(default_factory=dict)
    ninja: dict[str, Any] = field(default_factory=dict)
    floor: dict[str, Any] = field(default_factory=dict)
    peak_mb: float = 0.0
    profile: dict[str, Any] = field(default_factory=dict)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def measure(n: int, latency: float, args: argparse.Namespace, base: Path) -> SizeResult:
    res = SizeResult(n, latency=latency)
    root = base / f"p{n}"
    log = base / f"calls-{n}.jsonl"
    started = time.perf_counter()
    generate(root, n, f"  backend: scripted\n  name: bench\n  latency: {latency}\n")
    say(f"[{n}] generated in {time.perf_counter() - started:.1f}s; full build (latency {latency}s/call)...")

    full, report = wikic_build(root, log)
    calls = count_lines(log)
    res.pages = report["pages"]
    overhead = full.wall - calls * latency
    res.full = {
        "wall": full.wall,
        "cpu": full.cpu,
        "calls": calls,
        "engine_seconds": report["seconds"],
        "overhead": overhead,
        "overhead_per_call_ms": 1000 * overhead / max(calls, 1),
        "maxrss_mb": full.maxrss_mb,
    }
    peak = full.maxrss_mb
    say(f"[{n}] full build {full.wall:.2f}s, {calls} calls, {full.maxrss_mb:.0f} MB")

    pages = read_pages(root / "wiki")
    ninja_dir = base / f"ninja{n}"
    have_ninja = shutil.which("ninja") is not None and not args.no_ninja
    if have_ninja:
        edges = ninja_graph(ninja_dir, root, pages)
        first = run(["ninja", "-C", str(ninja_dir)], base)
        if first.rc != 0:
            raise SystemExit(f"ninja failed:\n{first.stdout[-2000:]}{first.stderr[-2000:]}")
        res.ninja = {"edges": edges, "full_wall": first.wall}
        say(f"[{n}] ninja graph: {edges} edges, built in {first.wall:.1f}s")

    walls: dict[str, list[float]] = {"wikic": [], "ninja": [], "floor": []}
    cpus: dict[str, list[float]] = {"wikic": [], "ninja": [], "floor": []}
    before = count_lines(log)
    for _ in range(args.runs):  # interleaved, so that load on the machine hits all three alike
        noop, rep = wikic_build(root, log)
        if not rep.get("nothing_to_do"):
            raise SystemExit(f"[{n}] a build with nothing changed did work: {rep}")
        walls["wikic"].append(noop.wall)
        cpus["wikic"].append(noop.cpu)
        peak = max(peak, noop.maxrss_mb)
        if have_ninja:
            r = run(["ninja", "-C", str(ninja_dir)], base)
            if "no work to do" not in r.stdout:
                raise SystemExit(f"ninja no-op did work:\n{r.stdout[-2000:]}")
            walls["ninja"].append(r.wall)
            cpus["ninja"].append(r.cpu)
        r = run([sys.executable, "-c", FLOOR], root)
        walls["floor"].append(r.wall)
        cpus["floor"].append(r.cpu)
    res.noop = {
        "wall": median(walls["wikic"]),
        "cpu": median(cpus["wikic"]),
        "runs": walls["wikic"],
        "calls": count_lines(log) - before,
        "maxrss_mb": noop.maxrss_mb,
    }
    res.floor = {"wall": median(walls["floor"]), "cpu": median(cpus["floor"])}
    if have_ninja:
        res.ninja |= {"wall": median(walls["ninja"]), "cpu": median(cpus["ninja"])}
    ninja_ms = res.ninja.get("wall", float("nan")) * 1000
    say(
        f"[{n}] no-op {res.noop['wall'] * 1000:.0f} ms "
        f"(ninja {ninja_ms:.0f} ms, floor {res.floor['wall'] * 1000:.0f} ms)"
    )

    feeds, cites = minimal_set(pages, EDITED)
    edit_walls, edit_cpus, edit_calls, minimal = [], [], [], True
    for revision in range(1, args.edits + 1):
        (root / EDITED).write_text(source_text(0, revision=revision), encoding="utf-8")
        before = count_lines(log)
        r, rep = wikic_build(root, log, ("--explain",))
        made = count_lines(log) - before
        # the model actions explained (--explain also says how the outputs were made)
        ran = {e["action"] for e in rep.get("explain", []) if e["action"].startswith(("digest ", "write "))}
        expected = {f"digest {EDITED}"} | cites
        ok = made == len(expected) and ran == expected
        minimal = minimal and ok
        if not ok:
            say(
                f"[{n}] edit {revision}: {made} calls, expected {len(expected)}; "
                f"extra {sorted(ran - expected)[:5]}, missing {sorted(expected - ran)[:5]}"
            )
        edit_walls.append(r.wall)
        edit_cpus.append(r.cpu)
        edit_calls.append(made)
        peak = max(peak, r.maxrss_mb)
    res.edit = {
        "wall": median(edit_walls),
        "cpu": median(edit_cpus),
        "runs": edit_walls,
        "calls": edit_calls,
        "expected_calls": 1 + len(cites),
        "feeding_pages": len(feeds),
        "citing_pages": len(cites),
        "minimal": minimal,
        "engine_seconds": rep["seconds"],
        "latency_part": edit_calls[-1] * latency,
    }
    say(
        f"[{n}] edit {res.edit['wall']:.2f}s, calls {edit_calls} (minimal {1 + len(cites)}: "
        f"{'yes' if minimal else 'NO'})"
    )
    res.add, add_peak = added(root, n, args.edits, log)
    say(f"[{n}] a source added {res.add['wall']:.2f}s, {res.add['ways']}")
    res.removed, removed_peak = added(root, n, args.edits, log, delete=True)
    say(f"[{n}] a source deleted {res.removed['wall']:.2f}s, {res.removed['ways']}")
    res.moved, moved_peak = moved(root, args.edits, log)
    say(f"[{n}] a source moved {res.moved['wall']:.2f}s, {res.moved['ways']}")
    res.retitled, retitled_peak = retitled(root, args.edits, log)
    say(f"[{n}] a source retitled {res.retitled['wall']:.2f}s, {res.retitled['ways']}")
    res.misspelt, misspelt_peak = misspelt(root, args.edits, log)
    say(f"[{n}] a heading misspelt {res.misspelt['wall']:.2f}s, {res.misspelt['ways']}")
    titles = [p.title for p in pages if p.type == "source"][:3]
    res.hand, hand_peak = by_hand(root, args.edits, log, titles)
    say(f"[{n}] a hand-made page {res.hand['wall']:.2f}s, {res.hand['ways']}")
    res.answer, answer_peak = answered(root, args.edits, log, titles)
    say(f"[{n}] a saved answer {res.answer['wall']:.2f}s, {res.answer['ways']}")
    res.peak_mb = max(
        peak, add_peak, removed_peak, moved_peak, retitled_peak, misspelt_peak, hand_peak, answer_peak
    )

    if args.profile and n == max(args.sizes):
        res.profile = profile(root, base, args.edits + 1, args.top)
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(ninja_dir, ignore_errors=True)
    else:
        say(f"[{n}] kept: {root}")
    return res


def added(root: Path, n: int, times: int, log: Path, delete: bool = False) -> tuple[dict[str, Any], float]:
    """A new source added, `times` times (one at a time, each built), or (`delete`) those
    deleted again (gen.py's sources are 0 .. n-1)."""

    def change(k: int) -> None:
        path = root / "sources" / source_name(n + k)
        if delete:
            path.unlink()
        else:
            path.write_text(source_text(n + k), encoding="utf-8")

    return changed(root, times, log, change)


def moved(root: Path, times: int, log: Path) -> tuple[dict[str, Any], float]:
    """A source's file moved to a folder of its own, and back, in turn: its page keeps its
    title and slug (build/quick.py takes it as the page gone as it was and come as it is)."""
    name = source_name(1)
    there, here = root / "sources" / "moved" / name, root / "sources" / name
    there.parent.mkdir(exist_ok=True)
    return changed(root, times, log, lambda k: (here, there)[k % 2].rename((there, here)[k % 2]))


def retitled(root: Path, times: int, log: Path) -> tuple[dict[str, Any], float]:
    """A source's title rewritten and its second heading made plural, then both back, in turn:
    its page renamed under its slug (the topic pages list it by its title), and a topic page
    that takes the plural as an alias, or lets it go (build/comego.py, lint/came.py): the pages
    linking to it by its title are not assembled or linted again."""
    path = root / "sources" / source_name(2)
    text = path.read_text(encoding="utf-8")
    title, heading = text.split("\n", 1)[0], [line for line in text.splitlines() if line.startswith("## ")][1]
    edited = text.replace(title, f"{title}, revised", 1).replace(f"{heading}\n", f"{heading}s\n", 1)
    return changed(root, times, log, lambda k: path.write_text((edited, text)[k % 2], encoding="utf-8"))


def misspelt(root: Path, times: int, log: Path) -> tuple[dict[str, Any], float]:
    """The longest heading of the first source (by path) misspelt, two letters of its first
    word swapped, then put right, in turn: a typo made or fixed where its topic's name was
    first written. The topic's cluster keeps the id its page has (build/plan.py,
    _Clusters.named_by), where the first name given would name it anew."""
    path = root / "sources" / source_name(0)
    text = path.read_text(encoding="utf-8")
    heading = max((line for line in text.splitlines() if line.startswith("## ")), key=len)
    word = heading[3:].split(" ", 1)[0]
    typo = word[0] + word[2] + word[1] + word[3:]
    edited = text.replace(f"{heading}\n", f"## {typo}{heading[3 + len(word) :]}\n", 1)
    return changed(root, times, log, lambda k: path.write_text((edited, text)[k % 2], encoding="utf-8"))


def by_hand(root: Path, times: int, log: Path, titles: list[str]) -> tuple[dict[str, Any], float]:
    """A hand-made page added to wiki/ linking to a page, then its link moved to another page
    and back, in turn (build/handmade.py)."""
    page = root / "wiki" / "my-reading-list.md"

    def change(k: int) -> None:
        links = f"[[{titles[0]}]] and [[{titles[1 + k % 2]}]]"
        page.write_text(
            f"---\ntitle: My reading list\ntype: concept\n---\n\nRead {links}.\n", encoding="utf-8"
        )

    return changed(root, times, log, change)


def answered(root: Path, times: int, log: Path, titles: list[str]) -> tuple[dict[str, Any], float]:
    """A saved answer (as `wikic ask --save` files one) written into wiki/, then its link
    edited, then deleted, in turn: the wiki's first answer, so index.md gains its part of
    answers and loses it again (build/indexpatch.py), and the lint summary patches it from
    what it kept of it (lint/totals.py)."""
    page = root / "wiki" / "what-is-it.md"

    def change(k: int) -> None:
        if k % 3 == 2:
            page.unlink()
            return
        page.write_text(
            "---\ntitle: What is it?\ntype: answer\nquestion: What is it?\n---\n\n"
            f"# What is it?\n\nSee [[{titles[k % 3]}]].\n",
            encoding="utf-8",
        )

    return changed(root, times, log, change)


def changed(
    root: Path, times: int, log: Path, change: Callable[[int], object]
) -> tuple[dict[str, Any], float]:
    """`change(k)` made and built, for k in 0 .. times-1: median wall and CPU, and how each
    build made its outputs and its lint summary (the quick way and the patched count are the
    ones that cost what the change changed: build/quick.py, lint/totals.py)."""
    walls, cpus, ways, peak = [], [], [], 0.0
    for k in range(times):
        change(k)
        r, rep = wikic_build(root, log, ("--explain",))
        quick = any(e["action"].startswith("assemble the edit") for e in rep.get("explain", []))
        with sqlite3.connect(root / ".wikic" / "state.db") as db:
            row = db.execute("SELECT v FROM meta WHERE k='lint_totals'").fetchone()
        how = json.loads(row[0]).get("how", "?") if row else "none"
        walls.append(r.wall)
        cpus.append(r.cpu)
        ways.append(f"{'quick' if quick else 'full'}/{how}")
        peak = max(peak, r.maxrss_mb)
    return {"wall": median(walls), "cpu": median(cpus), "runs": walls, "ways": ways}, peak


# --- profile -------------------------------------------------------------------------
def profile(root: Path, base: Path, revision: int, top: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for what in ("noop", "edit"):
        if what == "edit":
            (root / EDITED).write_text(source_text(0, revision=revision), encoding="utf-8")
        prof = base / f"{what}.prof"
        r = run([sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "wikic", "build", "-q"], root)
        if r.rc != 0:
            raise SystemExit(f"profiled build failed:\n{r.stderr[-2000:]}")
        stats = pstats.Stats(str(prof))
        rows = []
        for (file, line, fn), (_, calls, tt, ct, _) in stats.stats.items():  # type: ignore[attr-defined]
            rows.append(
                {"function": f"{short(file)}:{line}({fn})", "calls": calls, "tottime": tt, "cumtime": ct}
            )
        total = max(max(r["cumtime"] for r in rows), 1e-9)
        for r in rows:
            r["share"] = r["cumtime"] / total
        out[what] = {
            "total": total,
            "by_cumtime": sorted(rows, key=lambda r: -r["cumtime"])[:top],
            "by_tottime": sorted(rows, key=lambda r: -r["tottime"])[:top],
        }
    return out


def short(file: str) -> str:
    for mark in ("/wikic/", "/site-packages/", "/lib/python3"):
        if mark in file:
            return file[file.index(mark) + 1 :]
    return file


# --- output --------------------------------------------------------------------------
def ms(x: float) -> str:
    return f"{x * 1000:.0f} ms" if x < 10 else f"{x:.1f} s"


def table(results: list[SizeResult]) -> str:
    head = [
        "sources",
        "pages",
        "full build",
        "engine overhead (cpu)",
        "no-op (cpu)",
        "ninja no-op",
        "floor",
        "no-op/ninja",
        "no-op/floor",
        "edit (cpu)",
        "edit calls (minimal)",
        "source added (cpu)",
        "source deleted (cpu)",
        "source moved (cpu)",
        "source retitled (cpu)",
        "heading misspelt (cpu)",
        "hand-made page (cpu)",
        "saved answer (cpu)",
        "peak MB",
    ]
    rows = []
    for r in results:
        ninja = r.ninja.get("wall")
        rows.append(
            [
                f"{r.sources:,}",
                f"{r.pages:,}",
                f"{ms(r.full['wall'])} ({r.full['calls']:,} calls x {r.latency * 1000:g} ms)",
                f"{ms(r.full['overhead'])}, {r.full['overhead_per_call_ms']:.2f} ms/call"
                f" ({ms(r.full['cpu'])})",
                f"{ms(r.noop['wall'])} ({ms(r.noop['cpu'])})",
                ms(ninja) if ninja else "n/a",
                ms(r.floor["wall"]),
                f"{r.noop['wall'] / ninja:.1f}x" if ninja else "n/a",
                f"{r.noop['wall'] / r.floor['wall']:.1f}x",
                f"{ms(r.edit['wall'])} ({ms(r.edit['cpu'])})",
                f"{r.edit['calls'][0]} ({r.edit['expected_calls']}: {'yes' if r.edit['minimal'] else 'NO'})",
                f"{ms(r.add['wall'])} ({ms(r.add['cpu'])})" if r.add else "n/a",
                f"{ms(r.removed['wall'])} ({ms(r.removed['cpu'])})" if r.removed else "n/a",
                f"{ms(r.moved['wall'])} ({ms(r.moved['cpu'])})" if r.moved else "n/a",
                f"{ms(r.retitled['wall'])} ({ms(r.retitled['cpu'])})" if r.retitled else "n/a",
                f"{ms(r.misspelt['wall'])} ({ms(r.misspelt['cpu'])})" if r.misspelt else "n/a",
                f"{ms(r.hand['wall'])} ({ms(r.hand['cpu'])})" if r.hand else "n/a",
                f"{ms(r.answer['wall'])} ({ms(r.answer['cpu'])})" if r.answer else "n/a",
                f"{r.peak_mb:.0f}",
            ]
        )
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
    lines = [
        "| " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + " |",
        "|" + "|".join("-" * (w + 2) for w in widths) + "|",
    ]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |" for row in rows]
    return "\n".join(lines)


def targets(results: list[SizeResult], baseline: dict[str, Any] | None = None) -> list[str]:
    big = max(results, key=lambda r: r.sources)
    out = [f"targets at {big.sources:,} sources:"]
    ninja = big.ninja.get("wall")
    if ninja:
        ratio = big.noop["wall"] / ninja
        out.append(f"  no-op within 2.5x ninja: {ratio:.2f}x -> {'met' if ratio <= 2.5 else 'NOT met'}")
    else:
        out.append("  no-op within 2.5x ninja: ninja not run (apt-get install ninja-build)")
    noop = big.noop["wall"]
    out.append(f"  no-op under 0.5 s: {noop:.3f} s -> {'met' if noop < 0.5 else 'NOT met'}")
    out.append(
        f"  one-source edit = minimal calls: {big.edit['calls']} vs {big.edit['expected_calls']} -> "
        f"{'met' if big.edit['minimal'] else 'NOT met'}"
    )
    peak = big.peak_mb
    out.append(f"  peak memory under 300 MB: {peak:.0f} MB -> {'met' if peak < 300 else 'NOT met'}")
    # issue 17: at 10,000 an edit within 1 s and the no-op within ninja's; at 100,000 the no-op
    # within 1 s, an edit within 3 s and peak memory within 1 GB
    edit_target, noop_ok = (3.0, noop <= 1.0) if big.sources >= 100_000 else (1.0, ninja and noop <= ninja)
    edit = big.edit["wall"]
    out.append(
        f"  one-source edit within {edit_target:g} s: {edit:.2f} s -> "
        + ("met" if edit <= edit_target else "NOT met")
    )
    kinds = (
        ("a source added", big.add),
        ("a source deleted", big.removed),
        ("a source moved", big.moved),
        ("a source retitled", big.retitled),
        ("a heading misspelt where its topic's name was first written", big.misspelt),
    )
    hands = (
        ("a hand-made page added or edited", big.hand),
        ("a saved answer saved, edited or deleted", big.answer),
    )
    for what, one in (*kinds, *hands):
        if one:
            out.append(
                f"  {what} within {edit_target:g} s: {one['wall']:.2f} s -> "
                + ("met" if one["wall"] <= edit_target else "NOT met")
                + f" ({', '.join(one['ways'])}: assembly/lint summary)"
            )
    runs = big.edit.get("runs") or []
    if len(runs) > 1:  # the median hides it: the first revision also changes index.md and its pages' links
        later = ", ".join(f"{w:.2f}" for w in runs[1:])
        out.append(f"    the first edit after the full build: {runs[0]:.2f} s (the later ones: {later} s)")
    out.append(f"  no-op (issue 17): {noop:.3f} s -> {'met' if noop_ok else 'NOT met'}")
    # the engine's time, as the issue measured it (its CPU, beside it, counts the forked
    # children's work on other CPUs too)
    calls = max(big.full["calls"], 1)
    per_action = big.full["overhead"] * 1000 / calls
    out.append(
        f"  engine time per action within 1.5 ms: {per_action:.2f} ms -> "
        + ("met" if per_action <= 1.5 else "NOT met")
        + f" (CPU {big.full['cpu'] * 1000 / calls:.2f} ms)"
    )
    if baseline is not None:
        ref, ratio, engine = baseline["ref"], baseline["ratio"], baseline["engine_ratio"]
        for what, key, share in (("time", "engine_ms", engine), ("CPU", "per_call_ms", ratio)):
            pairs = zip(baseline[key]["baseline"], baseline[key]["this"], strict=True)
            runs = ", ".join(f"{then:.2f} vs {this:.2f} ({this / then:.3f})" for then, this in pairs)
            said = f"{ref}'s vs this checkout's, in turn: {runs} ms"
            out.append(f"  engine {what} per call, {said}; median of the pairs' ratios {share:.3f}")
        if baseline["commit"].startswith(FILED):
            out.append(
                f"  engine time per action 1.5/2.7 ({FILED_SHARE:.3f}) of {FILED}'s, the code "
                + f'issue 17 called 2.7 ms "now": {engine:.3f} -> '
                + ("met" if engine <= FILED_SHARE else "NOT met")
                + f" (CPU {ratio:.3f})"
            )
    if big.sources >= 100_000:
        out.append(f"  peak memory within 1 GB: {peak:.0f} MB -> {'met' if peak <= 1024 else 'NOT met'}")
    return out


def print_profile(results: list[SizeResult]) -> None:
    for r in results:
        for what, prof in r.profile.items():
            print(f"\nprofile: {what} at {r.sources:,} sources ({prof['total']:.3f} s under cProfile)")
            print("  by cumulative time:")
            for row in prof["by_cumtime"]:
                print(f"    {row['cumtime']:7.3f}s {row['share']:6.1%} {row['calls']:>8} {row['function']}")
            print("  by own time:")
            for row in prof["by_tottime"]:
                print(f"    {row['tottime']:7.3f}s {row['calls']:>8} {row['function']}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes",
        type=lambda s: [int(x) for x in s.split(",")],
        help="comma-separated source counts (default 100,1000,10000)",
    )
    parser.add_argument("--quick", action="store_true", help="sizes 100,1000; 3 no-op runs, 2 edits")
    parser.add_argument("--runs", type=int, default=7, help="no-op builds per size (median)")
    parser.add_argument("--edits", type=int, default=3, help="one-source edits per size (median)")
    parser.add_argument(
        "--latency",
        type=float,
        default=0.005,
        help="scripted seconds per call, for sizes up to 1,000 (default 0.005)",
    )
    parser.add_argument(
        "--big-latency",
        type=float,
        default=0.0,
        help="scripted seconds per call above 1,000 sources (default 0)",
    )
    parser.add_argument("--no-ninja", action="store_true", help="skip the ninja comparison")
    parser.add_argument(
        "--profile", action="store_true", help="cProfile the no-op and the edit at the largest size"
    )
    parser.add_argument("--top", type=int, default=25, help="rows per profile listing")
    parser.add_argument("--dir", type=Path, help="work here instead of a temporary folder")
    parser.add_argument("--keep", action="store_true", help="keep the generated projects")
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    parser.add_argument(
        "--baseline",
        metavar="REF",
        help=f"also run the largest size's full build with REF's wikic and this one in turn "
        f"(a commit of this checkout; {FILED}: the code on main when issue 17 was filed)",
    )
    parser.add_argument("--baseline-runs", type=int, default=2, help="full builds of each with --baseline")
    args = parser.parse_args()
    if not args.sizes:
        args.sizes = [100, 1000] if args.quick else [100, 1000, 10_000]
    if args.quick:
        args.runs, args.edits = min(args.runs, 3), min(args.edits, 2)
    if shutil.which("ninja") is None and not args.no_ninja:
        say(
            "ninja not found: install it (Debian: apt-get install ninja-build); comparing with the floor only"
        )
    if args.dir:
        Path(args.dir).mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="wikic-bench-", dir=args.dir))
    compared = None
    try:
        code = baseline_code(args.baseline, base) if args.baseline else None  # a wrong REF: said at once
        if code is not None:  # first: after the other measures, their copies were just removed (against)
            n = max(args.sizes)
            latency = args.latency if n <= 1000 else args.big_latency
            compared = against(n, latency, args.baseline, code, args.baseline_runs, base)
        results = [
            measure(n, args.latency if n <= 1000 else args.big_latency, args, base)
            for n in sorted(args.sizes)
        ]
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(
        f"wikic build scaling — python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"{time.strftime('%Y-%m-%d')}; medians of {args.runs} no-ops and {args.edits} edits"
    )
    print(table(results))
    print("\n".join(targets(results, compared)))
    print_profile(results)
    if args.json:
        figures: list[dict[str, Any]] = [asdict(r) for r in results]
        if compared is not None:
            figures.append({"baseline": compared})
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
