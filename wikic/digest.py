"""The digest stage: one model action per source part, returning a summary and
the topics the part covers, each anchored to the line numbers that support it.

The model only names topics and points at lines; claim text is then taken from
the source itself, so every claim is verifiable by construction.
"""

from __future__ import annotations

from typing import Any

from wikic.actions import Action
from wikic.backends.base import Request
from wikic.config import Schema, fingerprint
from wikic.pages import clean_title
from wikic.prompts import Prompts
from wikic.sources import Part, Source, split_parts, text_hash
from wikic.structured import Invalid

MAX_TOPICS = 8
MAX_LINES = 12


def response_schema(types: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "summary": {"type": "string", "maxLength": 600},
            "topics": {
                "type": "array",
                "maxItems": MAX_TOPICS,
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "maxLength": 80},
                        "type": {"type": "string", "enum": types},
                        "lines": {"type": "array", "items": {"type": "integer"}, "maxItems": MAX_LINES},
                    },
                    "required": ["name", "type", "lines"],
                },
            },
        },
        "required": ["summary", "topics"],
    }


def to_ranges(numbers: list[int]) -> list[list[int]]:
    """[3, 4, 5, 9] -> [[3, 5], [9, 9]]"""
    ranges: list[list[int]] = []
    for n in sorted(set(numbers)):
        if ranges and n == ranges[-1][1] + 1:
            ranges[-1][1] = n
        else:
            ranges.append([n, n])
    return ranges


def validator(part: Part, lines: list[str], types: list[str]) -> Any:
    def validate(data: Any) -> dict[str, Any]:
        if not isinstance(data, dict) or not isinstance(data.get("topics"), list):
            raise Invalid('expected an object with "summary" and "topics"')
        summary = " ".join(str(data.get("summary") or "").split())[:600]
        topics = []
        for item in data["topics"][:MAX_TOPICS]:
            if not isinstance(item, dict):
                continue
            name = clean_title(str(item.get("name") or ""), 80)
            numbers = [
                n for n in item.get("lines") or []
                if isinstance(n, int) and part.start <= n <= part.end and lines[n - 1].strip()
            ]
            if not name or not numbers:
                continue
            kind = item.get("type") if item.get("type") in types else types[0]
            topics.append({"name": name, "type": kind, "lines": to_ranges(numbers[:MAX_LINES])})
        if not topics and data["topics"]:
            raise Invalid(f"no topic had a usable name and line numbers between {part.start} and {part.end}")
        return {"summary": summary, "topics": topics}

    return validate


def digest_actions(source: Source, schema: Schema, prompts: Prompts, model_fp: str) -> list[Action]:
    lines = source.lines
    parts = split_parts(lines, schema.sources.part_lines)
    types = schema.type_names()
    schema_fp = fingerprint([schema.title, schema.scope, [t.model_dump() for t in schema.page_types],
                             [t.name for t in schema.topics]])
    actions = []
    for part in parts:
        numbered = [(n, lines[n - 1]) for n in range(part.start, part.end + 1) if n <= len(lines)]
        suffix = "" if len(parts) == 1 else f"#{part.index + 1}"

        def render(part: Part = part, numbered: list[tuple[int, str]] = numbered) -> Request:
            messages = prompts.render(
                "digest",
                title=schema.title,
                scope=schema.scope,
                types=types,
                page_types=schema.page_types,
                pinned=[t.name for t in schema.topics],
                max_topics=MAX_TOPICS,
                path=source.path,
                part_index=part.index,
                part_count=len(parts),
                lines=numbered,
            )
            return Request(messages, response_schema(types), schema.model.max_tokens, schema.model.temperature)

        part_text = "\n".join(line for _, line in numbered)
        actions.append(
            Action(
                id=f"digest:{source.path}{suffix}",
                stage="digest",
                label=f"digest {source.path}{suffix}",
                inputs={
                    "source": text_hash(f"{part.start}:{part.index}/{len(parts)}\n{part_text}"),
                    "template": prompts.stage_hash("digest"),
                    "model": model_fp,
                    "schema": schema_fp,
                },
                render=render,
                validate=validator(part, lines, types),
            )
        )
    return actions


def merge_parts(outputs: list[dict[str, Any]]) -> dict[str, Any]:
    """One digest for a source from its parts' digests."""
    summaries = [o["summary"] for o in outputs if o.get("summary")]
    topics = [t for o in outputs for t in o.get("topics", [])]
    return {"summary": " ".join(summaries[:2]), "topics": topics}
