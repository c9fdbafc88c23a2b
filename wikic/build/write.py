"""The write stage: one model action per topic page, turning the page's notes
(its claims) into short paragraphs, each citing the notes it uses."""

from __future__ import annotations

import re
from typing import Any

from rapidfuzz import fuzz

from wikic.backends.base import Request
from wikic.backends.structured import Invalid
from wikic.build.actions import Action
from wikic.build.plan import PagePlan
from wikic.config import Schema
from wikic.hashing import fingerprint
from wikic.prompts.loader import Prompts
from wikic.wiki.overlap import content_words, support

MAX_PARAGRAPHS = 4
MAX_PARAGRAPH_CHARS = 600
CITE_KEEP = 50  # rapidfuzz token_set_ratio: a cited note this close is plausibly used
CITE_ADD = 70  # ...and an uncited note this close is certainly used
LIST_MARK = re.compile(r"^(?:\d+[.)]|[-*+•])\s+")  # "1. text" would render as a list, not prose
HTML = re.compile(r"<[^>\n]*>")


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
    words = re.sub(r"[\W_]+", " ", text).casefold().split()
    return sum(ch.isalpha() for ch in text) < 3 or words == re.sub(r"[\W_]+", " ", title).casefold().split()


def validator(claims: list[str], title: str = "", threshold: int = 0) -> Any:
    """Paragraphs with text, citing the notes they use; one whose cited notes hold fewer than
    `threshold`% of its words (lint's bad-citation measure) says what no note says: dropped."""

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
            cites = check_cites(text, item.get("cites") or [], claims)
            score = support(text, content_words(" ".join(claims[c - 1] for c in cites)))
            if score < threshold:
                unsupported.append(f"{score:.0f}%")
                continue
            paragraphs.append({"text": text, "cites": cites})
        if unsupported and not paragraphs:
            raise Invalid(
                f"the notes hold only {', '.join(unsupported)} of the paragraphs' words; "
                "write only what the notes say, in their words"
            )
        if not paragraphs:
            raise Invalid("no paragraph had text")
        return {"paragraphs": paragraphs}

    return validate


def write_action(page: PagePlan, schema: Schema, prompts: Prompts, model_fp: str) -> Action:
    claims = [c.text for c in page.claims]
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
            "template": prompts.stage_hash("write"),
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
