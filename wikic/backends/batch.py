"""An OpenAI-compatible Batch API (OpenAI's `/v1/batches`, and servers that copy it),
through the `openai` client of an OpenAIBackend: the requests as one JSONL file,
uploaded; the batch created and found again by wikic's own name for it; its status;
its answers read back as Completions. What to send and when is the build's
(build/batches.py); this module only speaks to the provider, and keeps no state.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from wikic.backends.base import Completion, Request
from wikic.backends.openai_compat import OpenAIBackend
from wikic.errors import BackendError

T = TypeVar("T")
ENDPOINT = "/v1/chat/completions"
WINDOW = "24h"
TOKEN = "wikic_submission"  # the batch's metadata key that holds wikic's name for it
DONE = ("completed", "expired", "failed", "cancelled")
EXPIRED = "batch_expired"  # the error code of a line the provider never got to


@dataclass
class Status:
    """Where a batch stands, and the files of its answers once it is done."""

    state: (
        str  # validating | in_progress | finalizing | completed | expired | failed | cancelling | cancelled
    )
    output_file: str | None = None
    error_file: str | None = None
    done: int = 0
    total: int = 0
    errors: list[str] = field(default_factory=list)  # why a whole batch failed (validation)

    @property
    def finished(self) -> bool:
        return self.state in DONE


@dataclass
class Results:
    """A finished batch's lines: answers by custom_id, failures by custom_id (the error's
    text), the ids the provider never ran (expiry), and lines that could not be read."""

    answers: dict[str, Completion] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    expired: set[str] = field(default_factory=set)
    unreadable: list[str] = field(default_factory=list)


class BatchAPI:
    """The provider's files and batches endpoints, with errors translated as the backend's are."""

    def __init__(self, backend: OpenAIBackend) -> None:
        self.backend = backend

    def line(self, custom_id: str, request: Request) -> dict[str, Any]:
        """One JSONL line: the same body the backend sends live."""
        return {
            "custom_id": custom_id,
            "method": "POST",
            "url": ENDPOINT,
            "body": self.backend.request_body(request),
        }

    def upload(self, lines: list[dict[str, Any]]) -> str:
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")
        client = self.backend.client
        made = self._call(lambda: client.files.create(file=("wikic-batch.jsonl", data), purpose="batch"))
        return str(made.id)

    def create(self, file_id: str, token: str) -> str:
        client = self.backend.client
        made = self._call(
            lambda: client.batches.create(
                input_file_id=file_id, endpoint=ENDPOINT, completion_window=WINDOW, metadata={TOKEN: token}
            )
        )
        return str(made.id)

    def find(self, token: str) -> str | None:
        """The batch created under wikic's name `token`, if the provider has one: a build killed
        between creating a batch and recording its id finds it here instead of creating another."""
        client = self.backend.client
        page = self._call(lambda: client.batches.list(limit=100))
        for batch in page:  # the client pages through the rest by itself
            if (getattr(batch, "metadata", None) or {}).get(TOKEN) == token:
                return str(batch.id)
        return None

    def status(self, batch_id: str) -> Status:
        client = self.backend.client
        b = self._call(lambda: client.batches.retrieve(batch_id))
        counts = getattr(b, "request_counts", None)
        errors = [
            str(getattr(e, "message", e)) for e in (getattr(getattr(b, "errors", None), "data", None) or [])
        ]
        return Status(
            str(b.status),
            getattr(b, "output_file_id", None),
            getattr(b, "error_file_id", None),
            int(getattr(counts, "completed", 0) or 0) + int(getattr(counts, "failed", 0) or 0),
            int(getattr(counts, "total", 0) or 0),
            errors,
        )

    def results(self, status: Status) -> Results:
        out = Results()
        client = self.backend.client
        for file_id in (status.output_file, status.error_file):
            if file_id:
                text = self._call(functools.partial(_content, client, file_id))
                for n, raw in enumerate(str(text).splitlines(), 1):
                    if raw.strip():
                        _read_line(raw, n, out)
        return out

    def _call(self, fn: Callable[[], T]) -> T:
        try:
            return self.backend.retrying(fn)
        except BackendError:
            raise
        except Exception as exc:
            error = self.backend.translate(exc)
            if error is None:
                raise
            raise error from exc


def _content(client: Any, file_id: str) -> str:
    return str(client.files.content(file_id).text)


def _read_line(raw: str, n: int, out: Results) -> None:
    """One result line into `out`; a line that is not the API's shape is set aside, by number."""
    try:
        line = json.loads(raw)
        custom_id = line["custom_id"]
        if not isinstance(custom_id, str):
            raise TypeError("custom_id")
    except (ValueError, KeyError, TypeError):
        out.unreadable.append(f"line {n}: not a batch result ({raw[:60]!r})")
        return
    error = line.get("error") or {}
    response = line.get("response") or {}
    if error:
        if error.get("code") == EXPIRED:
            out.expired.add(custom_id)
        else:
            out.failed[custom_id] = f"{error.get('code')}: {error.get('message')}"
        return
    body = response.get("body") or {}
    if response.get("status_code") != 200:
        message = (body.get("error") or {}).get("message") if isinstance(body, dict) else None
        out.failed[custom_id] = f"HTTP {response.get('status_code')}: {message or 'no answer'}"
        return
    try:
        choice = body["choices"][0]
        text = choice["message"]["content"]
        if not isinstance(text, str) or not text:
            raise TypeError("content")
    except (KeyError, IndexError, TypeError):
        out.failed[custom_id] = "the answer has no message content"
        return
    usage = body.get("usage") or {}
    details = usage.get("prompt_tokens_details") or {}
    out.answers[custom_id] = Completion(
        text,
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        cached_tokens=int(details.get("cached_tokens") or 0),
        finish_reason=str(choice.get("finish_reason") or "stop"),
    )
