"""Generated wikic projects for the build benchmarks: N sources over a shared
vocabulary of topics, so that pages are fed by many sources, as in real notes.

Each source is a short note (about 15 lines): a title, a lead line, then 3 to 5
topics drawn from the vocabulary, the first ones as `## Heading` sections (two
lines each), the others as **bold** terms on a line of their own. The scripted
backend turns both into topics, so a topic page is fed by every source that
names it (about N * 4 / topics of them). Every line names its note, so no two
claims are the same text.

    from gen import generate  # bench/ is on sys.path when a bench script runs
    project = generate(Path("/tmp/p"), 1000, model="  backend: scripted\\n  latency: 0\\n")
"""

from __future__ import annotations

import random
from pathlib import Path

from wikic.project import Project, init_project

ADJECTIVES = [
    "Adaptive",
    "Bounded",
    "Columnar",
    "Durable",
    "Elastic",
    "Federated",
    "Gossip",
    "Hierarchical",
    "Incremental",
    "Journaled",
    "Keyed",
    "Lazy",
    "Monotonic",
    "Nested",
    "Optimistic",
    "Partitioned",
    "Quorum",
    "Replicated",
    "Sparse",
    "Tiered",
]
NOUNS = [
    "Caching",
    "Compaction",
    "Consensus",
    "Eviction",
    "Indexing",
    "Locking",
    "Logging",
    "Batching",
    "Routing",
    "Scheduling",
    "Sharding",
    "Snapshots",
    "Streaming",
    "Tracing",
    "Vacuuming",
]
TOPICS = [f"{a} {n}" for a in ADJECTIVES for n in NOUNS]  # 300 topics
FILLER = [  # the words of the notes' sentences
    "the",
    "design",
    "keeps",
    "latency",
    "low",
    "under",
    "load",
    "while",
    "the",
    "operators",
    "tune",
    "memory",
    "budgets",
    "and",
    "measure",
    "throughput",
    "against",
    "the",
    "baseline",
    "so",
    "that",
    "failures",
    "stay",
    "rare",
    "and",
    "recovery",
    "stays",
    "quick",
    "even",
    "when",
    "the",
    "cluster",
    "grows",
    "past",
    "its",
    "planned",
    "size",
]


def _sentence(rng: random.Random, lead: str) -> str:
    words = rng.sample(FILLER, 9)
    return f"{lead} {' '.join(words)}."


def source_text(i: int, seed: int = 7, revision: int = 0) -> str:
    """Note i's text; `revision` > 0 rewrites every text line (not the title, not the headings)."""
    rng = random.Random(seed * 1_000_003 + i)
    topics = rng.sample(TOPICS, rng.randint(3, 5))
    headed, bold = topics[:2], topics[2:]
    mark = f" Revision {revision}." if revision else ""
    lines = [f"# Note {i}: {headed[0]}", ""]
    lines.append(_sentence(rng, f"Note {i} is about {headed[0].lower()} and {headed[1].lower()}:") + mark)
    for term in bold:
        lines.append(_sentence(rng, f"In note {i}, **{term}** means") + mark)
    for topic in headed:
        lines += ["", f"## {topic}", ""]
        lines.append(_sentence(rng, f"Note {i} on {topic.lower()}:") + mark)
        lines.append(_sentence(rng, f"More from note {i}:") + mark)
    return "\n".join(lines) + "\n"


def source_name(i: int) -> str:
    return f"s{i:05d}.md"


def schema_text(model: str, title: str = "Bench wiki") -> str:
    """`model` is the indented body of the model: mapping, e.g. '  backend: scripted\\n'."""
    return f"title: {title}\nscope: generated notes for the build benchmarks\nmodel:\n{model}"


def generate(root: Path, n: int, model: str = "  backend: scripted\n", seed: int = 7) -> Project:
    """A new project under `root` (which must not hold one) with n sources."""
    project = init_project(root, "Bench wiki")
    project.schema_path.write_text(schema_text(model), encoding="utf-8")
    for i in range(n):
        (project.sources_dir / source_name(i)).write_text(source_text(i, seed), encoding="utf-8")
    return project
