"""The model-based lint rules, run only with `wikic lint --llm`:

- unsupported-claim: a prose paragraph that its cited source lines do not entail
  (one call per paragraph);
- contradiction: statements of pages drawing on the same source that cannot
  both be true (one call per source, statements in chunks).

Each answer is cached in state.db under a key over everything the call reads
(rendered messages, response schema, model and its parameters, stage version),
as build actions are: a second lint of an unchanged wiki makes no model call.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from wikic.backends import Backend, model_id
from wikic.backends.base import Request
from wikic.backends.structured import Invalid, complete_json
from wikic.config import Schema
from wikic.errors import BadOutput
from wikic.hashing import json_digest
from wikic.lint.citations import citation_problem
from wikic.lint.context import Context, Finding, SourceText
from wikic.privacy.local import LocalOnly, is_remote
from wikic.prompts.loader import Prompts
from wikic.state import State
from wikic.wiki.blocks import Block
from wikic.wiki.overlap import content_words, plain
from wikic.wiki.page import Page

VERSION = {"lint_unsupported": 1, "lint_contradiction": 1}
UNUSABLE = {"unusable": True}
MAX_CLAIM_CHARS = 600
MAX_EVIDENCE_LINES = 40
MAX_STATEMENTS = 12  # per call: small models lose track of longer lists
MAX_STATEMENT_CHARS = 300

SUPPORT_SCHEMA = {
    "type": "object",
    "properties": {"supported": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["supported", "reason"],
}
CONTRADICTION_SCHEMA = {
    "type": "object",
    "properties": {
        "contradictions": {
            "type": "array",
            "maxItems": 8,
            "items": {
                "type": "object",
                "properties": {
                    "a": {"type": "integer"},
                    "b": {"type": "integer"},
                    "why": {"type": "string"},
                },
                "required": ["a", "b", "why"],
            },
        }
    },
    "required": ["contradictions"],
}


class _Asker:
    """Renders a lint prompt, answers it from the cache or the model, caches new answers."""

    def __init__(self, ctx: Context, factory: Callable[[Schema], Backend] | None) -> None:
        from wikic.backends import make_backend

        self.ctx = ctx
        self.prompts = Prompts(ctx.project.root)
        self.model = [model_id(ctx.schema.model, ctx.project.root), ctx.schema.model.params()]
        self.factory = factory or (lambda s: make_backend(s.model, ctx.project.root))
        self.backend: Backend | None = None
        self.state = State.open(ctx.project.state_path)
        self.calls = 0
        self.unusable = 0

    def ask(
        self,
        stage: str,
        make_validator: Callable[[str], Callable[[Any], Any]],
        schema: dict[str, Any],
        **context: Any,
    ) -> Any:
        """The validated answer, or None when the model's output stayed unusable.

        `make_validator` gets the system prompt, so that validators can refuse a
        reason copied from the instructions (small models parrot them).
        An unusable answer is cached too: the same call would give it again."""
        cfg = self.ctx.schema.model
        request = Request(
            self.prompts.render(stage, title=self.ctx.schema.title, **context),
            schema,
            max_tokens=min(cfg.max_tokens, 256),
            temperature=cfg.temperature,
        )
        validate = make_validator(request.messages[0]["content"])
        payload = {
            "stage": stage,
            "version": VERSION[stage],
            "model": self.model,
            "messages": request.messages,
            "schema": schema,
            "max_tokens": request.max_tokens,
        }
        key = "lint:" + json_digest(payload)
        output = self.state.cached(key)
        if output is None:
            self.backend = self.backend or self.factory(self.ctx.schema)
            self.calls += 1
            try:
                output, usage = complete_json(self.backend, request, validate)
                self.state.put_cache(key, stage, output, usage.prompt_tokens, usage.completion_tokens)
            except BadOutput:
                output = UNUSABLE
                self.state.put_cache(key, stage, output, 0, 0)
        if output == UNUSABLE:
            self.unusable += 1
            return None
        return output


# --- unsupported-claim ---------------------------------------------------------------
def _own_words(text: Any, instructions: str) -> str:
    """The text, or "" when it is empty or copied from the instructions."""
    said = " ".join(str(text or "").split())[:200]
    return "" if not said.strip(" .") or said.casefold().strip(" .") in instructions.casefold() else said


def _support_validator(instructions: str) -> Callable[[Any], dict[str, Any]]:
    def validate(data: Any) -> dict[str, Any]:
        if not isinstance(data, dict) or not isinstance(data.get("supported"), bool):
            raise Invalid('expected {"supported": true or false, "reason": "..."}')
        reason = _own_words(data.get("reason"), instructions)
        if not data["supported"] and not reason:
            raise Invalid("say in your own words which part of the claim the lines do not support")
        return {"supported": data["supported"], "reason": reason}

    return validate


def _shareable(ctx: Context) -> list[Page]:
    """The pages the model may read: with a remote model, none built from a local-only source."""
    local = LocalOnly(ctx.schema.privacy.local_only if is_remote(ctx.schema.model) else [])
    pages = sorted(ctx.wiki.pages.values(), key=lambda p: p.rel)
    return [p for p in pages if not local.covers_any(p.sources)] if local else pages


def _evidence_lines(ctx: Context, block: Block) -> list[tuple[str, int, str]]:
    lines: list[tuple[str, int, str]] = []
    for ref in block.citations:
        cite = ref.citation
        text = ctx.sources.get(cite.source)
        if citation_problem(ctx, cite) is None and isinstance(text, SourceText):
            for n in range(cite.start, cite.end + 1):
                item = (cite.source, n, text.lines[n - 1])
                if item not in lines and text.lines[n - 1].strip():
                    lines.append(item)
    return lines[:MAX_EVIDENCE_LINES]


def unsupported(ctx: Context, asker: _Asker) -> Iterator[Finding]:
    for page in _shareable(ctx):
        for block in page.prose():
            claim = plain(block.text)[:MAX_CLAIM_CHARS]
            lines = _evidence_lines(ctx, block)
            if not lines or len(content_words(claim)) < 3:
                continue
            answer = asker.ask(
                "lint_unsupported", _support_validator, SUPPORT_SCHEMA, claim=claim, lines=lines
            )
            if answer is not None and not answer["supported"]:
                reason = answer["reason"]
                yield Finding(
                    "unsupported-claim",
                    page.rel,
                    block.line,
                    f"the model finds this paragraph not entailed by the lines it cites: {reason}",
                )


# --- contradiction -----------------------------------------------------------------
@dataclass(frozen=True)
class _Statement:
    page: Page
    block: Block
    text: str


def _statements_by_source(ctx: Context) -> dict[str, list[_Statement]]:
    by_source: dict[str, list[_Statement]] = defaultdict(list)
    for page in _shareable(ctx):
        for source in page.sources:
            for block in page.prose():
                text = plain(block.text)[:MAX_STATEMENT_CHARS]
                if len(content_words(text)) >= 3:
                    by_source[source].append(_Statement(page, block, text))
    return {s: items for s, items in sorted(by_source.items()) if len({i.page.rel for i in items}) > 1}


def _contradiction_validator(n: int) -> Callable[[str], Callable[[Any], dict[str, Any]]]:
    """Keeps the pairs that name two different statements and say why in the model's own words."""

    def make(instructions: str) -> Callable[[Any], dict[str, Any]]:
        def validate(data: Any) -> dict[str, Any]:
            if not isinstance(data, dict) or not isinstance(data.get("contradictions"), list):
                raise Invalid('expected {"contradictions": [{"a": n, "b": n, "why": "..."}]}')
            pairs: dict[tuple[int, int], str] = {}
            for item in data["contradictions"]:
                if not isinstance(item, dict):
                    continue
                a, b, why = item.get("a"), item.get("b"), _own_words(item.get("why"), instructions)
                if (
                    isinstance(a, int)
                    and isinstance(b, int)
                    and 1 <= a <= n
                    and 1 <= b <= n
                    and a != b
                    and why
                ):
                    pairs.setdefault((min(a, b), max(a, b)), why)
            return {"contradictions": [{"a": a, "b": b, "why": why} for (a, b), why in pairs.items()]}

        return validate

    return make


