"""Topics from structure, measured on an evaluation set: the share of gold answer entities
(questions.jsonl `answer`) that have a page whose title or alias is the answer, from code
alone (no model): source pages only, then with the named things and the terms two or more
sources write (wikic/build/candidates.py, phrases.py). yes/no answers and numbers are left out.

    python bench/entity_pages.py --data ../shared/eval/musique [--data ...]

With --project DIR (a compiled project of one set, as `bench/eval_qa.py --project` keeps it),
also the share in that project's wiki/: model, structure and source pages together.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from qa_score import normalise  # noqa: E402

from wikic.build.plan import SourceInfo, plan  # noqa: E402
from wikic.config import Schema  # noqa: E402
from wikic.wiki.page import split_page  # noqa: E402


def entities(data: Path) -> list[str]:
    answers = [
        json.loads(line)["answer"] for line in (data / "questions.jsonl").read_text().splitlines() if line
    ]
    return [
        a
        for a in answers
        if normalise(a) not in ("yes", "no") and not normalise(a).replace(" ", "").isdigit()
    ]


def titles(data: Path, structure: bool) -> tuple[set[str], int]:
    sources = []
    for path in sorted((data / "sources").glob("*.txt")):
        lines = path.read_text(encoding="utf-8").splitlines()
        sources.append(
            SourceInfo(f"sources/{path.name}", lines[0].strip(), lines, {"summary": [], "topics": []})
        )
    if not structure:
        return {normalise(s.title) for s in sources}, 0
    pages = plan(sources, Schema(), {})
    names = {normalise(n) for p in pages.values() for n in [p.title, *p.aliases]}
    return names, sum(p.type != "source" for p in pages.values())


def compiled(project: Path) -> set[str]:
    """The titles and aliases of a compiled wiki's pages, normalised."""
    names = set()
    for path in (project / "wiki").glob("*.md"):
        if path.stem in ("index", "log"):
            continue
        meta = split_page(path.read_text(encoding="utf-8")).meta
        names |= {normalise(str(n)) for n in [meta.get("title", ""), *(meta.get("aliases") or [])]}
    return names


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, action="append", required=True)
    p.add_argument("--project", type=Path, help="a compiled project of the (one) --data set")
    args = p.parse_args()
    if args.project and len(args.data) != 1:
        p.error("--project goes with one --data")
    for data in args.data:
        if args.project:
            gold, names = entities(data), compiled(args.project)
            hit = sum(normalise(a) in names for a in gold)
            share = f"{hit}/{len(gold)} answer entities have a page ({100 * hit / len(gold):.0f}%)"
            print(f"{data.name}: compiled wiki: {share}")
        gold = entities(data)
        for structure in (False, True):
            names, topics = titles(data, structure)
            hit = sum(normalise(a) in names for a in gold)
            label = "source pages + names and terms in 2+ sources" if structure else "source pages only"
            extra = f", {topics} topic pages" if structure else ""
            share = f"{hit}/{len(gold)} answer entities have a page ({100 * hit / len(gold):.0f}%{extra})"
            print(f"{data.name}: {label}: {share}")


if __name__ == "__main__":
    main()
