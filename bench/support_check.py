"""Precision and recall of the shared support check (wikic/wiki/support.py) on a small
labelled set of sentences and the lines they cite: tests/data/support_cases.jsonl.

"Positive" is *unsupported*: precision is the share of the sentences the check rejects
that are truly unsupported, recall the share of unsupported sentences it rejects.

    python bench/support_check.py [--threshold 60] [--cases FILE] [-v]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from wikic.wiki.support import judge

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "data" / "support_cases.jsonl"


def evidence(case: dict[str, object]) -> list[str]:
    if "evidence" in case:
        return [str(line) for line in case["evidence"]]  # type: ignore[attr-defined]
    lines = (ROOT / str(case["source"])).read_text(encoding="utf-8").splitlines()
    start, end = case["lines"]  # type: ignore[misc]
    return lines[int(start) - 1 : int(end)]


def run(cases: list[dict[str, object]], threshold: float, verbose: bool) -> dict[str, float]:
    counts: Counter[str] = Counter()
    missed: Counter[str] = Counter()
    for case in cases:
        verdict = judge(str(case["sentence"]), evidence(case), threshold)
        truth = case["label"] == "unsupported"
        flagged = not verdict.ok
        counts[("t" if truth == flagged else "f") + ("p" if flagged else "n")] += 1
        if truth != flagged:
            missed[str(case["kind"])] += 1
            if verbose:
                print(f"  {'missed' if truth else 'false alarm'} ({case['kind']}): {case['sentence']}")
                print(f"    score {verdict.score:.0f}% {verdict.reason}")
    tp, fp, fn, tn = counts["tp"], counts["fp"], counts["fn"], counts["tn"]
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    print(
        f"{len(cases)} cases ({tp + fn} unsupported): precision {precision:.2f}, recall {recall:.2f}; "
        f"false alarms {fp} of {fp + tn} supported"
    )
    if missed:
        print("wrong by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(missed.items())))
    return {"precision": precision, "recall": recall, "false_alarms": fp}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threshold", type=float, default=60, help="lint.citation_threshold (default 60)")
    p.add_argument("--cases", type=Path, default=CASES)
    p.add_argument("-v", "--verbose", action="store_true", help="print every case judged wrongly")
    args = p.parse_args()
    cases = [json.loads(line) for line in args.cases.read_text(encoding="utf-8").splitlines() if line.strip()]
    run(cases, args.threshold, args.verbose)


if __name__ == "__main__":
    main()
