"""The write stage: one model action per topic page, turning the page's notes
(its claims) into short paragraphs, each sentence checked against the notes it uses
(in notes mode, for a small model, there is none: see compose.py)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rapidfuzz import fuzz

from wikic.backends.base import Request
from wikic.backends.structured import Invalid
from wikic.build.actions import Action
from wikic.build.plan import PagePlan, write_mode
from wikic.hashing import fingerprint
from wikic.prompts.loader import Prompts
from wikic.wiki.support import MAX_NOVEL, check_against, sentences

if TYPE_CHECKING:
    from wikic.config import Schema

VERSION = 2  # of the validated answer: bump when the same answer would validate differently
MAX_PARAGRAPHS = 4
MAX_NOTE_CHARS = 400  # a note as the model sees it
MAX_PARAGRAPH_CHARS = 600
CITE_KEEP = 50  # rapidfuzz token_set_ratio: a cited note this close is plausibly used
CITE_ADD = 70  # ...and an uncited note this close is certainly used
LIST_MARK = re.compile(r"^(?:\d+[.)]|[-*+•])\s+")  # "1. text" would render as a list, not prose
HTML = re.compile(r"<[^>\n]*>")
NON_WORD = re.compile(r"[\W_]+")


def response_schema(n_claims: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "paragraphs": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_PARAGRAPHS,
                "items": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string", "maxLength": MAX_PARAGRAPH_CHARS},
                        "cites": {"type": "array", "items": {"type": "integer"}, "maxItems": n_claims},
                    },
                    "required": ["text", "cites"],
                },
            }
        },
        "required": ["paragraphs"],
    }


def clean_prose(text: str) -> str:
    """Prose as plain paragraphs: no HTML, no headings, no front matter fences."""
    text = HTML.sub("", text)
    lines = []
    for line in text.replace("\r", "").split("\n"):
        line = line.strip()
        if line.startswith("---") or line.startswith("==="):
            continue
        lines.append(LIST_MARK.sub("", line.lstrip("#").strip()))
    return " ".join(" ".join(lines).split())[:MAX_PARAGRAPH_CHARS]


def check_cites(text: str, proposed: list[Any], claims: list[str]) -> list[int]:
    """The notes a paragraph really draws on: the model's citations that overlap it,
    plus the note it overlaps most when the model missed that one."""
    scores = [fuzz.token_set_ratio(text, claim) for claim in claims]
    cited = {
        c for c in proposed if isinstance(c, int) and 1 <= c <= len(claims) and scores[c - 1] >= CITE_KEEP
    }
    best = scores.index(max(scores)) + 1
    if not cited or scores[best - 1] >= CITE_ADD:
        cited.add(best)
    return sorted(cited)


def _bare(text: str, title: str) -> bool:
    """ "...", "[2]" or the page's own title: not a paragraph."""
    words = NON_WORD.sub(" ", text).casefold().split()
    return sum(ch.isalpha() for ch in text) < 3 or words == NON_WORD.sub(" ", title).casefold().split()


def _supported(text: str, claims: list[str], threshold: int) -> tuple[str, list[int], list[str]]:
    """The paragraph's sentences that the shared check supports against the notes that carry
    them; the notes they use; and why the others failed."""
    kept: list[str] = []
    cites: set[int] = set()
    failed: list[str] = []
    for sentence in sentences(text):
        chosen, verdict = check_against(sentence, claims, threshold, MAX_NOVEL)
        if verdict.ok:
            kept.append(sentence)
            cites.update(i + 1 for i in chosen)
        else:
            failed.append(
                f"{verdict.score:.0f}%" if verdict.reason.startswith("its lines") else verdict.reason
            )
    return " ".join(kept), sorted(cites), failed


def validator(claims: list[str], title: str = "", threshold: int = 0) -> Any:
    """Paragraphs with text, citing the notes they use. Each sentence is judged by the shared
    check against the notes that carry it best; one its notes do not support is dropped."""

    def validate(data: Any) -> dict[str, Any]:
        if not isinstance(data, dict) or not isinstance(data.get("paragraphs"), list):
            raise Invalid('expected an object with "paragraphs"')
        paragraphs, unsupported = [], []
        for item in data["paragraphs"][:MAX_PARAGRAPHS]:
            if not isinstance(item, dict):
                continue
            text = clean_prose(str(item.get("text") or ""))
            if _bare(text, title):
                continue
            if threshold <= 0:
                paragraphs.append({"text": text, "cites": check_cites(text, item.get("cites") or [], claims)})
                continue
            kept, cites, failed = _supported(text, claims, threshold)
            unsupported += failed
            if kept and not _bare(kept, title):
                paragraphs.append({"text": kept, "cites": cites})
        if unsupported and not paragraphs:
            scores = [u for u in unsupported if u.endswith("%")] or ["0%"]
            other = [u for u in unsupported if not u.endswith("%")]
            raise Invalid(
                f"the notes hold only {', '.join(scores)} of the paragraphs' words; "
                "write only what the notes say, in their words"
                + (f" (a sentence {other[0]})" if other else "")
            )
        if not paragraphs:
            raise Invalid("no paragraph had text")
        return {"paragraphs": paragraphs}

    return validate


def write_actions(
    pages: Mapping[str, PagePlan], schema: Schema, prompts: Prompts, model_fp: str
) -> dict[str, Action]:
    """The model actions of this build's topic pages: none in notes mode."""
    if write_mode(schema) == "notes":
        return {}
    return {
        pid: write_action(p, schema, prompts, model_fp)
        for pid, p in pages.items()
        if p.type != "source" and p.claims
    }


def write_action(page: PagePlan, schema: Schema, prompts: Prompts, model_fp: str) -> Action:
    claims = [c.text[:MAX_NOTE_CHARS] for c in page.claims[: page.in_text or len(page.claims)]]
    described = {t.name: t.description for t in schema.page_types}

    def render() -> Request:
        messages = prompts.render(
            "write",
            title=schema.title,
            scope=schema.scope,
            page_title=page.title,
            page_type=page.type,
            type_description=described.get(page.type, ""),
            rules=schema.rules,
            max_paragraphs=MAX_PARAGRAPHS,
            claims=claims,
        )
        return Request(
            messages, response_schema(len(claims)), schema.model.max_tokens, schema.model.temperature
        )

    return Action(
        id=f"write:{page.id}",
        stage="write",
        label=f"write {page.type}: {page.title}",
        inputs={
            "claims": fingerprint([page.title, page.type, claims]),
            "template": fingerprint([prompts.stage_hash("write"), VERSION]),
            "model": model_fp,
            "rules": fingerprint(schema.rules),
            "schema": fingerprint([schema.title, schema.scope, described.get(page.type, "")]),
        },
        render=render,
        validate=validator(claims, page.title, schema.lint.citation_threshold),
        fallback=lambda problem: notes_as_prose(claims, problem),
    )


def notes_as_prose(claims: list[str], problem: str) -> dict[str, Any]:
    """When the model's paragraphs stay unusable: the page's notes themselves, each citing
    its source lines. Source text, so as verifiable as any page, if not as readable."""
    return {
        "paragraphs": [{"text": claim, "cites": [n]} for n, claim in enumerate(claims, start=1)],
        "fallback": f"the model's answers stayed unusable {problem}; the page lists its notes as they are",
    }
