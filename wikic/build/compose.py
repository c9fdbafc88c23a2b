"""A topic page's text from its notes and the model's prose (no model call): faithful
before fluent, and no note lost.

In prose mode the model's sentences that the shared check supports are kept, each cited
to the few notes it draws on; every note no kept sentence uses follows as itself. In notes
mode (a small model, or prose that mostly failed the check) the page is its notes' own
sentences, deduplicated, grouped by source. Either way the page opens with the note that
best defines its topic, and notes beyond write.max_notes are listed under "More notes".
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from rapidfuzz import fuzz

from wikic.build.plan import Claim, PagePlan
from wikic.hashing import quick_fingerprint
from wikic.wiki.overlap import content_words, plain
from wikic.wiki.support import MAX_NOVEL, check_against, sentences

if TYPE_CHECKING:
    from wikic.state import State

DEFINING_VERB = re.compile(
    r"(?:is|are|was|were|means|refers|stops|describes|lets|makes|lists|gives|has|have)\b", re.I
)
PRONOUN = re.compile(r"(it|its|this|these|that|those|they|he|she|such)\b", re.I)
VERSION = 1  # bump when compose makes other text from the same inputs (Composer's key)
DUPLICATE = 95  # rapidfuzz token_set_ratio at which two notes say the same thing
NUMBERS = re.compile(r"\d+")
ARTICLE = re.compile(r"^(the|a|an)\s+")
ASIDE = re.compile(r"^\([^)]*\)\s*")


def _names(page: PagePlan) -> tuple[str, ...]:
    return _folded_names(page.title, tuple(page.aliases))


@lru_cache(maxsize=4096)  # asked for each of a page's notes
def _folded_names(title: str, aliases: tuple[str, ...]) -> tuple[str, ...]:
    names = [title, *aliases]
    stripped = [re.sub(r"^(the|a|an)\s+", "", n, flags=re.I) for n in names]
    return tuple(sorted({n.casefold() for n in names + stripped if n}, key=len, reverse=True))


@lru_cache(maxsize=4096)  # one pattern a page, not one a name for each of its notes
def _mention(names: tuple[str, ...]) -> re.Pattern[str]:
    """Any of the names as a whole word."""
    return re.compile("|".join(rf"\b{re.escape(n)}\b" for n in names))


def defines(text: str, page: PagePlan) -> int:
    """How plainly a sentence introduces the page's subject: 3 "X is/stops ...", 2 opens with
    X, 1 names X early, 0 otherwise, -1 makes no sense alone (opens with a pronoun)."""
    words = plain(text).strip()
    if PRONOUN.match(words):
        return -1
    folded = ARTICLE.sub("", words.casefold())
    for name in _names(page):
        if folded.startswith(name):
            rest = words[len(words) - len(folded) + len(name) :].lstrip(" ,")
            return 3 if DEFINING_VERB.match(ASIDE.sub("", rest)) else 2
    names = _names(page)
    return 1 if names and _mention(names).search(folded[:80]) else 0


def _under_own_heading(claim: Claim, page: PagePlan) -> bool:
    """A note in a section headed with the page's name ("## Content hashing") is about it."""
    section = ARTICLE.sub("", plain(claim.section).strip().casefold())
    return bool(section) and section in _names(page)


def definer(page: PagePlan, indexes: list[int]) -> int | None:
    """The note (an index into page.claims) that best defines the topic: the plainest
    definition (a note under a heading naming the topic counts as opening with it), early in
    its source, with the longest defining clause."""
    scored = []
    for i in indexes:
        claim = page.claims[i]
        score = defines(claim.text, page)
        if score in (0, 1) and _under_own_heading(claim, page):
            score = 2
        scored.append((score, -claim.start, len(claim.text), -i))
    best = max(scored, default=None)
    return -best[3] if best and best[0] > 0 else None


def _same(a: str, b: str) -> bool:
    """Near-duplicates: "Section 5" and "Section 59" are not."""
    return _numbers(a) == _numbers(b) and fuzz.token_set_ratio(a, b) >= DUPLICATE


