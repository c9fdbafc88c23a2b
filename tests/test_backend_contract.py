"""The contract every backend keeps, run against each of them, so that no backend
(least of all a fake one) drifts from the others."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import CONTRACT_CONTEXT

from wikic.backends import model_id
from wikic.backends.base import Backend, Completion, PrefixCaching, Request, stream_or_complete
from wikic.config import ModelConfig
from wikic.errors import BackendError, ConfigError

# Each entry names a fixture that returns a ready backend. Add a backend here and
# the whole contract runs against it. The scripted one has no mark: the fast tests run
# the contract against it, so the fake the other tests build with cannot drift.
CONTRACT_BACKENDS = [
    pytest.param("scripted_backend", id="scripted"),
    pytest.param("llama_backend", id="llama", marks=pytest.mark.model),
    pytest.param("openai_backend", id="openai", marks=pytest.mark.server),
]

# maxItems and maxLength keep the 135M model from repeating itself until max_tokens
TOPICS = {
    "type": "object",
    "properties": {"topics": {"type": "array", "items": {"type": "string", "maxLength": 40}, "maxItems": 4}},
    "required": ["topics"],
}
SOURCE = "Cats and dogs are popular pets. Cats sleep a lot; dogs need daily walks."


@pytest.fixture
def scripted_backend(tmp_path: Path) -> Backend:
    """The scripted backend as `model: {backend: scripted}` makes it, with the llama tests' context."""
    from wikic.backends import make_backend

    return make_backend(ModelConfig(backend="scripted", name="contract", context=CONTRACT_CONTEXT), tmp_path)


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


def test_a_prompt_larger_than_the_context_is_a_backend_error(backend: Backend) -> None:
    with pytest.raises(BackendError, match="context"):
        backend.complete(ask("word " * 6000, max_tokens=16))


def test_calls_from_several_threads_all_get_answers(backend: Backend) -> None:
    """The build calls from a thread pool (-j N); the llama backend serialises."""
    questions = [ask(f"What is {n} plus {n}?", max_tokens=8) for n in range(4)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(backend.complete, questions))
    assert all(r.text.strip() and r.completion_tokens > 0 for r in results)


def test_only_the_llama_backend_has_prefix_caching() -> None:
    from wikic.backends.openai_compat import OpenAIBackend
    from wikic.backends.scripted import ScriptedBackend

    api = OpenAIBackend(ModelConfig(backend="openai", name="m", base_url="http://127.0.0.1:9/v1"))
    assert not isinstance(api, PrefixCaching)
    assert not isinstance(ScriptedBackend(ModelConfig(backend="scripted", name="s")), PrefixCaching)


# --- llama specifics ---


def test_a_missing_gguf_is_a_config_error_naming_the_path(tmp_path: Path) -> None:
    from wikic.backends.llama import LlamaBackend

    with pytest.raises(ConfigError, match="nowhere.gguf"):
        LlamaBackend(ModelConfig(name="models/nowhere.gguf"), tmp_path)


def test_a_file_that_is_not_a_gguf_is_a_config_error_naming_the_path(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    from wikic.backends.llama import LlamaBackend

    (tmp_path / "junk.gguf").write_bytes(b"not a model at all" * 100)
    backend = LlamaBackend(ModelConfig(name="junk.gguf"), tmp_path)
    assert backend.model_id == "llama:junk.gguf:1800"
    assert isinstance(backend, PrefixCaching)  # the one backend with prefix caching; the others are not
    with pytest.raises(ConfigError, match="junk.gguf"):
        backend.complete(ask("Hi."))


@pytest.mark.model
def test_llama_model_id_matches_the_registry(llama_backend: Any, tmp_path: Path) -> None:
    assert llama_backend.model_id == model_id(llama_backend.cfg, tmp_path)
    assert llama_backend.model_id.startswith("llama:SmolLM2")


@pytest.mark.model
def test_llama_counts_prompt_tokens_as_the_model_does(llama_backend: Any) -> None:
    request = ask("Name one pet animal.", max_tokens=4)
    counted = llama_backend.count_prompt_tokens(request.messages)
    assert counted == llama_backend.complete(request).prompt_tokens
