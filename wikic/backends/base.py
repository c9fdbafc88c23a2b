"""The one interface every model backend implements, and the values it exchanges."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

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
