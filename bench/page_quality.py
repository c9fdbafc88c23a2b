"""What a compiled wiki's pages hold, as a reader would check it: notes kept, sentences
cited to a few lines, sentences the shared support check rejects, wide citations, and the
share of the sources' content lines whose facts appear in some page's text.

    python bench/page_quality.py PROJECT_DIR [--json]

PROJECT_DIR holds sources/ and wiki/ (a `wikic build` output). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from wikic.wiki.overlap import content_words, plain
from wikic.wiki.page import Citation, parse_citations, split_page
from wikic.wiki.support import cited_sentences, judge

WIDE = 5  # a citation over this many lines is too coarse to audit a claim
CARRIED = 80  # % of a source line's content words a page must hold for its facts to count as there
SECTIONS = re.compile(r"^## (Sources|Topics|Linked from)\s*$", re.M)


def _prose(body: str) -> list[str]:
    """The paragraphs a reader reads as text: not headings, lists or the bookkeeping sections."""
    text = SECTIONS.split(body)[0]
    return [
        p.strip()
        for p in re.split(r"\n\s*\n", text)
        if p.strip() and not p.lstrip().startswith(("#", "- ", "<!--"))
    ]


def _lines(root: Path, cite: Citation, cache: dict[str, list[str]]) -> list[str]:
    if cite.source not in cache:
        path = root / cite.source
        cache[cite.source] = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    return cache[cite.source][cite.start - 1 : cite.end]


def measure(root: Path) -> dict[str, Any]:
    cache: dict[str, list[str]] = {}
    notes = kept = said = line_cited = unsupported = cites = wide = 0
    page_words: list[frozenset[str]] = []
    for path in sorted((root / "wiki").glob("*.md")):
        if path.name in ("index.md", "log.md"):
            continue
        page = split_page(path.read_text(encoding="utf-8"))
        kind = str(page.meta.get("type") or "")
        body_text = SECTIONS.split(page.body)[0]
        page_words.append(content_words(plain(body_text)))
        if kind not in ("source", "answer") and "## Sources" in page.body:
            listed = {c for c, _ in parse_citations(page.body.split("## Sources", 1)[1])}
            shown = {c for c, _ in parse_citations(body_text)}
            notes += len(listed)
            kept += len(listed & shown)
        for para in _prose(page.body):
            for sentence, cited in cited_sentences(para):
                if len(content_words(plain(sentence))) < 2:
                    continue
                said += 1
                cites += len(cited)
                wide += sum(c.end - c.start + 1 > WIDE for c in cited)
                if cited and all(c.end - c.start + 1 <= WIDE for c in cited):
                    line_cited += 1
                evidence = [line for c in cited for line in _lines(root, c, cache)]
                if not cited or not judge(sentence, evidence).ok:
                    unsupported += 1
    content = carried = 0
    for src in sorted((root / "sources").rglob("*")):
        if not src.is_file():
            continue
        for line in src.read_text(encoding="utf-8", errors="replace").splitlines():
            words = content_words(line)
            if line.lstrip().startswith("#") or len(words) < 3:
                continue
            content += 1
            if any(100 * len(words & held) >= CARRIED * len(words) for held in page_words):
                carried += 1
    pct = lambda a, b: round(100.0 * a / b, 1) if b else None  # noqa: E731
    return {
        "notes_kept_pct": pct(kept, notes),
        "notes": [kept, notes],
        "sentences": said,
        "line_cited_pct": pct(line_cited, said),
        "unsupported_pct": pct(unsupported, said),
        "citations_over_5_lines_pct": pct(wide, cites),
        "source_lines_carried_pct": pct(carried, content),
        "source_content_lines": content,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("project", type=Path)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    figures = measure(args.project)
    if args.json:
        print(json.dumps(figures))
        return
    for key, value in figures.items():
        print(f"{key:28} {value}")


if __name__ == "__main__":
    main()
