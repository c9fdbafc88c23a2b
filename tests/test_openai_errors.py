"""OpenAIBackend through the real `openai` client over httpx.MockTransport: what each
HTTP failure becomes, how often it is retried, and that the API key never leaks."""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import httpx
import pytest

from wikic.backends.base import Completion, Request
from wikic.backends.openai_compat import OpenAIBackend, parse_retry_after
from wikic.config import ModelConfig
from wikic.errors import AuthError, BackendError, BadOutput, RateLimited, Timeout, Unavailable

SECRET = "sk-test-5up3r-s3cr3t-k3y-0123456789"
KEY_ENV = "WIKIC_TEST_API_KEY"
BASE_URL = "http://llm.test/v1"
ASK = Request(messages=[{"role": "user", "content": "Say hi."}], max_tokens=16)
TOPICS = {
    "type": "object",
    "properties": {"topics": {"type": "array", "items": {"type": "string"}}},
    "required": ["topics"],
}

Handler = Callable[[httpx.Request], httpx.Response]


def answer(content: str | None = "hi", usage: dict[str, object] | None = None) -> httpx.Response:
    body: dict[str, object] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }
    if usage is not None:
        body["usage"] = usage
    return httpx.Response(200, json=body)


def failure(status: int, message: str = "boom", **headers: str) -> httpx.Response:
    body = {"error": {"message": message, "type": "error", "code": None}}
    return httpx.Response(status, json=body, headers=headers)


class Server:
    """A scripted HTTP server: answers each request with the next response in
    turn (the last one repeats), and records every request it saw."""

    def __init__(self, *responses: httpx.Response | Exception | Handler) -> None:
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step = self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]
        if isinstance(step, Exception):
            raise step
        if callable(step):
            return step(request)
        return step

    def bodies(self) -> list[dict[str, object]]:
        return [json.loads(r.content) for r in self.requests]


class Clock:
    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def connect(monkeypatch: pytest.MonkeyPatch, clock: Clock) -> Callable[..., OpenAIBackend]:
    """Build an OpenAIBackend whose HTTP goes to `server` and whose sleeps go to `clock`."""
    monkeypatch.setenv(KEY_ENV, SECRET)

    def make(server: Server, retries: int = 3, **cfg: object) -> OpenAIBackend:
        config = ModelConfig(
            backend="openai",
            name="test-model",
            base_url=BASE_URL,
            api_key_env=KEY_ENV,
            retries=retries,
            **cfg,  # type: ignore[arg-type]
        )
        client = httpx.Client(transport=httpx.MockTransport(server))
        return OpenAIBackend(config, http_client=client, sleep=clock, rand=lambda: 1.0)

    return make


def test_a_good_answer_and_what_was_sent(connect: Callable[..., OpenAIBackend]) -> None:
    server = Server(answer("hello", {"prompt_tokens": 7, "completion_tokens": 2}))
    result = connect(server).complete(ASK)
    assert result == Completion("hello", prompt_tokens=7, completion_tokens=2, cached_tokens=0)
    (sent,) = server.requests
    assert sent.url == f"{BASE_URL}/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {SECRET}"
    body = server.bodies()[0]
    assert body["model"] == "test-model"
    assert body["max_tokens"] == 16
    assert body["seed"] == 0
    assert "response_format" not in body


def test_schema_and_cache_key_reach_the_server(connect: Callable[..., OpenAIBackend]) -> None:
    server = Server(answer('{"topics": []}'))
    connect(server).complete(Request(messages=ASK.messages, schema=TOPICS, cache_key="wiki-prefix-1"))
    body = server.bodies()[0]
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "output", "schema": TOPICS},
    }
    assert body["prompt_cache_key"] == "wiki-prefix-1"


def test_cached_tokens_are_read_from_usage(connect: Callable[..., OpenAIBackend]) -> None:
    usage = {
        "prompt_tokens": 1200,
        "completion_tokens": 30,
        "total_tokens": 1230,
        "prompt_tokens_details": {"cached_tokens": 1024},
    }
    result = connect(Server(answer("hi", usage))).complete(ASK)
    assert (result.prompt_tokens, result.completion_tokens, result.cached_tokens) == (1200, 30, 1024)


