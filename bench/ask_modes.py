"""The whole wiki in the cached prefix, or selection per question: evidence recall and
per-question cost at several wiki sizes (issue 13, point 5).

From a project compiled by `bench/eval_qa.py --project DIR` (its digests are reused: the
smaller wikis are rebuilt offline from subsets of its sources, no model call), for each
size and each question whose documents it holds:

- prefix: what a wiki-in-the-prompt tool does: index.md and then every page, in ask's fixed
  order, as many as fit the model's context; the same for every question, so it is
  evaluated once and cached, and a question pays only for its own tokens;
- selection at each budget: ask's selected sentences and source lines, after a prefix of
  instructions and (maybe) the compact index; a question pays for its selected context.

Evidence recall is the share of a question's evidence documents whose content the prompt
shows (as in eval_qa.py). With --answer the embedded model answers each way too (F1 and
seconds per question); without it nothing but a tokenizer is loaded.

    python bench/ask_modes.py --data ../shared/eval/musique --project DIR
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_qa import load_questions, select  # noqa: E402
from qa_answer import Model, Wiki  # noqa: E402
from qa_score import best, f1, mean  # noqa: E402

from wikic.ask.context import AskWiki, ContextBuilder  # noqa: E402
from wikic.backends import make_backend  # noqa: E402
from wikic.build.report import Progress  # noqa: E402
from wikic.build.run import BuildOptions, build  # noqa: E402
from wikic.config import load_schema  # noqa: E402
from wikic.project import Project  # noqa: E402
from wikic.prompts.loader import Prompts  # noqa: E402


def sub_project(compiled: Path, docs: list[str], root: Path) -> Project:
    """A copy of the compiled project holding only `docs`, rebuilt offline (no model call)."""
    shutil.copytree(compiled, root, ignore=shutil.ignore_patterns("sources"))
    (root / "sources").mkdir()
    for name in docs:
        shutil.copy2(compiled / "sources" / name, root / "sources" / name)
    project = Project(root)
    report = build(project, BuildOptions(offline=True), Progress(quiet=True))
    if not report.ok:
        raise SystemExit(f"offline rebuild of {root} failed: {report.errors[:3]}")
    return project


def prefix_fit(builder: ContextBuilder, model: Model, room: int) -> tuple[str, int, int]:
    """The question-independent prefix with as many pages (in ask's order) as fit `room`
    tokens: its text, the pages in it, and its tokens."""
    lo, hi = 0, len(builder.pages)
    while lo < hi:  # the most pages whose rendering fits
        mid = (lo + hi + 1) // 2
        system, _ = builder.render("", builder.pages[:mid], [])
        lo, hi = (mid, hi) if model.count(system) <= room else (lo, mid - 1)
    system, _ = builder.render("", builder.pages[:lo], [])
    return system, lo, model.count(system)


def recall(evidence: set[str], shown: set[str]) -> float | None:
    return len(evidence & shown) / len(evidence) if evidence else None


def measure(
    project: Project, questions: list[dict[str, Any]], docs: list[str], model: Model, args: argparse.Namespace
) -> dict[str, Any]:
    schema = load_schema(project.schema_path)
    wiki = Wiki(project, schema, model)
    shown = AskWiki(Prompts(project.root), schema.title, schema.scope, wiki.index, wiki.pages, project.root)
    room = model.context_room()
    system, fitted, prefix_tokens = prefix_fit(ContextBuilder(shown, model.count, room), model, room - 64)
    in_prefix = {f for p in wiki.pages[:fitted] for f in wiki.page_sources.get(p.slug, ())}
    rows: dict[str, list[dict[str, Any]]] = {"prefix": []}
    for q in questions:
        evidence = set(q["evidence"]) & set(docs)
        row: dict[str, Any] = {"recall": recall(evidence, in_prefix), "tokens": model.count(q["question"])}
        if args.answer and fitted:  # no page fits: the prefix way is the closed book
            started = time.monotonic()
            text, _ = model.complete(system, f"Question: {q['question']}")
            row |= {"f1": best(f1, text, q["answers"]), "seconds": time.monotonic() - started}
        rows["prefix"].append(row)
    for budget in args.budgets:
        key = f"select {budget}"
        rows[key] = []
        builder = ContextBuilder(shown, model.count, min(budget, room))
        for q in questions:
            ctx = builder.build(" ".join(q["question"].split()))
            files = {c.source.removeprefix("sources/") for s in ctx.sentences for c in s.cites}
            files |= {ref.split(":", 1)[0].removeprefix("sources/") for ref in ctx.sources_shown}
            evidence = set(q["evidence"]) & set(docs)
            row = {"recall": recall(evidence, files), "tokens": model.count(ctx.user)}
            if args.answer:
                started = time.monotonic()
                text, _ = model.complete(ctx.system, ctx.user)
                row |= {"f1": best(f1, text, q["answers"]), "seconds": time.monotonic() - started}
            rows[key].append(row)
    summary = {
        way: {
            k: mean(r[k] for r in got if r.get(k) is not None) for k in ("recall", "tokens", "f1", "seconds")
        }
        for way, got in rows.items()
    }
    return {
        "pages": len(wiki.pages),
        "questions": len(questions),
        "wiki_tokens": model.count(ContextBuilder(shown, model.count, room).render("", wiki.pages, [])[0]),
        "prefix_pages": fitted,
        "prefix_tokens": prefix_tokens,
        "ways": summary,
    }


def table(results: list[dict[str, Any]]) -> str:
    out = [
        "| pages | questions | whole wiki tokens | way | pages in prompt | evidence recall | "
        "tokens paid per question | F1 | s per question |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    fmt = lambda v, p=2: "–" if v is None else f"{v:.{p}f}"  # noqa: E731
    for r in results:
        for way, s in r["ways"].items():
            pages = f"{r['prefix_pages']} of {r['pages']}" if way == "prefix" else "selected"
            out.append(
                f"| {r['pages']} | {r['questions']} | {r['wiki_tokens']} | {way} | {pages} | "
                f"{fmt(s['recall'])} | {fmt(s['tokens'], 0)} | {fmt(s['f1'], 3)} | {fmt(s['seconds'], 1)} |"
            )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="folder with sources/ and questions.jsonl")
    ap.add_argument("--project", type=Path, required=True, help="a project eval_qa.py compiled from --data")
    ap.add_argument("--limits", default="3,20,50", help="questions per wiki size (their documents)")
    ap.add_argument("--budgets", default="600,1500,3000,6000", help="selection budgets, prompt tokens")
    ap.add_argument("--answer", action="store_true", help="also answer with the project's model (slow)")
    ap.add_argument("--json", type=Path, help="write the figures here as JSON")
    args = ap.parse_args(argv)
    args.budgets = [int(b) for b in args.budgets.split(",")]
    questions = load_questions(args.data.resolve())
    all_docs = sorted(p.name for p in (args.project / "sources").glob("*.txt"))
    schema = load_schema(args.project / "schema.yaml")
    model = Model(make_backend(schema.model, args.project), schema)
    model.load()
    results = []
    with tempfile.TemporaryDirectory(prefix="wikic-modes-") as tmp:
        for limit in (int(n) for n in args.limits.split(",")):
            chosen, docs = select(questions, all_docs, limit, None)
            project = sub_project(args.project, docs, Path(tmp) / f"q{limit}")
            results.append(measure(project, chosen, docs, model, args))
            print(table(results[-1:]).split("\n", 2)[2], file=sys.stderr, flush=True)
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
