"""The contract every backend keeps, run against each of them, so that no backend
(least of all a fake one) drifts from the others."""

from __future__ import annotations

import json
from typing import Any

import pytest

from wikic.backends.base import Backend, Completion, Request, stream_or_complete

# Each entry names a fixture that returns a ready backend. Add a backend here and
# the whole contract runs against it.
CONTRACT_BACKENDS = [
    pytest.param("llama_backend", id="llama", marks=pytest.mark.model),
    pytest.param("openai_backend", id="openai", marks=pytest.mark.server),
]

TOPICS = {
    "type": "object",
    "properties": {"topics": {"type": "array", "items": {"type": "string"}}},
    "required": ["topics"],
}
SOURCE = "Cats and dogs are popular pets. Cats sleep a lot; dogs need daily walks."


@pytest.fixture(params=CONTRACT_BACKENDS)
def backend(request: pytest.FixtureRequest) -> Backend:
    found: Backend = request.getfixturevalue(request.param)
    return found


def ask(text: str, **options: Any) -> Request:
    return Request(messages=[{"role": "user", "content": text}], **options)


def test_free_text_answer_has_text_and_usage(backend: Backend) -> None:
    result = backend.complete(ask("Name one pet animal.", max_tokens=24))
    assert isinstance(result, Completion)
    assert result.text.strip()
    assert result.prompt_tokens > 0
    assert result.completion_tokens > 0
    assert result.cached_tokens >= 0
    assert result.finish_reason in {"stop", "length"}


def test_a_schema_constrains_the_answer_to_json(backend: Backend) -> None:
    request = Request(
        messages=[
            {"role": "system", "content": "Answer with JSON only."},
            {"role": "user", "content": f"List the topics of this text:\n{SOURCE}"},
        ],
        schema=TOPICS,
        max_tokens=96,
    )
    result = backend.complete(request)
    data = json.loads(result.text)
    assert isinstance(data, dict)
    assert isinstance(data["topics"], list)
    assert all(isinstance(t, str) for t in data["topics"])


def test_model_id_is_a_stable_non_empty_string(backend: Backend) -> None:
    assert isinstance(backend.model_id, str)
    assert backend.model_id
    first = backend.model_id
    backend.complete(ask("Hi.", max_tokens=4))
    assert backend.model_id == first


def test_the_same_request_gives_the_same_answer(backend: Backend) -> None:
    """Temperature 0 and a fixed seed: cached responses stay true to the model."""
    request = ask("Say one word about the sea.", max_tokens=12)
    assert backend.complete(request).text == backend.complete(request).text


def test_stream_pieces_join_into_the_final_text(backend: Backend) -> None:
    heard: list[str] = []
    final = stream_or_complete(backend, ask("Count from one to five.", max_tokens=24), heard.append)
    assert isinstance(final, Completion)
    assert heard
    assert "".join(heard) == final.text
    assert final.text.strip()
    assert final.completion_tokens > 0
