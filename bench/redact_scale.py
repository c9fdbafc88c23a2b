"""How redaction (wikic/privacy/redact.py) scales with the size of a source: seconds
per MB for generated text holding every kind of value, and for hostile text (long
runs without spaces, long digit runs) on which a backtracking pattern goes quadratic.
Linear means the seconds per MB stay flat as the size grows: CPU seconds, since wall
seconds on a shared machine move with its load.

    python bench/redact_scale.py [--sizes 1 10 50] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from wikic.privacy.redact import BUILTIN, Redactor

MB = 1_000_000
PROSE = (
    "The team met on 2024-03-{d:02d} to review {n} open items for the Q{q} release of the search index.",
    "Write to user{n}@example.com or call +44 20 7946 {n:04d} about invoice {n}.",
    "The refund goes to card 4111 1111 1111 1111 and account GB82 WEST 1234 5698 7654 32.",
    "Rotate the key sk-proj-{n:08d}abcdefghijklmnopqrstu before ticket TCK-{n} closes.",
    "Nothing sensitive here: chunking splits documents into pieces of a few hundred tokens.",
)


def text_of(size: int, hostile: bool, seed: int = 0) -> str:
    """About `size` characters of lines: mixed prose and values, or hostile runs."""
    rng = random.Random(seed)
    lines: list[str] = []
    total = 0
    while total < size:
        if hostile:
            n = rng.randint(200, 4000)
            line = rng.choice(["a" * n, "1" * n, "a." * (n // 2), "x@" * (n // 2), "1 " * (n // 2)])
        else:
            line = rng.choice(PROSE).format(d=rng.randint(1, 28), n=rng.randint(0, 9999), q=rng.randint(1, 4))
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines) + "\n"


def measure(size_mb: float, hostile: bool) -> dict[str, float | int | bool]:
    text = text_of(int(size_mb * MB), hostile)
    redactor = Redactor([*BUILTIN, ("ticket", r"TCK-\d+")])
    started, cpu = time.perf_counter(), time.process_time()
    out = redactor.redact(text)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert out.text.count("\n") == text.count("\n")  # placeholders never add or remove lines
    return {
        "mb": size_mb,
        "hostile": hostile,
        "seconds": round(seconds, 3),
        "cpu_seconds": round(cpu, 3),
        "s_per_mb": round(cpu / size_mb, 3),
        "placeholders": out.text.count("-1]"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1, 10, 50], help="source sizes in MB")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    rows = [measure(size, hostile) for hostile in (False, True) for size in args.sizes]
    print("| text | MB | wall s | CPU s | CPU s/MB |")
    print("|---|---|---|---|---|")
    for row in rows:
        kind = "hostile" if row["hostile"] else "mixed"
        print(f"| {kind} | {row['mb']:g} | {row['seconds']} | {row['cpu_seconds']} | {row['s_per_mb']} |")
    for hostile in (False, True):
        mine = [r for r in rows if r["hostile"] == hostile]
        ratio = float(mine[-1]["s_per_mb"]) / max(float(mine[0]["s_per_mb"]), 1e-9)
        kind = "hostile" if hostile else "mixed"
        first, last = mine[0]["mb"], mine[-1]["mb"]
        print(f"{kind}: CPU s/MB at {last:g} MB over that at {first:g} MB: {ratio:.2f} (1 = linear)")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