@lru_cache(maxsize=4096)  # each note is compared with every other note of its page
def _numbers(text: str) -> tuple[str, ...]:
    return tuple(NUMBERS.findall(text))


def _dedupe(page: PagePlan, indexes: list[int]) -> list[list[int]]:
    """Notes grouped with their near-duplicates: the first of each group is shown, all cited."""
    groups: list[list[int]] = []
    for i in indexes:
        text = page.claims[i].text
        same = next((g for g in groups if _same(text, page.claims[g[0]].text)), None)
        if same is not None and len(content_words(text)) <= len(content_words(page.claims[same[0]].text)):
            same.append(i)
        else:
            groups.append([i])
    return groups


def _note_sentence(page: PagePlan, group: list[int]) -> dict[str, Any]:
    return {"text": page.claims[group[0]].text, "notes": [i + 1 for i in group]}


def notes_paragraphs(page: PagePlan, indexes: list[int]) -> list[list[dict[str, Any]]]:
    """The notes as paragraphs, one per source in the order given, duplicates folded."""
    paragraphs: dict[str, list[dict[str, Any]]] = {}
    for group in _dedupe(page, indexes):
        paragraphs.setdefault(page.claims[group[0]].source, []).append(_note_sentence(page, group))
    return list(paragraphs.values())


def _prose(
    page: PagePlan, output: dict[str, Any], threshold: float
) -> tuple[list[list[dict[str, Any]]], int]:
    """The model's sentences the check supports, each citing the notes it draws on; and how
    many sentences there were."""
    texts = [c.text for c in page.claims[: page.in_text]]
    paragraphs, total = [], 0
    for para in output.get("paragraphs", []):
        kept = []
        for sentence in sentences(str(para.get("text") or "")):
            if len(content_words(plain(sentence))) < 2:
                continue
            total += 1
            chosen, verdict = check_against(sentence, texts, threshold, MAX_NOVEL)
            if verdict.ok:
                kept.append({"text": sentence, "notes": [i + 1 for i in chosen]})
        if kept:
            paragraphs.append(kept)
    return paragraphs, total


def compose(page: PagePlan, output: dict[str, Any] | None, threshold: float) -> dict[str, Any]:
    """The page's text: {"mode", "paragraphs": [[{"text", "notes"}]], "more": [note numbers],
    "kept", "total"}; `output` is the model's validated answer, or None in notes mode."""
    in_text = list(range(min(page.in_text or len(page.claims), len(page.claims))))
    mode, paragraphs = "notes", list[list[dict[str, Any]]]()
    if output is not None and not output.get("fallback"):
        paragraphs, total = _prose(page, output, threshold)
        kept = sum(len(p) for p in paragraphs)
        mode = "prose" if kept and kept * 2 >= total else "notes"
        paragraphs = paragraphs if mode == "prose" else []
    used = {n - 1 for p in paragraphs for s in p for n in s["notes"]}
    first = definer(page, in_text)
    rest = [i for i in in_text if i not in used and i != first]
    if first is not None and mode == "notes":
        rest.insert(0, first)  # the page opens with it, in its source's paragraph
    elif first is not None and defines(paragraphs[0][0]["text"], page) < 3:
        # the definition opens the page; prose that only restates it goes
        paragraphs = [[x for x in p if set(x["notes"]) != {first + 1}] for p in paragraphs]
        paragraphs = [[_note_sentence(page, [first])]] + [p for p in paragraphs if p]
    elif first is not None and first not in used:
        rest.insert(0, first)
    paragraphs += notes_paragraphs(page, rest)
    more = [i + 1 for i in range(len(in_text), len(page.claims))]
    shown = {n for p in paragraphs for s in p for n in s["notes"]} | set(more)
    return {
        "mode": mode,
        "fallback": bool(output and output.get("fallback")),
        "paragraphs": paragraphs,
        "more": more,
        "kept": len(shown),
        "total": len(page.claims),
    }


Compose = Callable[[PagePlan, dict[str, Any] | None, float], dict[str, Any]]


