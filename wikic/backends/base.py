"""The one interface every model backend implements, the values it exchanges, and
the optional prefix-caching interface a backend may implement besides."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": "..."}


@dataclass
class Completion:
    """One model answer with its usage figures."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    finish_reason: str = "stop"
    calls: int = 1  # requests it took (complete_json sums its repair tries here)


@dataclass
class Request:
    """Everything that reaches the model for one call.

    `schema` is a JSON schema the answer must follow (None for free text).
    `prefix_messages` counts how many leading messages form a stable, cacheable
    prefix (used by `ask`); backends may ignore it.
    """

    messages: list[Message]
    schema: dict[str, Any] | None = None
    max_tokens: int = 512
    temperature: float = 0.0
    prefix_messages: int = 0
    cache_key: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Backend(Protocol):
    """A model. `complete` is the only method a backend must implement.

    `model_id` names the model and every setting that changes its answers; it
    is part of every action key. `stream` is optional: backends without it get
    the shared fallback that yields the whole answer at once.
    """

    model_id: str

    def complete(self, request: Request) -> Completion: ...


StreamCallback = Callable[[str], None]
Counter = Callable[[str], int]


@dataclass
class PrefixAnswer:
    """An answer from a prefix-caching backend, with what the prefix cost."""

    text: str = ""
    prefix_tokens: int = 0
    question_tokens: int = 0
    prefix_cached: bool = False  # the prefix's model state was live or restored, not evaluated
    evaluated_tokens: int | None = None  # prompt tokens the model actually decoded for this answer
    completion_tokens: int = 0
    state_bytes: int = 0  # size of the prefix state saved by this call
    seconds: dict[str, float] = field(default_factory=dict)


@runtime_checkable
class PrefixCaching(Protocol):
    """A backend that keeps the model state after a request's stable prefix (its first
    `prefix_messages` messages) and restores it, even in a new process, from `cache_dir`.
    `ask` uses it when a backend has it; every other backend gets the prefix as plain
    messages through `complete` or `stream`."""

    model_id: str

    def prompt_room(self, answer_tokens: int) -> tuple[Counter, int]:
        """The model's own token counter for message text, and how many tokens the
        messages' text may take with `answer_tokens` left for the answer."""
        ...

    def template_tokens(self) -> int:
        """The tokens the chat template adds around the messages' text (after prompt_room)."""
        ...

    def answer_with_prefix(
        self, request: Request, cache_dir: Path | None, cache_bytes: int, on_text: StreamCallback | None
    ) -> PrefixAnswer:
        """Restore or evaluate the prefix, save it under `cache_dir` (at most `cache_bytes`
        there; None: keep nothing on disk), then stream the answer through `on_text`."""
        ...


def stream_or_complete(
    backend: Backend, request: Request, on_text: StreamCallback | None = None
) -> Completion:
    """Stream through the backend when it can, else complete and emit once."""
    stream: Callable[[Request], Iterator[str | Completion]] | None = getattr(backend, "stream", None)
    if stream is None:
        result = backend.complete(request)
        if on_text:
            on_text(result.text)
        return result
    final: Completion | None = None
    for piece in stream(request):
        if isinstance(piece, Completion):
            final = piece
        elif on_text:
            on_text(piece)
    assert final is not None, "a backend's stream must end with a Completion"
    return final