@pytest.mark.parametrize("details", [None, {}, {"cached_tokens": None}], ids=["no-details", "empty", "null"])
def test_missing_cached_tokens_count_as_zero(
    connect: Callable[..., OpenAIBackend], details: dict[str, object] | None
) -> None:
    usage: dict[str, object] = {"prompt_tokens": 5, "completion_tokens": 1}
    if details is not None:
        usage["prompt_tokens_details"] = details
    assert connect(Server(answer("hi", usage))).complete(ASK).cached_tokens == 0


def test_401_is_an_auth_error_and_is_not_retried(connect: Callable[..., OpenAIBackend], clock: Clock) -> None:
    server = Server(failure(401, "Incorrect API key provided"))
    with pytest.raises(AuthError, match=f"\\${KEY_ENV}"):
        connect(server).complete(ASK)
    assert len(server.requests) == 1
    assert clock.delays == []


def test_403_is_an_auth_error(connect: Callable[..., OpenAIBackend]) -> None:
    with pytest.raises(AuthError):
        connect(Server(failure(403, "forbidden"))).complete(ASK)


def test_a_missing_key_variable_fails_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    cfg = ModelConfig(backend="openai", name="m", base_url=BASE_URL, api_key_env=KEY_ENV)
    with pytest.raises(AuthError, match=KEY_ENV):
        OpenAIBackend(cfg)


def test_429_waits_for_retry_after(connect: Callable[..., OpenAIBackend], clock: Clock) -> None:
    server = Server(failure(429, "slow down", **{"Retry-After": "2"}), answer("ok"))
    assert connect(server).complete(ASK).text == "ok"
    assert clock.delays == [2.0]
    assert len(server.requests) == 2


def test_429_every_time_is_rate_limited_in_the_end(
    connect: Callable[..., OpenAIBackend], clock: Clock
) -> None:
    server = Server(failure(429, "slow down", **{"Retry-After": "3"}))
    with pytest.raises(RateLimited) as info:
        connect(server, retries=2).complete(ASK)
    assert info.value.retry_after == 3.0
    assert clock.delays == [3.0, 3.0]
    assert len(server.requests) == 3


def test_500_then_200_succeeds_after_one_retry(connect: Callable[..., OpenAIBackend], clock: Clock) -> None:
    server = Server(failure(500, "oops"), answer("recovered"))
    assert connect(server).complete(ASK).text == "recovered"
    assert len(server.requests) == 2
    assert clock.delays == [0.5]  # the first backoff ceiling, with rand() = 1


def test_503_forever_is_unavailable_after_all_retries(
    connect: Callable[..., OpenAIBackend], clock: Clock
) -> None:
    server = Server(failure(503, "overloaded"))
    with pytest.raises(Unavailable, match="503"):
        connect(server, retries=3).complete(ASK)
    assert len(server.requests) == 4
    assert clock.delays == [0.5, 1.0, 2.0]


def test_a_timeout_is_retried_then_raised_as_timeout(connect: Callable[..., OpenAIBackend]) -> None:
    server = Server(httpx.ReadTimeout("read timed out"))
    with pytest.raises(Timeout):
        connect(server, retries=1).complete(ASK)
    assert len(server.requests) == 2


def test_connection_refused_is_unavailable_and_names_the_server(
    connect: Callable[..., OpenAIBackend],
) -> None:
    server = Server(httpx.ConnectError("[Errno 111] Connection refused"))
    with pytest.raises(Unavailable, match=f"cannot reach {BASE_URL}"):
        connect(server, retries=2).complete(ASK)
    assert len(server.requests) == 3


def test_other_4xx_is_a_backend_error_with_status_and_not_retried(
    connect: Callable[..., OpenAIBackend],
) -> None:
    server = Server(failure(400, "messages must not be empty"))
    with pytest.raises(BackendError, match="400.*messages must not be empty") as info:
        connect(server).complete(ASK)
    assert type(info.value) is BackendError
    assert len(server.requests) == 1


def test_a_malformed_json_body_is_bad_output(connect: Callable[..., OpenAIBackend]) -> None:
    bad = httpx.Response(200, content=b'{"choices": [', headers={"content-type": "application/json"})
    with pytest.raises(BadOutput):
        connect(Server(bad)).complete(ASK)


def test_a_body_that_is_not_json_is_bad_output(connect: Callable[..., OpenAIBackend]) -> None:
    html = httpx.Response(200, content=b"<html>proxy page</html>", headers={"content-type": "text/html"})
    with pytest.raises(BadOutput):
        connect(Server(html)).complete(ASK)


