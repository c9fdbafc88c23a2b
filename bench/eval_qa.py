"""Answer quality: compile a question set's documents with wikic, then answer every
question three ways with the same model and budgets (closed book, RAG over the raw
sources, `wikic ask` over the compiled wiki) and score them.

    python bench/eval_qa.py --data ../shared/eval/musique --out /tmp/eval-musique \\
        [--model llama:smollm2 | openai:NAME | scripted:NAME | path/to/model.gguf] \\
        [--limit N] [--seed S] [--budget 600] [--answer-tokens 24] [--project DIR] \\
        [--ways closed_book,rag,wikic]

The data folder holds `sources/*.txt` and `questions.jsonl` (id, question, answers,
evidence, type; see ../shared/eval/README.md). Only the question text reaches
the systems under test; the other fields are used for scoring. --limit N keeps the
first N questions (after a shuffle with --seed) and compiles only their evidence
documents plus a proportional sample of the other documents as distractors.

The compiled project lives in a temporary folder, or in --project DIR, where it is
kept: a second run with the same data and model rebuilds only the actions that
failed (the build is incremental) and answers again. `--ways closed_book,rag`
runs the baselines without compiling anything.

Scores: exact match and token F1 (SQuAD normalisation, maximum over `answers`),
overall and per question type; evidence recall (the share of a question's evidence
documents whose content was in the model's context: RAG chunks from them, wiki
pages whose front matter `sources` lists them); prompt tokens and seconds per
question; fact retention (of the questions whose gold answer occurs verbatim in
their evidence documents, the share whose answer still occurs in the pages
compiled from those documents). Writes results.json and results.md into --out and
prints the Markdown table. Progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from qa_answer import ASK_SYSTEM_J2, INSTRUCTION, Answer, Model, Retriever, Wiki, closed_book, rag
from qa_score import any_occurs, best, exact_match, f1, summarise

from wikic.backends import make_backend, model_id
from wikic.build.actions import is_fallback
from wikic.build.pipeline import BuildOptions, build
from wikic.build.report import Progress
from wikic.config import load_schema
from wikic.project import Project, init_project
from wikic.state import State

METHODS = ("closed_book", "rag", "wikic")
METRICS = ("em", "f1", "evidence_recall", "prompt_tokens", "seconds")
SCHEMA_FIELDS = ("id", "question", "answers", "evidence", "type")  # what the harness reads; never shown whole


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    p.add_argument("--data", type=Path, required=True, help="folder with sources/ and questions.jsonl")
    p.add_argument("--out", type=Path, required=True, help="results folder (results.json, results.md)")
    p.add_argument(
        "--model",
        default="llama:smollm2",
        help="backend:name (llama:smollm2, openai:gpt-4o-mini, scripted:x) or a .gguf path",
    )
    p.add_argument("--base-url", help="openai backend: the server's base URL")
    p.add_argument("--api-key-env", help="openai backend: the environment variable holding the key")
    p.add_argument("--limit", type=int, help="only the first N questions (and their documents)")
    p.add_argument("--seed", type=int, help="shuffle the questions with this seed before --limit")
    p.add_argument(
        "--budget",
        type=int,
        default=600,
        help="prompt tokens for instructions + context + question, all three ways (default 600)",
    )
    p.add_argument("--answer-tokens", type=int, default=24, help="answer tokens, all three ways (default 24)")
    p.add_argument("--jobs", type=int, default=1, help="parallel model calls while compiling")
    p.add_argument(
        "--ways",
        type=lambda v: [w.strip() for w in v.split(",")],
        default=list(METHODS),
        help="which ways to answer, of closed_book,rag,wikic (default: all three; "
        "without wikic nothing is compiled)",
    )
    p.add_argument("--project", type=Path, help="keep the compiled project here (reused by the next run)")
    args = p.parse_args(argv)
    unknown = sorted(set(args.ways) - set(METHODS))
    if unknown or not args.ways:
        p.error(f"--ways: unknown {', '.join(unknown) or '(none given)'}; use some of {','.join(METHODS)}")
    return args


def model_section(args: argparse.Namespace) -> dict[str, Any]:
    spec = args.model
    if spec.endswith(".gguf"):
        cfg: dict[str, Any] = {"backend": "llama", "name": str(Path(spec).expanduser().resolve())}
    else:
        backend, _, name = spec.partition(":")
        cfg = {"backend": backend, "name": name or "smollm2"}
    if args.base_url:
        cfg["base_url"] = args.base_url
    if args.api_key_env:
        cfg["api_key_env"] = args.api_key_env
    cfg["jobs"] = args.jobs
    return cfg


def load_questions(data: Path) -> list[dict[str, Any]]:
    rows = []
    for line in (data / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            rows.append({k: row[k] for k in SCHEMA_FIELDS})  # diagnostics are dropped here, once
    return rows


def select(
    questions: list[dict[str, Any]], all_docs: list[str], limit: int | None, seed: int | None
) -> tuple[list[dict[str, Any]], list[str]]:
    """The questions to ask and the documents to compile: all of them, or with --limit the
    chosen questions' evidence plus distractors in the whole set's proportion."""
    questions = list(questions)
    if seed is not None:
        random.Random(seed).shuffle(questions)
    if limit is None or limit >= len(questions):
        return questions, all_docs
    chosen = questions[:limit]
    evidence_all = {f for q in questions for f in q["evidence"]} & set(all_docs)
    evidence = sorted({f for q in chosen for f in q["evidence"]} & set(all_docs))
    others = sorted(set(all_docs) - evidence_all)
    share = len(others) / max(1, len(evidence_all))
    n = min(len(others), round(len(evidence) * share))
    distractors = random.Random(seed or 0).sample(others, n)
    return chosen, sorted(evidence + distractors)


def write_if_changed(path: Path, text: str) -> None:
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def make_project(
    root: Path, data: Path, docs: list[str], model: dict[str, Any], args: argparse.Namespace
) -> Project:
    """A wikic project over copies of the documents (copy2 keeps their mtimes: a kept
    project stays up to date across runs). Only the ask template is overridden."""
    project = Project(root) if (root / "schema.yaml").is_file() else init_project(root)
    schema = {
        "title": f"{data.name} evaluation documents",
        "scope": "Wikipedia paragraphs, one document per article, from a multi-hop question set",
        "model": model,
        "ask": {"budget": args.budget, "answer_tokens": args.answer_tokens},
    }
    write_if_changed(project.schema_path, yaml.safe_dump(schema, sort_keys=False))
    prompts = root / "prompts"
    prompts.mkdir(exist_ok=True)
    write_if_changed(prompts / "ask.system.j2", ASK_SYSTEM_J2)
    wanted = set(docs)
    for old in project.sources_dir.iterdir():
        if old.name not in wanted:
            old.unlink()
    for name in docs:
        target = project.sources_dir / name
        if not target.is_file():
            shutil.copy2(data / "sources" / name, target)
    return project


def compile_wiki(project: Project, backend: Any) -> dict[str, Any]:
    started = time.monotonic()
    report = build(project, BuildOptions(), Progress(), backend_factory=lambda schema: backend)
    seconds = time.monotonic() - started
    data = report.to_json()
    pages = sum(1 for p in project.wiki_dir.glob("*.md") if p.stem not in ("index", "log"))
    llm = data["llm"]
    return {
        "seconds": round(seconds, 1),
        "pages": pages,
        **data["actions"],
        "calls": llm["calls"],
        "prompt_tokens": llm["prompt_tokens"],
        "completion_tokens": llm["completion_tokens"],
        "nothing_to_do": data["nothing_to_do"],
        "errors": data["errors"],
        **made_by_stage(project),
    }


def made_by_stage(project: Project) -> dict[str, dict[str, int]]:
    """Over the whole project (a resumed compile included): the actions per stage, and how
    many of them the model's unusable answers left to a fallback made from the source's lines."""
    actions: dict[str, int] = {}
    fallbacks: dict[str, int] = {}
    with State.open(project.state_path) as state:
        for rec in state.actions().values():
            actions[rec.stage] = actions.get(rec.stage, 0) + 1
            if is_fallback(state.cached(rec.key)):
                fallbacks[rec.stage] = fallbacks.get(rec.stage, 0) + 1
    return {"actions_by_stage": actions, "fallbacks": fallbacks}


def score(answer: Answer, q: dict[str, Any], evidence: set[str]) -> dict[str, Any]:
    return {
        "answer": answer.text.strip(),
        "em": best(exact_match, answer.text, q["answers"]),
        "f1": best(f1, answer.text, q["answers"]),
        "evidence_recall": len(evidence & answer.evidence_files) / len(evidence) if evidence else None,
        "prompt_tokens": answer.prompt_tokens,
        "seconds": round(answer.seconds, 3),
        "context": answer.context,
        **answer.extra,
    }


Way = Callable[[str], Answer]


def answer_all(
    questions: list[dict[str, Any]], docs: list[str], ways: dict[str, Way]
) -> list[dict[str, Any]]:
    rows = []
    for i, q in enumerate(questions, 1):
        evidence = set(q["evidence"]) & set(docs)
        row = {"id": q["id"], "type": q["type"], "question": q["question"], "answers": q["answers"]}
        for name, way in ways.items():
            row[name] = score(way(q["question"]), q, evidence)
        if "closed_book" in row:
            row["closed_book"]["evidence_recall"] = None  # no context at all
        rows.append(row)
        print(
            f"[{i}/{len(questions)}] " + "  ".join(f"{m} f1={row[m]['f1']:.2f}" for m in ways),
            file=sys.stderr,
            flush=True,
        )
    return rows


def fact_retention(questions: list[dict[str, Any]], texts: dict[str, str], wiki: Wiki) -> dict[str, Any]:
    """Of the questions whose gold answer occurs (normalised, whole words) in their evidence
    documents, how many still have it in the pages compiled from those documents."""
    in_sources = retained = 0
    missing = []
    for q in questions:
        evidence = set(q["evidence"]) & set(texts)
        if not any_occurs(q["answers"], "\n".join(texts[f] for f in sorted(evidence))):
            continue
        in_sources += 1
        pages = [p.text for p in wiki.pages if wiki.page_sources.get(p.slug, set()) & evidence]
        if any_occurs(q["answers"], "\n".join(pages)):
            retained += 1
        else:
            missing.append(q["id"])
    share = retained / in_sources if in_sources else None
    return {"in_sources": in_sources, "retained": retained, "share": share, "lost": missing}


def method_table(summary: dict[str, Any]) -> list[str]:
    lines = [
        "| method | EM | F1 | evidence recall | prompt tokens | s/question |",
        "|---|---|---|---|---|---|",
    ]
    for m in summary:
        s = summary[m]["overall"]
        recall = "—" if s["evidence_recall"] is None else f"{s['evidence_recall']:.2f}"
        lines.append(
            f"| {m} | {s['em']:.3f} | {s['f1']:.3f} | {recall} | {s['prompt_tokens']:.0f} | "
            f"{s['seconds']:.2f} |"
        )
    return lines


def type_table(summary: dict[str, Any]) -> list[str]:
    first = next(iter(summary.values()))
    types = list(first["by_type"])
    counts = [first["by_type"][t]["n"] for t in types]
    head = " | ".join(f"{t} (n={n})" for t, n in zip(types, counts, strict=True))
    lines = [f"| F1 / EM by type | {head} |", "|---" * (len(types) + 1) + "|"]
    for m in summary:
        cells = " | ".join(
            f"{summary[m]['by_type'][t]['f1']:.3f} / {summary[m]['by_type'][t]['em']:.2f}" for t in types
        )
        lines.append(f"| {m} | {cells} |")
    return lines


def compile_line(results: dict[str, Any]) -> str:
    c, r = results["compile"], results["fact_retention"]
    if c is None or r is None:
        return f"No compile (wikic not among --ways). Answering: {results['answer_seconds']:.0f} s."
    share = "n/a" if r["share"] is None else f"{r['share']:.0%}"
    return (
        f"Fact retention: {r['retained']} of {r['in_sources']} gold answers found verbatim in the "
        f"evidence documents are still in the pages compiled from them ({share}).\n\n"
        f"Compile: {results['documents']} documents -> {c['pages']} pages in {c['seconds']:.0f} s, "
        f"{c['calls']} model calls, {c['failed']} failed actions; of all its actions "
        f"({c.get('actions_by_stage')}) the model's answers stayed unusable in "
        f"{c.get('fallbacks')}, made from the source's lines instead. "
        f"Answering: {results['answer_seconds']:.0f} s."
    )


def markdown(results: dict[str, Any]) -> str:
    summary = results["summary"]
    lines = [
        f"# eval_qa: {results['dataset']}, {results['questions']} questions, "
        f"{results['documents']} documents",
        "",
        f"Model `{results['model_id']}`; prompt budget {results['budget']} tokens, answer "
        f"{results['answer_tokens']} tokens; RAG: BM25 over {results['rag_chunks']} chunks of "
        f"{results['chunk_chars']} characters, mean k {results['rag_mean_k']:.1f}; wikic ask mode: "
        f"{results['wikic_modes']}.",
        "",
        *method_table(summary),
        "",
        *type_table(summary),
        "",
        compile_line(results),
    ]
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> dict[str, Any]:
    data = args.data.resolve()
    questions = load_questions(data)
    all_docs = sorted(p.name for p in (data / "sources").glob("*.txt"))
    questions, docs = select(questions, all_docs, args.limit, args.seed)
    texts = {name: (data / "sources" / name).read_text(encoding="utf-8") for name in docs}
    with tempfile.TemporaryDirectory(prefix="wikic-eval-") as tmp:
        root = (args.project or Path(tmp) / "project").resolve()
        root.mkdir(parents=True, exist_ok=True)
        project = make_project(root, data, docs, model_section(args), args)
        schema = load_schema(project.schema_path)
        backend = make_backend(schema.model, project.root)
        compiled = retention = None
        if "wikic" in args.ways:
            print(f"compiling {len(docs)} documents in {root}", file=sys.stderr, flush=True)
            compiled = compile_wiki(project, backend)
            print(f"compiled: {compiled}", file=sys.stderr, flush=True)
        model = Model(backend, schema)
        model.load()
        retriever = Retriever(texts)
        ways: dict[str, Way] = {
            "closed_book": lambda q: closed_book(model, q),
            "rag": lambda q: rag(model, retriever, q),
        }
        if "wikic" in args.ways:
            wiki = Wiki(project, schema, model)
            ways["wikic"] = wiki.answer
            retention = fact_retention(questions, texts, wiki)
        started = time.monotonic()
        rows = answer_all(questions, docs, {m: ways[m] for m in METHODS if m in args.ways})
        answer_seconds = time.monotonic() - started
        mid = model_id(schema.model, project.root)
    modes = sorted({row["wikic"]["mode"] for row in rows if "wikic" in row})
    return {
        "dataset": data.name,
        "data": str(data),
        "model": args.model,
        "model_id": mid,
        "questions": len(questions),
        "documents": len(docs),
        "limit": args.limit,
        "seed": args.seed,
        "budget": args.budget,
        "answer_tokens": args.answer_tokens,
        "instruction": INSTRUCTION,
        "chunk_chars": 512,
        "rag_chunks": len(retriever.chunks),
        "rag_mean_k": sum(row["rag"]["k"] for row in rows if "rag" in row) / max(1, len(rows)),
        "wikic_modes": ", ".join(modes) or "none",
        "wikic_context_mismatches": sum(
            1 for row in rows if "wikic" in row and not row["wikic"]["context_check"]
        ),
        "compile": compiled,
        "answer_seconds": round(answer_seconds, 1),
        "summary": {
            m: summarise([{"type": row["type"], **row[m]} for row in rows], METRICS)
            for m in METHODS
            if m in args.ways
        },
        "fact_retention": retention,
        "per_question": rows,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    results = run(args)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    table = markdown(results)
    (args.out / "results.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
