"""How much the saved prefix state speeds up `wikic ask` with the embedded model.

    python bench/ask_latency.py [--questions 3] [--animals 22] [--keep DIR]

Generates a wiki whose prefix is at least 3,000 tokens (built with the scripted
backend, so building costs nothing; `ask` uses the real SmolLM2 model), then for
each question runs two fresh `wikic ask --json --no-cache` processes, as a user would:

1. cold: .wikic/prefix/ emptied first, so the process evaluates the whole prefix
   (and saves its state);
2. warm: a new process restores that state and evaluates only the question.

(`--stale-ok`: other work on the machine may touch wikic's templates meanwhile.)

Time to first token is the JSON's `seconds.first_token`: from the start of the
prefix step (the model already loaded, which costs both runs the same) to the
first streamed token. Prints medians, the cold/warm ratio (target: >= 20), the
wall time of each whole process, and the saved state's bytes per prefix token.
JSON summary on stdout; progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from wikic.backends.scripted import ScriptedBackend
from wikic.build.pipeline import BuildOptions, build
from wikic.build.report import Progress
from wikic.config import ModelConfig
from wikic.project import Project, init_project

SCHEMA = """\
title: Field survey
scope: notes from an animal survey
model:
  backend: llama
  name: smollm2
  context: 8192
ask:
  budget: 7000
  answer_tokens: 16
"""
_ANIMALS = (
    "aardvark badger beaver bison camel cheetah coyote dingo donkey eland ferret gazelle gecko "
    "gerbil "
    "gibbon gopher hamster hyena ibex iguana jackal jaguar koala lemur leopard llama lynx marmot "
    "meerkat mink moose narwhal ocelot okapi otter panda puma quokka rabbit raccoon reindeer seal "
    "skunk sloth tapir tiger walrus wombat yak zebra"
)
ANIMALS = _ANIMALS.split()
QUESTIONS = [
    "How many marmot nests were counted?",
    "What does the okapi eat?",
    "Where does the tapir live?",
    "Is the walrus population stable?",
    "Which region is the gecko found in?",
]


def generate(root: Path, animals: int) -> Project:
    project = init_project(root)
    project.schema_path.write_text(SCHEMA)
    for i, animal in enumerate(ANIMALS[:animals]):
        (project.sources_dir / f"{animal}.md").write_text(
            f"# Field notes {i}\n\nThese notes describe one animal of the survey.\n\n"
            f"## {animal.capitalize()}\n\n"
            f"The {animal} lives in region {i} and eats plants number {i * 7}.\n"
            f"Observers counted {i * 13} {animal} nests along the river in spring.\n"
            f"The {animal} population is stable according to the survey team.\n"
        )
    scripted = ScriptedBackend(ModelConfig(backend="scripted", name="bench"))
    report = build(project, BuildOptions(), Progress(quiet=True), backend_factory=lambda schema: scripted)
    if not report.ok:
        sys.exit(f"the build failed: {report.errors}")
    return project


def ask(project: Project, question: str) -> dict[str, Any]:
    started = time.monotonic()
    command = [
        sys.executable,
        "-m",
        "wikic",
        "-C",
        str(project.root),
        "ask",
        "--json",
        "--no-cache",
        "--stale-ok",
        question,
    ]
    out = subprocess.run(command, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        sys.exit(f"wikic ask failed:\n{out.stderr}")
    result: dict[str, Any] = json.loads(out.stdout)
    result["process_seconds"] = time.monotonic() - started
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--animals", type=int, default=22)  # ~150 prefix tokens each
    parser.add_argument("--keep", type=Path, help="make the project here and keep it")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="wikic-ask-bench-"))
    try:
        run(root, args.animals, args.questions)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


def run(root: Path, animals: int, questions: int) -> None:
    project = generate(root / "wiki-project", animals)
    runs = []
    for question in QUESTIONS[:questions]:
        shutil.rmtree(project.state_dir / "prefix", ignore_errors=True)
        cold = ask(project, question)
        warm = ask(project, question)
        if cold["prefix_cached"] or not warm["prefix_cached"]:
            sys.exit(f"unexpected cache state: cold {cold['prefix_cached']}, warm {warm['prefix_cached']}")
        print(
            f"{question!r}: first token cold {cold['seconds']['first_token']:.3f} s, "
            f"warm {warm['seconds']['first_token']:.3f} s; evaluated {cold['evaluated_tokens']} vs "
            f"{warm['evaluated_tokens']} tokens",
            file=sys.stderr,
        )
        runs.append((cold, warm))
    if runs[0][0]["prefix_tokens"] < 3000:
        print(
            f"warning: the prefix is only {runs[0][0]['prefix_tokens']} tokens; use more --animals",
            file=sys.stderr,
        )
    cold_ttft = statistics.median(c["seconds"]["first_token"] for c, _ in runs)
    warm_ttft = statistics.median(w["seconds"]["first_token"] for _, w in runs)
    summary = {
        "prefix_tokens": runs[0][0]["prefix_tokens"],
        "question_tokens": statistics.median(w["question_tokens"] for _, w in runs),
        "questions": len(runs),
        "cold_first_token_s": round(cold_ttft, 4),
        "warm_first_token_s": round(warm_ttft, 4),
        "ratio": round(cold_ttft / warm_ttft, 1),
        "cold_prefix_s": round(statistics.median(c["seconds"]["prefix"] for c, _ in runs), 4),
        "warm_restore_s": round(statistics.median(w["seconds"]["prefix"] for _, w in runs), 4),
        "cold_process_s": round(statistics.median(c["process_seconds"] for c, _ in runs), 3),
        "warm_process_s": round(statistics.median(w["process_seconds"] for _, w in runs), 3),
        "state_bytes": runs[0][0]["state_bytes"],
        "state_bytes_per_prefix_token": round(runs[0][0]["state_bytes"] / runs[0][0]["prefix_tokens"]),
    }
    print(
        f"prefix {summary['prefix_tokens']} tokens: time to first token cold {cold_ttft:.3f} s, "
        f"warm {warm_ttft:.3f} s (median of {len(runs)}): warm is {summary['ratio']}x faster "
        f"(target >= 20x); {summary['state_bytes_per_prefix_token']} bytes of state per prefix token",
        file=sys.stderr,
    )
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
