"""What `wikic ask` reads of a large wiki before it can choose what to show the model.

    python bench/ask_scale.py [--pages 10000] [--questions 5] [--keep]

On the generated wiki of lint_scale.py, in process, each figure the median over
--questions questions (pairs of the wiki's words), each question as a new `wikic ask`
process meets the wiki:

- every page read (what ask did before ask/index.py): the pages read and parsed, their
  corpus made, the question ranked;
- the first question: every page read and its record kept in state.db (ask_pages,
  ask_terms);
- the next questions, every record's body decoded (the corpus of every page, as before
  ask/scan.py);
- the next questions: the question's words found in every page's terms, the bodies of the
  pages it shows decoded (ask/scan.py, as `wikic ask` ranks);
- after one page changed: that page read, the others as the line before.

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


Shown = list[tuple[str, int, str]]  # a ranking as what it shows


def shown(ranking: Ranking) -> Shown:
    return [(s.page.slug, s.order, s.text) for s in [*ranking.ranked, *ranking.bridge_sentences]]


def timed(fn: Callable[[str], Shown], question: str) -> tuple[float, Shown]:
    """The seconds to rank the question and make what it shows (a sentence is made when shown)."""
    started = time.perf_counter()
    got = fn(question)
    return time.perf_counter() - started, got


def measure(root: Path, pages: int, questions: int) -> dict[str, Any]:
    started = time.perf_counter()
    project = generate(root, pages)
    say(f"generated {pages:,} pages in {time.perf_counter() - started:.1f} s")
    wiki = project.wiki_dir
    rng = random.Random(5)
    words = sorted({w for p in wiki.glob("*.md") for w in p.stem.split("-") if len(w) > 3})
    asked = [" ".join(rng.sample(words, 2)) for _ in range(questions)]

    def read_all(question: str) -> Shown:
        every = load_pages(wiki)
        return shown(rank(question, every, Corpus(every), 0.3))

    def from_records(question: str, scan: bool = True) -> Shown:
        state = State.open(project.state_path)
        try:
            kept = index.indexed(wiki, state)
            corpus = kept.corpus(kept.pages, question if scan else None)  # the bodies from `state`
            return shown(rank(question, kept.pages, corpus, 0.3))
        finally:
            state.close()

    def all_bodies(question: str) -> Shown:
        return from_records(question, scan=False)

    ways = ("read_all", "first", "next_all_bodies", "next", "one_changed")
    figures: dict[str, list[float]] = {way: [] for way in ways}
    same = True
    edited = sorted(wiki.glob("*.md"))[len(asked) :]
    for n, question in enumerate(asked):
        base, expected = timed(read_all, question)
        figures["read_all"].append(base)
        state = State.open(project.state_path)
        state.drop_ask_rows([rel for rel, *_ in state.ask_heads()])  # the first question over this wiki
        state.close()
        for what, way in (("first", from_records), ("next_all_bodies", all_bodies), ("next", from_records)):
            seconds, got = timed(way, question)
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
