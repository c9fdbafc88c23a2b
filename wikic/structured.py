"""Asking a model for JSON: constrained by a schema, parsed, validated, and
repaired by telling the model what was wrong, a bounded number of times."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

from wikic.backends.base import Backend, Completion, Request
from wikic.errors import BadOutput

T = TypeVar("T")


class Invalid(ValueError):
    """Raised by a validator: the output is unusable, and why (shown to the model)."""


def parse_json(text: str) -> Any:
    """The JSON value in a model's answer, tolerating code fences and chatter around it."""
    text = text.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fence:
        text = fence.group(1).strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        start = text.find("{")
        end = text.rfind("}")
        if 0 <= start < end:
            try:
                return json.loads(text[start : end + 1])
            except json.JSONDecodeError:
                pass
    snippet = text[:80].replace("\n", " ")
    raise Invalid(f"the answer is not valid JSON (it starts {snippet!r})")


def complete_json(
    backend: Backend, request: Request, validate: Callable[[Any], T], attempts: int = 3
) -> tuple[T, Completion]:
    """Call until `validate(parse_json(text))` succeeds; usage is summed over tries."""
    total = Completion(text="")
    req = request
    problem = ""
    for _ in range(max(1, attempts)):
        result = backend.complete(req)
        total.prompt_tokens += result.prompt_tokens
        total.completion_tokens += result.completion_tokens
        total.cached_tokens += result.cached_tokens
        total.text = result.text
        try:
            if result.finish_reason == "length" and not result.text.rstrip().endswith("}"):
                raise Invalid("the answer was cut off; give a shorter answer")
            return validate(parse_json(result.text)), total
        except Invalid as exc:
            problem = str(exc)
        repair = [
            {"role": "assistant", "content": result.text[:2000]},
            {"role": "user", "content": f"That answer is unusable: {problem}. Reply again with JSON only, "
             "following the requested structure."},
        ]
        req = replace(request, messages=list(request.messages) + repair)
    raise BadOutput(f"the model's output stayed unusable after {attempts} tries: {problem}")