def test_json_under_another_content_type_is_read(connect: Callable[..., OpenAIBackend]) -> None:
    """A server that labels its JSON text/plain still answers (as the client's typed path reads it)."""
    body = answer("hello", {"prompt_tokens": 3, "completion_tokens": 1}).content
    plain = httpx.Response(200, content=body, headers={"content-type": "text/plain"})
    assert connect(Server(plain)).complete(ASK) == Completion("hello", prompt_tokens=3, completion_tokens=1)


@pytest.mark.parametrize("body", [b"[1, 2]", b'"hi"', b"null"])
def test_json_that_is_not_an_object_is_bad_output(connect: Callable[..., OpenAIBackend], body: bytes) -> None:
    odd = httpx.Response(200, content=body, headers={"content-type": "application/json"})
    with pytest.raises(BadOutput, match="malformed|no choices"):
        connect(Server(odd), retries=0).complete(ASK)


def test_usage_with_cached_tokens_and_odd_counts(connect: Callable[..., OpenAIBackend]) -> None:
    usage = {"prompt_tokens": 9, "completion_tokens": "x", "prompt_tokens_details": {"cached_tokens": 4}}
    result = connect(Server(answer("ok", usage))).complete(ASK)
    assert (result.prompt_tokens, result.completion_tokens, result.cached_tokens) == (9, 0, 4)


def test_no_choices_is_bad_output(connect: Callable[..., OpenAIBackend]) -> None:
    empty = httpx.Response(200, json={"id": "x", "object": "chat.completion", "choices": []})
    with pytest.raises(BadOutput, match="no choices"):
        connect(Server(empty)).complete(ASK)


@pytest.mark.parametrize("content", [None, ""])
def test_empty_content_is_bad_output(connect: Callable[..., OpenAIBackend], content: str | None) -> None:
    with pytest.raises(BadOutput, match="empty"):
        connect(Server(answer(content))).complete(ASK)


def test_server_without_json_schema_gets_json_object_with_schema(
    connect: Callable[..., OpenAIBackend],
) -> None:
    """llama-cpp-python's server only knows {"type": "json_object", "schema": ...};
    it rejects json_schema with a 500 whose message names response_format."""

    def llama_cpp_server(request: httpx.Request) -> httpx.Response:
        kind = json.loads(request.content)["response_format"]["type"]
        if kind == "json_schema":
            return failure(
                500,
                "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
                "'msg': \"Input should be 'text' or 'json_object'\"}]",
            )
        return answer('{"topics": ["cats"]}')

    server = Server(llama_cpp_server)
    backend = connect(server)
    request = Request(messages=ASK.messages, schema=TOPICS)
    assert json.loads(backend.complete(request).text) == {"topics": ["cats"]}
    assert json.loads(backend.complete(request).text) == {"topics": ["cats"]}
    formats = [b["response_format"] for b in server.bodies()]
    assert [f["type"] for f in formats] == ["json_schema", "json_object", "json_object"]
    assert formats[-1]["schema"] == TOPICS


def test_a_500_unrelated_to_the_format_is_not_rephrased(
    connect: Callable[..., OpenAIBackend],
) -> None:
    server = Server(failure(500, "out of memory"), answer('{"topics": []}'))
    connect(server).complete(Request(messages=ASK.messages, schema=TOPICS))
    assert [b["response_format"]["type"] for b in server.bodies()] == ["json_schema"] * 2  # type: ignore[index]


# --- streaming ---


def sse(*events: dict[str, object] | str) -> bytes:
    return b"".join(f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n".encode() for e in events)


def chunk(text: str | None = None, finish: str | None = None, usage: object = None) -> dict[str, object]:
    choices = (
        []
        if text is None and finish is None
        else [{"index": 0, "delta": {"content": text} if text else {}, "finish_reason": finish}]
    )
    return {
        "id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": choices, "usage": usage,
    }  # fmt: skip


def event_stream(body: bytes) -> httpx.Response:
    return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})


class CutStream(httpx.SyncByteStream):
    """A response body that breaks off after its first bytes."""

    def __init__(self, first: bytes) -> None:
        self.first = first

    def __iter__(self) -> Iterator[bytes]:
        yield self.first
        raise httpx.RemoteProtocolError("peer closed connection without sending complete body")


