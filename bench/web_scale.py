"""Benchmark: `wikic serve` and `wikic site` on a generated 10,000-page wiki.

Generates the project of bench/lint_scale.py (topic pages with cited paragraphs and
[[links]], source pages, index.md, a state.db), runs the lint that ends every `wikic build`
(which keeps each page's findings in the state), then measures:
  - serve: the first request (reads the wiki; lint runs in the background, from the build's
    findings), the time until lint's findings are ready, then the median and p90 time to
    serve pages not served before (while nothing else runs), over real HTTP on 127.0.0.1;
  - site: a full `wikic site` export, a second export with nothing changed, and the
    re-exports after one page changed by hand (a different page each time, `--edits` of them:
    the median), with lint (the default) and with --no-lint.

    python bench/web_scale.py [--pages 10000] [--requests 200] [--edits 7] [--json FILE]

Targets (issue 14): a page served in under 50 ms (median), a full export under 30 s,
a one-page re-export under 1 s.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from lint_scale import generate

from wikic.lint.runner import build_summary
from wikic.project import Project
from wikic.web.server import Viewer, make_server
from wikic.web.site import export


def get(port: int, path: str) -> tuple[int, float]:
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request("GET", path)
    resp = conn.getresponse()
    resp.read()
    conn.close()
    return resp.status, time.perf_counter() - started


def body(port: int, path: str) -> bytes:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request("GET", path)
    data = conn.getresponse().read()
    conn.close()
    return data


def bench_serve(project: Project, requests: int, lint: bool) -> dict[str, float]:
    viewer = Viewer(project, lint=lint)
    server = make_server(viewer, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        status, first = get(port, "/")
        assert status == 200
        started = time.perf_counter()
        while lint and b"Lint is running" in body(port, "/health.html"):
            time.sleep(0.1)  # the server lints in the background; pages are served meanwhile
        lint_ready = time.perf_counter() - started
        slugs = sorted(p.stem for p in project.wiki_dir.glob("*.md") if p.stem not in ("index", "log"))
        chosen = random.Random(3).sample(slugs, min(requests, len(slugs)))
        times = []
        for slug in chosen:
            status, seconds = get(port, f"/p/{slug}.html")
            assert status == 200, slug
            times.append(seconds)
        _, source = get(port, "/s/s00000.md.html")
        _, graph = get(port, "/graph.html")
    finally:
        server.shutdown()
        server.server_close()
    times.sort()
    return {
        "first_request_s": round(first, 3),
        "lint_ready_s": round(lint_ready, 3),
        "median_ms": round(1000 * statistics.median(times), 2),
        "p90_ms": round(1000 * times[int(0.9 * (len(times) - 1))], 2),
        "source_ms": round(1000 * source, 2),
        "graph_ms": round(1000 * graph, 2),
        "requests": len(times),
    }


def bench_site(project: Project, out: Path, lint: bool, edits: int) -> dict[str, Any]:
    cpu = time.process_time()
    full = export(project, out, lint=lint)
    full_cpu, cpu = time.process_time() - cpu, time.process_time()
    again = export(project, out, lint=lint)
    again_cpu = time.process_time() - cpu
    text_of = {p: p.read_text(encoding="utf-8") for p in project.wiki_dir.glob("*.md")}
    pages = sorted(p for p, text in text_of.items() if "## Sources" in text)  # topic pages: an edit each
    walls, cpus, written = [], [], []
    for n in range(edits):  # a different page each time, as a person editing the wiki
        page = pages[(n * 997) % len(pages)]
        text = page.read_text(encoding="utf-8")
        page.write_text(text.replace("## Sources", f"An added line {n}.\n\n## Sources"), encoding="utf-8")
        cpu = time.process_time()
        one = export(project, out, lint=lint)
        cpus.append(time.process_time() - cpu)
        walls.append(one.seconds)
        written.append(len(one.written))
    return {
        "full_s": full.seconds,
        "full_cpu_s": round(full_cpu, 3),  # CPU time: less at the mercy of the machine's load
        "files": len(full.written),
        "nothing_changed_s": again.seconds,
        "nothing_changed_cpu_s": round(again_cpu, 3),
        "one_page_s": round(statistics.median(walls), 3),  # the median over `edits` edits
        "one_page_cpu_s": round(statistics.median(cpus), 3),
        "one_page_runs_s": walls,
        "one_page_written": max(written),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=200, help="distinct pages served, each once")
    parser.add_argument("--edits", type=int, default=7, help="one-page re-exports, a page each (median)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    figures: dict[str, object] = {"pages": args.pages}
    with tempfile.TemporaryDirectory(prefix="wikic-web-") as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        project = generate(root, args.pages)
        started = time.perf_counter()
        build_summary(project)  # the lint every build ends with: it keeps each page's findings
        figures["build_lint_s"] = round(time.perf_counter() - started, 3)
        print(f"the build's closing lint: {figures['build_lint_s']} s", flush=True)
        for lint in (True, False):
            name = "lint" if lint else "no_lint"
            figures[f"serve_{name}"] = serve = bench_serve(project, args.requests, lint)
            print(
                f"serve ({name}): first request {serve['first_request_s']} s (lint done "
                f"{serve['lint_ready_s']} s later); page median "
                f"{serve['median_ms']} ms, p90 {serve['p90_ms']} ms over {serve['requests']} pages; "
                f"source {serve['source_ms']} ms, graph {serve['graph_ms']} ms",
                flush=True,
            )
        for lint in (True, False):
            name = "lint" if lint else "no_lint"
            figures[f"site_{name}"] = site = bench_site(project, Path(tmp) / f"site-{name}", lint, args.edits)
            print(
                f"site ({name}): full export {site['full_s']} s ({site['full_cpu_s']} s CPU, "
                f"{site['files']} files); nothing changed {site['nothing_changed_s']} s "
                f"({site['nothing_changed_cpu_s']} s CPU); one page changed, median of {args.edits}: "
                f"{site['one_page_s']} s ({site['one_page_cpu_s']} s CPU, at most "
                f"{site['one_page_written']} files written; each: {site['one_page_runs_s']})",
                flush=True,
            )
    serve_ok = figures["serve_no_lint"]["median_ms"] < 50  # type: ignore[index]
    full_ok = figures["site_lint"]["full_s"] < 30  # type: ignore[index]
    one_ok = figures["site_lint"]["one_page_s"] < 1  # type: ignore[index]
    said = {True: "met", False: "missed"}
    print(
        f"targets: page median < 50 ms: {said[serve_ok]}; full export < 30 s: {said[full_ok]}; "
        f"one-page re-export < 1 s (with lint, median): {said[one_ok]}"
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
