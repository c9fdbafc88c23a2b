"""What `wikic ask` reads of a large wiki before it can choose what to show the model.

    python bench/ask_scale.py [--pages 10000] [--questions 5] [--keep]

On the generated wiki of lint_scale.py, in process, each figure the median over
--questions questions (pairs of the wiki's words), each question as a new `wikic ask`
process meets the wiki:

- every page read (what ask did before ask/index.py): the pages read and parsed, their
  corpus made, the question ranked;
- the first question: every page read and its record kept in state.db (ask_pages);
- the next questions: every page from its record;
- after one page changed: that page read, the others from their records.

Each way must rank every question the same (sentence for sentence); the ratios are
against the first figure, measured in the same run. JSON on stdout, progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lint_scale import generate

from wikic.ask import index
from wikic.ask.context import load_pages
from wikic.ask.select import Corpus, Ranking, rank
from wikic.state import State


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def shown(ranking: Ranking) -> list[tuple[str, int, str]]:
    return [(s.page.slug, s.order, s.text) for s in [*ranking.ranked, *ranking.bridge_sentences]]


def timed(fn: Callable[[str], Ranking], question: str) -> tuple[float, list[tuple[str, int, str]]]:
    started = time.perf_counter()
    ranking = fn(question)
    return time.perf_counter() - started, shown(ranking)


def measure(root: Path, pages: int, questions: int) -> dict[str, Any]:
    started = time.perf_counter()
    project = generate(root, pages)
    say(f"generated {pages:,} pages in {time.perf_counter() - started:.1f} s")
    wiki = project.wiki_dir
    rng = random.Random(5)
    words = sorted({w for p in wiki.glob("*.md") for w in p.stem.split("-") if len(w) > 3})
    asked = [" ".join(rng.sample(words, 2)) for _ in range(questions)]

    def read_all(question: str) -> Ranking:
        every = load_pages(wiki)
        return rank(question, every, Corpus(every), 0.3)

    def from_records(question: str) -> Ranking:
        state = State.open(project.state_path)
        try:
            kept = index.indexed(wiki, state)
            return rank(question, kept.pages, kept.corpus(kept.pages), 0.3)  # the bodies from `state`
        finally:
            state.close()

    figures: dict[str, list[float]] = {"read_all": [], "first": [], "next": [], "one_changed": []}
    same = True
    edited = sorted(wiki.glob("*.md"))[len(asked) :]
    for n, question in enumerate(asked):
        base, expected = timed(read_all, question)
        figures["read_all"].append(base)
        state = State.open(project.state_path)
        state.drop_ask_rows([rel for rel, *_ in state.ask_heads()])  # the first question over this wiki
        state.close()
        for what in ("first", "next"):
            seconds, got = timed(from_records, question)
            figures[what].append(seconds)
            same = same and got == expected
        page = edited[n]
        page.write_text(page.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
        _, expected = timed(read_all, question)
        seconds, got = timed(from_records, question)
        figures["one_changed"].append(seconds)
        same = same and got == expected
        say(f"question {n + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in figures.items()))
    medians = {k: round(statistics.median(v), 3) for k, v in figures.items()}
    ratios = {k: round(v / medians["read_all"], 2) for k, v in medians.items()}
    return {"pages": pages, "questions": questions, "seconds": medians, "of_read_all": ratios, "same": same}


def main() -> int:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--questions", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the generated wiki (its path on stderr)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="wikic-ask-scale-"))
    try:
        figures = measure(root, args.pages, args.questions)
    finally:
        if args.keep:
            say(f"kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(figures, indent=2))
    return 0 if figures["same"] else 1


if __name__ == "__main__":
    sys.exit(main())
