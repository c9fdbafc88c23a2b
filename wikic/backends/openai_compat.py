"""Any OpenAI-compatible chat API (OpenAI, Ollama, vLLM, LM Studio, llama.cpp server),
through the `openai` client, with its errors translated into wikic's."""

from __future__ import annotations

import email.utils
import gc
import inspect
import json
import logging
import os
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from json import JSONDecodeError
from typing import Any, TypeVar

from wikic.backends import model_id
from wikic.backends.base import Completion, Request
from wikic.backends.retry import OnRetry, call_with_retries
from wikic.config import ModelConfig
from wikic.errors import AuthError, BackendError, BadOutput, RateLimited, Timeout, Unavailable

log = logging.getLogger(__name__)
T = TypeVar("T")

NO_KEY = "sk-no-key"  # local servers ignore the key, but the client insists on one
DEFAULT_KEY_ENV = "OPENAI_API_KEY"  # the real OpenAI API always needs one
DETAIL_CHARS = 300
# An answer is asked for through the client's own `post`, with the body as wikic made it and the
# JSON back as it came: `chat.completions.create` walks every message through its typed-dict
# transform and builds pydantic models of the answer, 1-2 ms of CPU a call that 64 calls in
# flight pay one after another under the GIL (bench/parallel.py). Streams still go through it.
CHAT_PATH = "/chat/completions"

# Servers that reject part of a standard request, and how to rephrase it.
# llama-cpp-python's server only knows {"type": "json_object", "schema": ...};
# OpenAI's reasoning models only know max_completion_tokens.
JSON_OBJECT_SCHEMA = "json_object_schema"
MAX_COMPLETION_TOKENS = "max_completion_tokens"


class MalformedResponse(BadOutput):
    """A body that is not the API's JSON (cut short, a proxy's page): worth another try,
    unlike a well-formed answer whose content is unusable."""

    retryable = True