def test_stream_yields_pieces_then_the_completion(connect: Callable[..., OpenAIBackend]) -> None:
    usage = {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}
    body = sse(chunk("Hel"), chunk("lo"), chunk(finish="stop"), chunk(usage=usage), "[DONE]")
    server = Server(event_stream(body))
    out = list(connect(server).stream(ASK))
    assert out[:-1] == ["Hel", "lo"]
    assert out[-1] == Completion("Hello", prompt_tokens=9, completion_tokens=2)
    sent = server.bodies()[0]
    assert sent["stream"] is True
    assert sent["stream_options"] == {"include_usage": True}


def test_stream_without_usage_counts_chunks(connect: Callable[..., OpenAIBackend]) -> None:
    body = sse(chunk("a"), chunk("b"), chunk("c", finish="length"), "[DONE]")
    final = list(connect(Server(event_stream(body))).stream(ASK))[-1]
    assert isinstance(final, Completion)
    assert (final.text, final.completion_tokens, final.finish_reason) == ("abc", 3, "length")


def test_a_stream_cut_midway_is_unavailable(connect: Callable[..., OpenAIBackend]) -> None:
    server = Server(httpx.Response(200, stream=CutStream(sse(chunk("Hel"))),
                                   headers={"content-type": "text/event-stream"}))  # fmt: skip
    pieces: list[object] = []
    with pytest.raises(Unavailable, match="cut midway"):
        for piece in connect(server).stream(ASK):
            pieces.append(piece)
    assert pieces == ["Hel"]
    assert len(server.requests) == 1  # text already went out: no retry


def test_a_stream_that_ends_without_finishing_is_unavailable(
    connect: Callable[..., OpenAIBackend],
) -> None:
    with pytest.raises(Unavailable):
        list(connect(Server(event_stream(sse(chunk("Hel"))))).stream(ASK))


def test_opening_a_stream_is_retried(connect: Callable[..., OpenAIBackend], clock: Clock) -> None:
    body = sse(chunk("ok", finish="stop"), "[DONE]")
    server = Server(failure(502, "bad gateway"), event_stream(body))
    assert list(connect(server).stream(ASK))[-1].text == "ok"  # type: ignore[union-attr]
    assert len(server.requests) == 2


# --- the key never leaks ---

LEAKY = {
    "401-echoing-the-key": failure(401, f"Incorrect API key provided: {SECRET}"),
    "400-echoing-the-key": failure(400, f"bad request from key {SECRET}"),
    "429-echoing-the-key": failure(429, f"quota exceeded for {SECRET}"),
    "500-echoing-the-key": failure(500, f"crash while handling {SECRET}"),
    "timeout": httpx.ReadTimeout(f"timed out {SECRET}"),
    "refused": httpx.ConnectError(f"refused {SECRET}"),
    "malformed": httpx.Response(200, content=SECRET.encode(), headers={"content-type": "application/json"}),
    "no-choices": httpx.Response(200, json={"id": SECRET, "choices": []}),
}


@pytest.mark.parametrize("response", LEAKY.values(), ids=LEAKY.keys())
def test_the_api_key_never_appears_in_an_error(
    connect: Callable[..., OpenAIBackend], response: httpx.Response | Exception
) -> None:
    backend = connect(Server(response), retries=1)
    with pytest.raises(BackendError) as info:
        backend.complete(ASK)
    assert SECRET not in str(info.value)
    assert SECRET not in repr(info.value)
    assert SECRET not in repr(backend)


# --- Retry-After ---


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT"}, 30.0),
        ({"retry-after": "Wed, 21 Oct 2015 07:27:00 GMT"}, 0.0),  # already past
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_parse_retry_after(headers: dict[str, str], seconds: float | None) -> None:
    now = datetime(2015, 10, 21, 7, 28, 0, tzinfo=UTC)
    assert parse_retry_after(httpx.Headers(headers), now=now) == seconds


@pytest.mark.parametrize("enabled", [True, False])
def test_making_the_client_leaves_the_collector_as_it_was(
    connect: Callable[..., OpenAIBackend], enabled: bool
) -> None:
    backend = connect(Server(answer("hi")))
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        assert backend.complete(ASK).text == "hi"
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
