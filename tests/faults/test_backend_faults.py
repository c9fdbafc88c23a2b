"""Backend faults through a whole build: the real `openai` client over
httpx.MockTransport, a server that answers like the scripted model and fails on
cue. The build reports which actions failed and why, keeps what succeeded, and the
next build retries only those (exact request counts)."""

from __future__ import annotations

import json
import random
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from faults.harness import make_project, notes, wiki_snapshot
from wikic.backends.base import Request
from wikic.backends.openai_compat import OpenAIBackend
from wikic.backends.retry import MAX_DELAY
from wikic.backends.scripted import ScriptedBackend
from wikic.build.pipeline import BuildOptions, build
from wikic.build.report import Progress, Report
from wikic.config import ModelConfig, Schema
from wikic.project import Project

KEY_ENV = "WIKIC_FAULT_KEY"
SECRET = "sk-test-SECRET-faults-0123456789abcdef"
RETRIES = 3
OPENAI_SCHEMA = f"""\
title: Fault wiki
scope: notes for fault tests
model:
  backend: openai
  name: test-model
  base_url: http://llm.test/v1
  api_key_env: {KEY_ENV}
  retries: {RETRIES}
"""

Fault = Callable[[httpx.Request], httpx.Response]


def label(body: dict) -> str:  # type: ignore[type-arg]
    """Which action a request belongs to: `digest note03`, `write Topic 3`."""
    user = body["messages"][1]["content"]
    if "<document" in user:
        number = int(re.search(r"This note number (\d+) ", user).group(1))  # type: ignore[union-attr]
        return f"digest note{number:02d}"
    return "write " + re.match(r'Notes about "([^"]*)"', user).group(1)  # type: ignore[union-attr]


class CutBody(httpx.SyncByteStream):
    def __iter__(self) -> Iterator[bytes]:
        yield b'{"id": "x", "object": "chat.completion", "choices": [{"index": 0, "mess'
        raise httpx.RemoteProtocolError("peer closed connection without sending complete body")


FAULTS: dict[str, Callable[[], httpx.Response]] = {
    "timeout": lambda: (_ for _ in ()).throw(httpx.ReadTimeout("timed out")),
    "refused": lambda: (_ for _ in ()).throw(httpx.ConnectError("[Errno 111] Connection refused")),
    "401": lambda: httpx.Response(401, json={"error": {"message": f"Incorrect API key provided: {SECRET}"}}),
    "429": lambda: httpx.Response(
        429, json={"error": {"message": "slow down"}}, headers={"retry-after": "2"}
    ),
    "500": lambda: httpx.Response(500, json={"error": {"message": "internal error"}}),
    "503": lambda: httpx.Response(503, json={"error": {"message": "overloaded"}}),
    "cut": lambda: httpx.Response(200, stream=CutBody(), headers={"content-type": "application/json"}),
    "malformed": lambda: httpx.Response(
        200, content=b'{"choices": [', headers={"content-type": "application/json"}
    ),
}


class Server:
    """Answers as the scripted model would; `plan[label]` lists faults to give that
    action's requests first, in order ("ok" lets one through; the last one repeats
    when `sticky`)."""

    def __init__(self, plan: dict[str, list[str]] | None = None, sticky: bool = False) -> None:
        self.plan = {k: list(v) for k, v in (plan or {}).items()}
        self.sticky = sticky
        self.model = ScriptedBackend(ModelConfig(backend="scripted", name="test-model"))
        self.requests: Counter[str] = Counter()
        self.keys: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        who = label(body)
        with self._lock:
            self.requests[who] += 1
            self.keys.add(request.headers.get("authorization", ""))
            todo = self.plan.get(who) or []
            fault = (todo[0] if self.sticky and len(todo) == 1 else todo.pop(0)) if todo else "ok"
        if fault != "ok":
            return FAULTS[fault]()
        schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema")
        answer = self.model.complete(Request(body["messages"], schema, body.get("max_tokens", 512)))
        return httpx.Response(
            200,
            json={
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 1,
                "model": "test-model",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": answer.text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": answer.prompt_tokens,
                    "completion_tokens": answer.completion_tokens,
                    "total_tokens": answer.prompt_tokens + answer.completion_tokens,
                },
            },
        )

    @property
    def total(self) -> int:
        return sum(self.requests.values())