class OpenAIBackend:
    """A model behind an OpenAI-compatible `/chat/completions` endpoint.

    `sleep`, `rand` and `on_retry` are handed to `call_with_retries` (tests pass
    a fake sleep); `http_client` replaces the transport (tests pass one built on
    `httpx.MockTransport`).
    """

    def __init__(
        self,
        cfg: ModelConfig,
        http_client: Any = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rand: Callable[[], float] = random.random,
        on_retry: OnRetry | None = None,
    ) -> None:
        self.cfg = cfg
        self.model_id = model_id(cfg)
        self.where = cfg.base_url or "the OpenAI API"
        self._key_env = cfg.api_key_env or (DEFAULT_KEY_ENV if cfg.base_url is None else None)
        self._key = _read_key(self._key_env)
        self._http_client = http_client
        self._sleep = sleep
        self._rand = rand
        self._on_retry = on_retry or _log_retry
        self._client: Any = None
        self._params: set[str] | None = None  # what the client's `create` takes (streams alone use it)
        self._quirks: set[str] = set()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAIBackend({self.model_id!r})"

    @property
    def client(self) -> Any:
        """The `openai.OpenAI` client, created (and `openai` imported) on first use."""
        with self._lock:
            if self._client is None:
                first = "openai" not in sys.modules
                gc_was = gc.isenabled()
                # the import makes thousands of long-lived objects (pydantic models), no garbage:
                # the collector's passes over them, during it and after (as the first calls go
                # out), were 0.3-0.4 s; the first import in a process is made without them, and
                # what it made is left out of the later ones (bench/README.md, parallel.py)
                gc.disable()
                try:
                    self._client = self._new_client()
                    if first:
                        gc.freeze()
                finally:
                    if gc_was:
                        gc.enable()
            return self._client

    def _new_client(self) -> Any:
        import openai

        return openai.OpenAI(
            base_url=self.cfg.base_url,
            api_key=self._key or NO_KEY,
            max_retries=0,  # call_with_retries does it, with wikic's policy
            timeout=self.cfg.timeout,
            http_client=self._http_client,
        )

    def complete(self, request: Request) -> Completion:
        return self._retrying(lambda: self._complete_once(request))

    def stream(self, request: Request) -> Iterator[str | Completion]:
        """Yield the answer's text as it arrives, then the whole Completion.

        Opening the stream is retried; a stream cut midway is not (its text has
        already gone to the caller) and raises Unavailable.
        """
        chunks = self._retrying(lambda: self._create(request, stream=True))
        pieces: list[str] = []
        finish_reason: str | None = None
        usage: Any = None
        try:
            for chunk in chunks:
                usage = getattr(chunk, "usage", None) or usage
                for choice in (getattr(chunk, "choices", None) or [])[:1]:
                    text = getattr(choice.delta, "content", None) if choice.delta else None
                    if text:
                        pieces.append(text)
                        yield text
                    finish_reason = choice.finish_reason or finish_reason
        except Exception as exc:
            error = self._stream_error(exc)
            if error is None:
                raise
            raise error from exc
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
        if finish_reason is None:
            raise Unavailable(f"the stream from {self.where} stopped before the answer ended")
        completion = Completion("".join(pieces), finish_reason=finish_reason)
        if usage is not None:
            _add_usage(completion, usage)
        else:  # servers without stream_options (llama-cpp-python) send one token a chunk
            completion.completion_tokens = len(pieces)
        yield completion

    def _retrying(self, fn: Callable[[], T]) -> T:
        return call_with_retries(
            fn,
            retries=self.cfg.retries,
            sleep=self._sleep,
            rand=self._rand,
            on_retry=self._on_retry,
        )

    def _complete_once(self, request: Request) -> Completion:
        result = self._create(request, stream=False)
        choices = result.get("choices")
        if not choices or not isinstance(choices, list):
            raise BadOutput(f"{self.where} answered with no choices")
        choice = choices[0] if isinstance(choices[0], dict) else {}
        message = choice.get("message")
        text = message.get("content") if isinstance(message, dict) else None
        finish_reason = choice.get("finish_reason")
        if not text or not isinstance(text, str):
            raise BadOutput(f"{self.where} answered with empty content (finish_reason {finish_reason!r})")
        completion = Completion(text, finish_reason=finish_reason or "stop")
        if result.get("usage") is not None:
            _add_usage(completion, result["usage"])
        return completion

    def _create(self, request: Request, *, stream: bool) -> Any:
        """One HTTP call; rephrased and repeated at once if the server rejects a form."""
        client = self.client
        while True:
            try:
                if stream:
                    return client.chat.completions.create(**self._arguments(request, stream))
                answer = client.post(CHAT_PATH, body=self._wanted(request, False), cast_to=object)
                return self._json_object(answer)
            except MalformedResponse:
                raise
            except Exception as exc:
                quirk = self._quirk_for(exc, request)
                if quirk is None:
                    error = self._translate(exc)
                    if error is None:
                        raise
                    raise error from exc
                log.info("%s: %s; rephrasing the request", self.where, quirk)
                self._quirks.add(quirk)

    def _json_object(self, body: Any) -> dict[str, Any]:
        """The answer's JSON object. The client hands back the text of a body whose content type
        does not say JSON: read as JSON all the same (as its typed path does), else malformed."""
        if isinstance(body, str):
            try:
                body = json.loads(body)
            except ValueError:
                raise MalformedResponse(
                    f"{self.where} sent a malformed response: not JSON ({self._scrub(body[:60])!r})"
                ) from None
        if not isinstance(body, dict):
            raise MalformedResponse(f"{self.where} sent a malformed response: a JSON {type(body).__name__}")
        return body

    def retrying(self, fn: Callable[[], T]) -> T:
        """`fn` (a call through `client`) with wikic's retry policy: for the Batch API (batch.py)."""
        return self._retrying(fn)

    def translate(self, exc: Exception) -> BackendError | None:
        return self._translate(exc)

    def request_body(self, request: Request) -> dict[str, Any]:
        """The JSON body of a live call for `request`: a Batch API line carries the same."""
        return self._wanted(request, stream=False)

    def _arguments(self, request: Request, stream: bool) -> dict[str, Any]:
        wanted = self._wanted(request, stream)
        if self._params is None:  # `client.chat` imports its resources: not before a stream needs them
            self._params = set(inspect.signature(self.client.chat.completions.create).parameters)
        # parameters this version of the client does not know travel in the body
        args = {k: v for k, v in wanted.items() if k in self._params}
        extra = {k: v for k, v in wanted.items() if k not in self._params}
        if extra:
            args["extra_body"] = extra
        return args

    def _wanted(self, request: Request, stream: bool) -> dict[str, Any]:
        wanted: dict[str, Any] = {
            "model": self.cfg.name,
            "messages": request.messages,
            "temperature": request.temperature,
            "seed": self.cfg.seed,
        }
        tokens_key = "max_completion_tokens" if MAX_COMPLETION_TOKENS in self._quirks else "max_tokens"
        wanted[tokens_key] = request.max_tokens
        if request.schema is not None:
            wanted["response_format"] = self._response_format(request.schema)
        if request.cache_key:
            wanted["prompt_cache_key"] = request.cache_key
        if stream:
            wanted["stream"] = True
            wanted["stream_options"] = {"include_usage": True}
        return wanted

    def _response_format(self, schema: dict[str, Any]) -> dict[str, Any]:
        if JSON_OBJECT_SCHEMA in self._quirks:
            return {"type": "json_object", "schema": schema}
        return {"type": "json_schema", "json_schema": {"name": "output", "schema": schema}}

    def _quirk_for(self, exc: Exception, request: Request) -> str | None:
        """The rephrasing that answers this rejection, if there is one not yet tried."""
        import openai

        if not isinstance(exc, openai.APIStatusError) or exc.status_code not in (400, 422, 500):
            return None
        said = f"{exc.message} {exc.body}"
        if (
            request.schema is not None
            and JSON_OBJECT_SCHEMA not in self._quirks
            and "response_format" in said
            and ("json_object" in said or "json_schema" in said)
        ):
            return JSON_OBJECT_SCHEMA
        if MAX_COMPLETION_TOKENS not in self._quirks and "max_completion_tokens" in said:
            return MAX_COMPLETION_TOKENS
        return None

    def _translate(self, exc: Exception) -> BackendError | None:
        """The wikic error for what the `openai` client raised; None for a bug."""
        import openai

        if isinstance(exc, openai.APITimeoutError):
            return Timeout(f"{self.where} did not answer within {self.cfg.timeout:g} s")
        if isinstance(exc, openai.APIConnectionError):
            if _broke_off(exc):
                return Unavailable(f"the connection to {self.where} broke off before the answer was complete")
            return Unavailable(f"cannot reach {self.where}: is the server running?")
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            return AuthError(self._auth_message(exc.status_code))
        if isinstance(exc, openai.RateLimitError):
            return RateLimited(
                f"{self.where} is rate limiting: {self._detail(exc)}",
                retry_after=parse_retry_after(exc.response.headers),
            )
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            message = f"{self.where} answered HTTP {status}: {self._detail(exc)}"
            if status >= 500:
                return Unavailable(message)
            if status == 408:
                return Timeout(message)
            return BackendError(message)
        if isinstance(exc, openai.APIResponseValidationError | JSONDecodeError | UnicodeError):
            return MalformedResponse(f"{self.where} sent a malformed response: {self._scrub(str(exc))}")
        if isinstance(exc, openai.APIError):
            return BackendError(f"{self.where} failed: {self._detail(exc)}")
        return None

    def _stream_error(self, exc: Exception) -> BackendError | None:
        import openai

        if isinstance(exc, openai.APITimeoutError) or _is_transport_error(exc, "Timeout"):
            return Timeout(f"the stream from {self.where} stalled for {self.cfg.timeout:g} s")
        if isinstance(exc, openai.APIConnectionError) or _is_transport_error(exc, ""):
            return Unavailable(f"the stream from {self.where} was cut midway")
        return self._translate(exc)

    def _auth_message(self, status: int) -> str:
        if self._key_env is None:
            return (
                f"{self.where} wants an API key (HTTP {status}): set model.api_key_env in "
                "schema.yaml to the name of the environment variable that holds it"
            )
        return f"{self.where} refused the API key in ${self._key_env} (HTTP {status}); check it"

    def _detail(self, exc: Any) -> str:
        return self._scrub(str(getattr(exc, "message", exc)))[:DETAIL_CHARS]

    def _scrub(self, text: str) -> str:
        """Servers sometimes echo the key they refused; never pass it on."""
        return text.replace(self._key, "***") if self._key else text


