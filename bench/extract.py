"""Extraction figures (issue 15): time per page of a long PDF, per file of many DOCX
files, and the no-op build of a project where a third of the sources are PDFs.

    python bench/extract.py                        # 300-page PDF, 100 DOCX, 90 sources (30 PDFs)
    python bench/extract.py --pdf-pages 20 --docx 5 --sources 9 --runs 1    # a smoke run
    python bench/extract.py --compare FILE...      # pypdf vs pdfminer.six, trafilatura vs readability

The files are made by the libraries that write them (fpdf2, python-docx): a PDF
page holds 30 lines of prose, a DOCX file a heading and 12 paragraphs. Extraction
is timed through wikic's own extractors (wikic.sources.extract), cold (no store)
and warm (from .wikic/extracted/). The no-op build is `python -m wikic build --json`
in a fresh process, as a user runs it, median of --runs, after a full build with
the scripted model; the store's files are checked untouched by the no-op builds
(no file re-extracted: the no-op is stat-only).

--compare times and sizes the candidates on real files you give (PDF and HTML),
where they are installed: pypdf vs pdfminer.six, trafilatura vs readability-lxml
(+ markdownify). Prints a table on stdout (--json FILE for the raw figures).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

WORDS = ["ninja", "make", "bazel", "restat", "cutoff", "rebuild"]
WORDS += ["target", "rule", "graph", "cache", "hash", "action"]
SCHEMA = "title: Bench\nscope: extraction\nmodel:\n  backend: scripted\n  name: bench\n"


def prose(n: int, width: int = 12) -> str:
    words = [WORDS[(n * 7 + i * 3) % len(WORDS)] for i in range(width)]
    return f"Line {n}: " + " ".join(words).capitalize() + "."


def make_pdf(pages: int, lines: int = 30) -> bytes:
    from fpdf import FPDF

    doc = FPDF()
    doc.set_font("helvetica", size=10)
    for p in range(pages):
        doc.add_page()
        for n in range(lines):
            doc.cell(0, 7, prose(p * lines + n), new_x="LMARGIN", new_y="NEXT")
    return bytes(doc.output())


def make_docx(n: int) -> bytes:
    import io

    import docx

    doc = docx.Document()
    doc.add_heading(f"Notes {n}", level=1)
    for i in range(12):
        doc.add_paragraph(prose(n * 12 + i, 20))
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def timed_extract(name: str, raw: bytes, store: Path | None) -> tuple[float, int]:
    from wikic.sources.read import source_text

    started = time.perf_counter()
    text = source_text(name, raw, store).text
    return time.perf_counter() - started, text.count("\n")


def pdf_figures(pages: int, work: Path) -> dict[str, Any]:
    raw = make_pdf(pages)
    cold, lines = timed_extract("long.pdf", raw, work / "store")
    warm, _ = timed_extract("long.pdf", raw, work / "store")
    return {
        "pages": pages,
        "bytes": len(raw),
        "lines": lines,
        "cold_s": cold,
        "per_page_ms": cold / pages * 1000,
        "warm_s": warm,
    }


def docx_figures(count: int) -> dict[str, Any]:
    files = [make_docx(n) for n in range(count)]
    times = [timed_extract(f"n{n}.docx", raw, None)[0] for n, raw in enumerate(files)]
    return {"files": count, "per_file_ms": statistics.mean(times) * 1000, "max_ms": max(times) * 1000}


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def wikic(root: Path, *args: str, cpu_times: list[float] | None = None) -> tuple[float, dict[str, Any]]:
    """Wall seconds of `python -m wikic ARGS` in a fresh process (its CPU seconds to `cpu_times`)."""
    started, cpu_started = time.perf_counter(), cpu()
    proc = subprocess.run(
        [sys.executable, "-m", "wikic", "-C", str(root), *args], capture_output=True, text=True, timeout=3600
    )
    took = time.perf_counter() - started
    if cpu_times is not None:
        cpu_times.append(cpu() - cpu_started)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"wikic {' '.join(args)} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return took, json.loads(proc.stdout)


def make_project(root: Path, sources: int, pdfs: bool) -> None:
    (root / "sources").mkdir(parents=True)
    (root / "schema.yaml").write_text(SCHEMA)
    for n in range(sources):
        if pdfs and n % 3 == 0:
            (root / "sources" / f"s{n:04}.pdf").write_bytes(make_pdf(5))
        else:
            (root / "sources" / f"s{n:04}.md").write_text(
                f"# Note {n}\n\n" + "\n".join(prose(n * 9 + i) for i in range(8)) + "\n"
            )


def noop_figures(sources: int, runs: int, work: Path) -> dict[str, Any]:
    """The no-op with a third of the sources PDFs, interleaved with the same project in text only."""
    root, text_root = work / "project", work / "text-only"
    make_project(root, sources, pdfs=True)
    make_project(text_root, sources, pdfs=False)
    full_s, full = wikic(root, "build", "--json", "-q")
    wikic(text_root, "build", "--json", "-q")
    store = root / ".wikic" / "extracted"
    before = {p.name: p.stat().st_mtime_ns for p in store.iterdir()}
    times: list[float] = []
    text_times: list[float] = []
    cpus: list[float] = []
    text_cpus: list[float] = []
    for _ in range(runs):
        took, report = wikic(root, "build", "--json", "-q", cpu_times=cpus)
        assert report.get("nothing_to_do"), report
        times.append(took)
        text_times.append(wikic(text_root, "build", "--json", "-q", cpu_times=text_cpus)[0])
    untouched = {p.name: p.stat().st_mtime_ns for p in store.iterdir()} == before
    return {
        "sources": sources,
        "pdfs": len(range(0, sources, 3)),
        "full_s": full_s,
        "errors": len(full.get("errors", [])),
        "noop_median_s": statistics.median(times),
        "text_only_noop_median_s": statistics.median(text_times),
        "noop_cpu_median_s": statistics.median(cpus),
        "text_only_noop_cpu_median_s": statistics.median(text_cpus),
        "store_untouched": untouched,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pdf-pages", type=int, default=300)
    ap.add_argument("--docx", type=int, default=100)
    ap.add_argument("--sources", type=int, default=90)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--compare", nargs="+", type=Path, metavar="FILE")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if args.compare:
        from extract_compare import compare

        figures: dict[str, Any] = {"compare": compare(args.compare)}
    else:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            print(f"extracting a {args.pdf_pages}-page PDF ...", file=sys.stderr)
            figures = {"pdf": pdf_figures(args.pdf_pages, work)}
            print(f"extracting {args.docx} DOCX files ...", file=sys.stderr)
            figures["docx"] = docx_figures(args.docx)
            print(f"building {args.sources} sources, a third PDFs ...", file=sys.stderr)
            figures["noop"] = noop_figures(args.sources, args.runs, work)
        print_table(figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


def print_table(f: dict[str, Any]) -> None:
    pdf, docx, noop = f["pdf"], f["docx"], f["noop"]
    print("| what | figure |\n|---|---|")
    cold = f"{pdf['per_page_ms']:.1f} ms a page ({pdf['cold_s']:.2f} s)"
    print(f"| PDF, {pdf['pages']} pages ({pdf['lines']:,} lines), cold | {cold} |")
    print(f"| the same PDF from the store | {pdf['warm_s'] * 1000:.1f} ms |")
    print(f"| DOCX, {docx['files']} files | {docx['per_file_ms']:.1f} ms a file (max {docx['max_ms']:.1f}) |")
    print(
        f"| no-op build, {noop['sources']} sources ({noop['pdfs']} PDFs) "
        f"| {noop['noop_median_s'] * 1000:.0f} ms wall, {noop['noop_cpu_median_s'] * 1000:.0f} ms CPU "
        f"(full build {noop['full_s']:.1f} s); store untouched: {noop['store_untouched']} |"
    )
    print(
        f"| no-op build, the same {noop['sources']} sources as text only "
        f"| {noop['text_only_noop_median_s'] * 1000:.0f} ms wall, "
        f"{noop['text_only_noop_cpu_median_s'] * 1000:.0f} ms CPU |"
    )


if __name__ == "__main__":
    main()
