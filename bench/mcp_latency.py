"""Latency of `wikic mcp`'s `search` and `read_page` tools on a generated 10,000-page wiki.

    python bench/mcp_latency.py [--pages 10000] [--calls 50] [--keep]

Generates the wiki of lint_scale.py (topic pages with cited paragraphs and [[links]],
source pages, index.md), then:

1. in process (wikic.mcp.tools.Tools, no protocol): the first call, which reads and
   indexes the wiki, then --calls warm calls of each tool;
2. end to end: a `python -m wikic mcp` subprocess driven over stdio by the MCP SDK's
   own client, as an agent's client drives it; one call to load, then --calls of each.

Queries are page titles and pairs of the wiki's words; read_page names are page
titles. Prints medians, 95th percentiles and maxima in milliseconds (target: under
100 ms each); JSON on stdout, progress on stderr. Every call also stats wiki/ and, at
most every 2 s, walks it (the reload check): that walk is in the maxima.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from lint_scale import generate
from mcp import Client, StdioServerParameters

from wikic.mcp.tools import Tools
from wikic.project import Project


def summary(seconds: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return {"median_ms": round(statistics.median(ms), 1), "p95_ms": round(p95, 1), "max_ms": round(ms[-1], 1)}


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def workload(tools: Tools, calls: int, seed: int = 11) -> tuple[list[str], list[str]]:
    """Search queries (a title, or two words of the wiki) and page names to read."""
    rng = random.Random(seed)
    pages = tools.pages()
    titles = [p.title for p in rng.sample(pages, min(calls, len(pages)))]
    words = [w for p in rng.sample(pages, min(calls, len(pages))) for w in p.title.lower().split()]
    queries = [t if i % 2 else " ".join(rng.sample(words, 2)) for i, t in enumerate(titles)]
    return queries, titles


def in_process(project: Project, calls: int) -> tuple[dict[str, Any], list[str], list[str]]:
    tools = Tools(project)
    load = timed(lambda: tools.search("first call"))
    queries, names = workload(tools, calls)
    search = [timed(lambda q=q: tools.search(q)) for q in queries]
    read = [timed(lambda n=n: tools.read_page(n)) for n in names]
    figures = {"load_s": round(load, 2), "search": summary(search), "read_page": summary(read)}
    return figures, queries, names


async def over_stdio(project: Project, queries: list[str], names: list[str]) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k == "PYTHONPATH"}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "wikic", "-C", str(project.root), "mcp"], env=env
    )
    started = time.perf_counter()
    async with Client(params, read_timeout_seconds=600) as client:
        connected = time.perf_counter() - started
        first = await _call(client, "search", {"query": "first call"})
        search = [await _call(client, "search", {"query": q}) for q in queries]
        read = [await _call(client, "read_page", {"name": n}) for n in names]
    return {
        "start_s": round(connected, 2),
        "load_s": round(first, 2),
        "search": summary(search),
        "read_page": summary(read),
    }


async def _call(client: Client, tool: str, args: dict[str, Any]) -> float:
    started = time.perf_counter()
    result = await client.call_tool(tool, args)
    if result.is_error:
        raise SystemExit(f"{tool}({args}) failed: {result.content}")
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=50, help="calls of each tool")
    parser.add_argument("--keep", action="store_true", help="keep the generated project and print its path")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="wikic-mcp-bench-"))
    try:
        started = time.perf_counter()
        project = generate(tmp / "wiki-project", args.pages)
        print(f"generated {args.pages} pages in {time.perf_counter() - started:.1f}s", file=sys.stderr)
        local, queries, names = in_process(project, args.calls)
        print(f"in process: {local}", file=sys.stderr)
        remote = anyio.run(over_stdio, project, queries, names)
        print(f"over stdio: {remote}", file=sys.stderr)
        figures = {
            "pages": args.pages,
            "calls": len(queries),
            "load_average": round(os.getloadavg()[0], 1),
            "in_process": local,
            "stdio": remote,
        }
        print(json.dumps(figures, indent=2))
        if args.keep:
            print(f"kept: {project.root}", file=sys.stderr)
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