def _read_key(env: str | None) -> str | None:
    if env is None:
        return None
    key = os.environ.get(env, "").strip()
    if not key:
        raise AuthError(
            f"the environment variable {env} (model.api_key_env) is not set; "
            f"export {env}=... with your API key"
        )
    return key


def _add_usage(completion: Completion, usage: Any) -> None:
    """Token counts from the answer's `usage`: the JSON object, or the client's model of it (streams)."""
    completion.prompt_tokens = _count(usage, "prompt_tokens")
    completion.completion_tokens = _count(usage, "completion_tokens")
    completion.cached_tokens = _count(_field(usage, "prompt_tokens_details"), "cached_tokens")


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _count(obj: Any, name: str) -> int:
    try:
        return int(_field(obj, name) or 0)
    except (TypeError, ValueError):  # a count that is not one: none
        return 0


def parse_retry_after(headers: Any, now: datetime | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _broke_off(exc: Exception) -> bool:
    """An APIConnectionError after the server was reached: the body was cut short."""
    cause = exc.__cause__
    return cause is not None and type(cause).__name__ in (
        "RemoteProtocolError",
        "ReadError",
        "WriteError",
        "CloseError",
    )


def _is_transport_error(exc: Exception, kind: str) -> bool:
    """An httpx (or httpx2) error that older `openai` clients let escape a stream."""
    module = type(exc).__module__.split(".")[0]
    return module in ("httpx", "httpx2") and kind in type(exc).__name__


def _log_retry(attempt: int, error: Exception, delay: float) -> None:
    log.warning("%s; try %d failed, retrying in %.1f s", error, attempt, delay)
