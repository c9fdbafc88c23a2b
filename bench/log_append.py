"""log.md's entry per build, at a log of many builds: appended (the log as wikic left it) against
read and written again whole (what every build did before, and still does after a hand edit).

    python bench/log_append.py                          # 2,000 builds' entries of 20 page names
    python bench/log_append.py --entries 20000 --names 3

A log of --entries entries is made in a temporary wiki/ (on this disk: the write is fsynced),
then --runs builds each add an entry through build.logfile.append_log: once with the log's
record in state.db as the last build left it (an append), once with the record dropped before
each build (nothing to trust: the whole log read, written to a temporary file, fsynced, renamed).
Prints the median and best time per build of each, and checks that both made the same bytes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from wikic.build.logfile import HEAD, REL, append_log, entry
from wikic.build.report import Report
from wikic.state import State


def report(build: int, names: int) -> Report:
    done = Report(pages=376, ran=2, up_to_date=370)
    done.written = [f"wiki/page-{build}-{k}-of-a-longer-title.md" for k in range(names)]
    return done


def run(base: Path, args: argparse.Namespace, whole: bool) -> tuple[list[float], bytes, int]:
    """Seconds per build, the log's bytes after, its size before."""
    root = base / ("whole" if whole else "append")
    (root / "wiki").mkdir(parents=True)
    entries = [entry(report(i, args.names), 1e9 + i) for i in range(args.entries)]
    (root / REL).write_text(HEAD + "".join(entries), encoding="utf-8")
    size = (root / REL).stat().st_size
    state = State.open(root / "state.db")
    try:
        append_log(root, state, report(args.entries, args.names), 2e9)  # recorded as a build leaves it
        seconds = []
        for i in range(1, args.runs + 1):
            if whole:
                state.remove_file(REL)
            start = time.perf_counter()
            append_log(root, state, report(args.entries + i, args.names), 2e9 + i)
            seconds.append(time.perf_counter() - start)
    finally:
        state.close()
    return seconds, (root / REL).read_bytes(), size


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--entries", type=int, default=2000, help="builds already in log.md")
    parser.add_argument(
        "--names", type=int, default=20, help="page names each entry lists (20 at most shown)"
    )
    parser.add_argument("--runs", type=int, default=20, help="builds timed")
    parser.add_argument("--dir", type=Path, help="where the temporary wiki goes (default: the system's)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wikic-log-", dir=args.dir) as tmp:
        appended, after, size = run(Path(tmp), args, whole=False)
        rewritten, whole_after, _ = run(Path(tmp), args, whole=True)
    print(
        f"log.md: {args.entries} entries of {args.names} names, {size / 1e6:.2f} MB; {args.runs} builds each"
    )
    print("| log.md | median | best |")
    print("|--------|--------|------|")
    for name, seconds in (("appended", appended), ("written whole", rewritten)):
        print(f"| {name} | {statistics.median(seconds) * 1000:.1f} ms | {min(seconds) * 1000:.1f} ms |")
    print(f"same bytes: {'yes' if after == whole_after else 'NO'}")
    return 0 if after == whole_after else 1


if __name__ == "__main__":
    sys.exit(main())
