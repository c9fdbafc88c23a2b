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
    salvaged = close_truncated(text[text.find("{") :]) if "{" in text else None
    if salvaged is not None:
        return salvaged
    snippet = text[:80].replace("\n", " ")
    raise Invalid(f"the answer is not valid JSON (it starts {snippet!r})")


def close_truncated(text: str) -> Any:
    """An answer cut off by the token limit, closed where it stopped.

    Small models loop inside the last string until max_tokens; the fields before
    it are still good. Returns None when no prefix closes into valid JSON.
    """
    stack: list[str] = []
    in_string = escaped = False
    safe_points: list[tuple[int, list[str], bool]] = []
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
            safe_points.append((i, list(stack), False))
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
            safe_points.append((i + 1, list(stack), False))
        elif ch == ",":
            safe_points.append((i, list(stack), False))
    candidates = [(len(text), stack, in_string)] + list(reversed(safe_points))
    for end, open_stack, open_string in candidates[:200]:
        head = text[:end].rstrip().rstrip(",")
        if open_string:
            head = head.rstrip("\\") + '"'
        try:
            return json.loads(head + "".join(reversed(open_stack)))
        except json.JSONDecodeError:
            continue
    return None


def complete_json(
    backend: Backend,
    request: Request,
    validate: Callable[[Any], T],
    attempts: int = 3,
    fallback: Callable[[str], T] | None = None,
) -> tuple[T, Completion]:
    """Call until `validate(parse_json(text))` succeeds; usage is summed over tries.
    When every try fails, `fallback(problem)` (a lesser result made without the
    model, still correct) is the answer if given; else BadOutput."""
    total = Completion(text="", calls=0)
    req = request
    problem = ""
    for _ in range(max(1, attempts)):
        result = backend.complete(req)
        total.calls += 1
        total.prompt_tokens += result.prompt_tokens
        total.completion_tokens += result.completion_tokens
        total.cached_tokens += result.cached_tokens
        total.text = result.text
        try:
            return validate(parse_json(result.text)), total
        except (Invalid, RecursionError) as exc:  # RecursionError: JSON nested too deeply
            problem = str(exc)
        repair = [
            {"role": "assistant", "content": result.text[:2000]},
            {
                "role": "user",
                "content": f"That answer is unusable: {problem}. Reply again with JSON only, "
                "following the requested structure.",
            },
        ]
        req = replace(request, messages=list(request.messages) + repair)
    if fallback is not None:
        return fallback(f"after {total.calls} tries: {problem}"), total
    raise BadOutput(f"the model's output stayed unusable after {attempts} tries: {problem}")