class Clock:
    def __init__(self) -> None:
        self.delays: list[float] = []
        self._lock = threading.Lock()

    def __call__(self, seconds: float) -> None:
        with self._lock:
            self.delays.append(seconds)


def run_build(
    project: Project, server: Server, clock: Clock | None = None, jobs: int | None = None
) -> Report:
    clock = clock or Clock()
    rand = random.Random(3).random

    def factory(schema: Schema) -> OpenAIBackend:
        client = httpx.Client(transport=httpx.MockTransport(server))
        return OpenAIBackend(schema.model, http_client=client, sleep=clock, rand=rand)

    return build(project, BuildOptions(jobs=jobs), Progress(quiet=True), backend_factory=factory)


def openai_project(root: Path, files: dict[str, str]) -> Project:
    project = make_project(root, files)  # type: ignore[arg-type]
    project.schema_path.write_text(OPENAI_SCHEMA, encoding="utf-8")
    return project


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)


NOTES = notes(6)


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The wiki a healthy server makes, and the requests each kind of retry needs."""
    mp = pytest.MonkeyPatch()
    mp.setenv(KEY_ENV, SECRET)
    tmp = tmp_path_factory.mktemp("healthy")
    full = openai_project(tmp / "full", NOTES)
    server = Server()
    assert run_build(full, server).ok
    without = openai_project(tmp / "without", {k: v for k, v in NOTES.items() if k != "note03.md"})
    run_build(without, Server())
    adding = Server()
    (without.sources_dir / "note03.md").write_text(NOTES["note03.md"], encoding="utf-8")
    run_build(without, adding)
    mp.undo()
    return {"wiki": wiki_snapshot(full), "requests": server.requests, "adding_note03": adding.requests}


def errors(report: Report) -> dict[str, str]:
    """Where each error is, and its message (one line each)."""
    found = {e["where"]: e["message"] for e in report.errors}
    assert all("\n" not in m for m in found.values())
    return found


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("timeout", "did not answer within"),
        ("refused", "cannot reach http://llm.test/v1"),
        ("500", "answered HTTP 500"),
        ("503", "answered HTTP 503"),
        ("cut", "broke off before the answer was complete"),
        ("malformed", "malformed response"),
        ("429", "rate limiting"),
    ],
)
def test_a_failing_digest_is_retried_reported_and_alone_retried_next_time(
    tmp_path: Path, healthy: dict[str, object], fault: str, message: str
) -> None:
    project = openai_project(tmp_path / "p", NOTES)
    server, clock = Server({"digest note03": [fault]}, sticky=True), Clock()
    report = run_build(project, server, clock)
    failed = errors(report)
    assert list(failed) == ["digest sources/note03.md"]
    assert message in failed["digest sources/note03.md"]
    assert report.failed == 1
    assert server.requests["digest note03"] == RETRIES + 1
    assert len(clock.delays) == RETRIES
    if fault == "429":
        assert clock.delays == [2.0] * RETRIES  # Retry-After, honoured
    else:
        for attempt, delay in enumerate(clock.delays, start=1):  # full jitter under a doubling ceiling
            assert 0 <= delay <= min(MAX_DELAY, 0.5 * 2 ** (attempt - 1))
    # Everything else was built, as it is without note03.
    others = {k: v for k, v in server.requests.items() if k != "digest note03"}
    assert all(n == 1 for n in others.values())
    # The next build, the server healthy, makes exactly the requests that adding note03 makes.
    again = Server()
    report = run_build(project, again)
    assert report.ok, report.errors
    assert again.requests == healthy["adding_note03"]
    assert wiki_snapshot(project) == healthy["wiki"]


def test_a_failing_write_is_retried_alone(tmp_path: Path, healthy: dict[str, object]) -> None:
    project = openai_project(tmp_path / "p", NOTES)
    server = Server({"write Topic 4": ["refused"]}, sticky=True)
    report = run_build(project, server)
    assert list(errors(report)) == ["write concept: Topic 4"]
    assert server.requests["write Topic 4"] == RETRIES + 1
    assert not (project.wiki_dir / "topic-4.md").exists()
    again = Server()
    assert run_build(project, again).ok
    assert again.requests == Counter({"write Topic 4": 1})
    assert wiki_snapshot(project) == healthy["wiki"]


def test_transient_faults_cost_retries_only(tmp_path: Path, healthy: dict[str, object]) -> None:
    plan = {
        "digest note00": ["429", "ok"],
        "digest note01": ["503", "500", "ok"],
        "write Topic 2": ["cut", "ok"],
        "write Caching": ["timeout", "malformed", "refused", "ok"],
    }
    project = openai_project(tmp_path / "p", NOTES)
    server, clock = Server(plan), Clock()
    report = run_build(project, server, clock, jobs=4)
    assert report.ok, report.errors
    assert server.total == sum(healthy["requests"].values()) + 1 + 2 + 1 + 3  # type: ignore[attr-defined]
    assert 2.0 in clock.delays and len(clock.delays) == 7
    assert wiki_snapshot(project) == healthy["wiki"]


def refused_key_build(tmp_path: Path) -> tuple[Project, dict[str, bytes], Server, Clock, Report]:
    """A built wiki; two sources change; the server refuses the key."""
    project = openai_project(tmp_path / "p", NOTES)
    assert run_build(project, Server()).ok
    built = wiki_snapshot(project)
    (project.sources_dir / "note02.md").write_text(
        NOTES["note02.md"] + "\nOne more line of text here.\n", encoding="utf-8"
    )
    (project.sources_dir / "note09.md").write_text(notes(10)["note09.md"], encoding="utf-8")
    server, clock = Server({"digest note02": ["401"], "digest note09": ["401"]}, sticky=True), Clock()
    return project, built, server, clock, run_build(project, server, clock)


def test_a_refused_key_is_one_request_a_clear_message_and_nothing_lost(tmp_path: Path) -> None:
    project, built, server, clock, report = refused_key_build(tmp_path)
    assert server.total == 1 and clock.delays == []  # no retry, and no other action tried the key again
    messages = errors(report)
    assert {"digest sources/note02.md", "digest sources/note09.md"} <= set(messages)
    assert all(f"${KEY_ENV}" in m and "API key" in m and SECRET not in m for m in messages.values())
    assert sum(not m.startswith("not run: ") for m in messages.values()) == 1
    after = wiki_snapshot(project)
    assert set(after) == set(built)  # every page kept
    for name, data in built.items():
        if b"\ntype: source\n" not in data:
            assert after[name] == data, name  # topic pages and index.md byte for byte


def test_a_refused_key_leaves_every_page_byte_identical(tmp_path: Path) -> None:
    project, built, *_ = refused_key_build(tmp_path)
    assert wiki_snapshot(project) == built


def test_a_missing_key_fails_before_any_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV)
    project = openai_project(tmp_path / "p", NOTES)
    server = Server()
    report = run_build(project, server)
    assert server.total == 0
    assert report.failed == len(NOTES)
    first = report.errors[0]["message"]
    assert f"environment variable {KEY_ENV}" in first


def sse(*events: str) -> bytes:
    return b"".join(f"data: {e}\n\n".encode() for e in events)


def chunk(text: str, finish: str | None = None) -> str:
    return json.dumps(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "test-model",
            "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}],
        }
    )


class CutStream(httpx.SyncByteStream):
    def __iter__(self) -> Iterator[bytes]:
        yield sse(chunk("Caching keeps"))
        raise httpx.RemoteProtocolError("peer closed connection without sending complete body")


def test_ask_with_a_stream_cut_midway_saves_nothing(tmp_path: Path) -> None:
    from wikic.ask.runner import AskOptions, ask
    from wikic.errors import Unavailable

    project = openai_project(tmp_path / "p", NOTES)
    assert run_build(project, Server()).ok
    before = wiki_snapshot(project, with_log=True)
    requests: list[httpx.Request] = []

    def cut(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(200, stream=CutStream(), headers={"content-type": "text/event-stream"})

    def factory(schema: Schema) -> OpenAIBackend:
        client = httpx.Client(transport=httpx.MockTransport(cut))
        return OpenAIBackend(schema.model, http_client=client, sleep=Clock())

    pieces: list[str] = []
    with pytest.raises(Unavailable, match="cut midway"):
        ask(project, "what is caching?", AskOptions(save=True), pieces.append, backend_factory=factory)
    assert pieces == ["Caching keeps"] and len(requests) == 1  # its text was shown: not asked twice
    assert wiki_snapshot(project, with_log=True) == before  # no half answer filed