def compose_pages(
    pages: Mapping[str, PagePlan],
    written: dict[str, Any],
    asked: set[str],
    threshold: float,
    make: Compose = compose,  # the build passes one that remembers its results (pipeline.py)
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Every topic page's text, and the build report's figures: notes kept / total, and the
    pages by mode. A page the model was asked to write and failed is left out (kept as it is)."""
    out: dict[str, dict[str, Any]] = {}
    modes: Counter[str] = Counter()
    kept = total = 0
    for pid, page in pages.items():
        if page.type == "source" or not page.claims or (pid in asked and pid not in written):
            continue
        out[pid] = composed = make(page, written.get(pid), threshold)
        modes["fallback" if composed["fallback"] else composed["mode"]] += 1
        kept += composed["kept"]
        total += composed["total"]
    return out, {"notes": {"kept": kept, "total": total}, "pages_by_mode": dict(sorted(modes.items()))}


class Composer:
    """compose (compose.py) remembered by what it reads, so that an edit composes only the
    pages whose notes or prose changed (--force composes every page again). `keys`: each
    page's key, which assemble takes for all that the page's notes and text are made of.
    `only`: the pages an edit changed (build/quick.py), whose rows alone are read; the
    others are as the last build composed them, and so are their figures."""

    def __init__(self, state: State, force: bool, only: list[str] | None = None) -> None:
        self.state, self.only = state, only
        self.saved = {} if force else state.composed() if only is None else state.composed_of(only)
        self.changed: dict[str, tuple[str, str]] = {}
        self.keys: dict[str, str] = {}
        self.others = 0  # with `only`: the pages composed as the last build composed them (save())

    def __call__(self, page: PagePlan, output: dict[str, Any] | None, threshold: float) -> dict[str, Any]:
        claims = list(map(tuple, page.claims))  # text, source, start, end, section
        key = quick_fingerprint(  # by repr: 60,000 notes at 10,000 sources
            [
                VERSION,
                page.id,
                page.title,
                page.type,
                page.aliases,
                claims,
                page.in_text,
                output,
                threshold,
            ]
        )
        self.keys[page.id] = key
        saved = self.saved.get(page.id)
        if saved is not None and saved[0] == key:
            text: dict[str, Any] = json.loads(saved[1])
            return text
        text = compose(page, output, threshold)
        self.changed[page.id] = (key, json.dumps(text, ensure_ascii=False))
        return text

    def save(self, composed: dict[str, Any], figures: dict[str, Any]) -> dict[str, Any]:
        """The rows of the pages composed, none of those that were not (a row is a page the
        figures count); and the build's figures (compose_pages), kept for the next: with
        `only`, the last build's, less what the changed pages counted then, plus now."""
        gone = [pid for pid in self.saved if pid not in composed]
        if self.only is not None:
            figures = _figures(
                self.state.kept("page_text"), [json.loads(t) for _, t in self.saved.values()], figures
            )
            self.others = sum(figures["pages_by_mode"].values()) - len(composed)
        if self.changed or gone:
            self.state.set_composed(self.changed, gone)
        self.state.keep("page_text", json.dumps(figures).encode())
        return figures


def _figures(kept: bytes | None, before: list[dict[str, Any]], now: dict[str, Any]) -> dict[str, Any]:
    """The last build's figures (compose_pages), less what `before` counted, plus `now`."""
    last = json.loads(kept or b"{}")
    notes = dict(last.get("notes", {"kept": 0, "total": 0}))
    modes: Counter[str] = Counter(last.get("pages_by_mode", {}))
    for text in before:
        notes["kept"] -= text["kept"]
        notes["total"] -= text["total"]
        modes["fallback" if text["fallback"] else text["mode"]] -= 1
    notes = {k: notes[k] + now["notes"][k] for k in ("kept", "total")}
    modes.update(now["pages_by_mode"])
    return {"notes": notes, "pages_by_mode": dict(sorted((m, n) for m, n in modes.items() if n > 0))}