def contradictions(ctx: Context, asker: _Asker) -> Iterator[Finding]:
    seen: set[tuple[str, int, str, int]] = set()
    for source, statements in _statements_by_source(ctx).items():
        for start in range(0, len(statements), MAX_STATEMENTS):
            chunk = statements[start : start + MAX_STATEMENTS]
            shown = [{"number": i + 1, "page": s.page.title, "text": s.text} for i, s in enumerate(chunk)]
            answer = asker.ask(
                "lint_contradiction",
                _contradiction_validator(len(chunk)),
                CONTRADICTION_SCHEMA,
                source=source,
                statements=shown,
            )
            for item in (answer or {}).get("contradictions", []):
                a, b = sorted(
                    (chunk[item["a"] - 1], chunk[item["b"] - 1]), key=lambda s: (s.page.rel, s.block.line)
                )
                key = (a.page.rel, a.block.line, b.page.rel, b.block.line)
                if a.page.rel == b.page.rel or key in seen:
                    continue
                seen.add(key)
                why = item["why"]
                yield Finding(
                    "contradiction",
                    a.page.rel,
                    a.block.line,
                    f"the model finds this incompatible with {b.page.rel}:{b.block.line} "
                    f"(both from {source}): {why}",
                    also=(b.page.rel,),
                )


def model_findings(
    ctx: Context, rules: list[str], factory: Callable[[Schema], Backend] | None
) -> tuple[list[Finding], int, int]:
    """Findings of the model rules asked for, the number of model calls, and of unusable answers."""
    asker = _Asker(ctx, factory)
    try:
        found: list[Finding] = []
        if "unsupported-claim" in rules:
            found.extend(unsupported(ctx, asker))
        if "contradiction" in rules:
            found.extend(contradictions(ctx, asker))
        return found, asker.calls, asker.unusable
    finally:
        asker.state.close()
