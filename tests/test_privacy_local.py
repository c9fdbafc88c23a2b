"""privacy.local_only: a remote API model (a base URL naming a non-loopback host,
answered in-process by httpx.MockTransport: nothing leaves the machine) never
receives a protected source's text, in build or ask; privacy.local_model builds it."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from projects import make_project

from wikic.ask.runner import AskOptions, ask
from wikic.backends.base import Request
from wikic.backends.openai_compat import OpenAIBackend
from wikic.backends.scripted import ScriptedBackend
from wikic.build.report import Progress
from wikic.build.run import BuildOptions, build
from wikic.config import ModelConfig, Schema
from wikic.lint.runner import LintOptions, lint
from wikic.privacy.local import LocalOnly, is_remote
from wikic.project import Project

REMOTE = "https://llm.example.com/v1"
DIARY = """# Diary

## Chunking

The Zqprivatediary project keeps chunks of a few hundred tokens on my laptop.

## Zqprivatediary

The **Zqprivatediary** service runs at home.
"""


class RemoteAPI:
    """An OpenAI-compatible API at a remote address, answered in-process by the scripted
    model; it keeps the body of every request it was sent."""

    def __init__(self) -> None:
        self.bodies: list[str] = []
        self.model = ScriptedBackend(ModelConfig(backend="scripted", name="remote", context=100_000))

    def handle(self, request: httpx.Request) -> httpx.Response:
        assert request.url.host == "llm.example.com"
        body = request.content.decode()
        self.bodies.append(body)
        data = json.loads(body)
        schema = (data.get("response_format") or {}).get("json_schema", {}).get("schema")
        done = self.model.complete(Request(data["messages"], schema, 512, 0.0))
        if data.get("stream"):
            return httpx.Response(200, content=_sse(done.text), headers={"content-type": "text/event-stream"})
        return httpx.Response(
            200,
            json={
                "id": "c1",
                "object": "chat.completion",
                "created": 1,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": done.text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            },
        )

    def backend(self, schema: Schema) -> OpenAIBackend:
        client = httpx.Client(transport=httpx.MockTransport(self.handle))
        return OpenAIBackend(schema.model, http_client=client, sleep=lambda s: None)

    def carrying(self, word: str) -> int:
        return sum(word.lower() in b.lower() for b in self.bodies)


def _sse(text: str) -> bytes:
    head = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    events = [
        {**head, "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    return b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n"


def remote_project(tmp_path: Path, local_model: bool = False) -> Project:
    project = make_project(tmp_path, None)
    (project.sources_dir / "private").mkdir()
    (project.sources_dir / "private" / "diary.md").write_text(DIARY, encoding="utf-8")
    text = f"""title: Test wiki
model:
  backend: openai
  name: remote-model
  base_url: {REMOTE}
  api_key_env: WIKIC_TEST_KEY
  retries: 0
write:
  mode: prose
privacy:
  local_only: ["private/**"]
"""
    if local_model:
        text += "  local_model: {backend: scripted, name: local}\n"
    project.schema_path.write_text(text, encoding="utf-8")
    return project


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WIKIC_TEST_KEY", "sk-test-not-a-real-key-000000000000")


def test_which_models_are_remote() -> None:
    assert is_remote(ModelConfig(backend="openai"))  # the OpenAI API itself
    assert is_remote(ModelConfig(backend="openai", base_url="http://10.0.0.5:8080/v1"))
    assert is_remote(ModelConfig(backend="openai", base_url="http://localhost.evil.com/v1"))
    for url in ("http://127.0.0.1:8080/v1", "http://localhost:11434/v1", "http://[::1]:8000/v1"):
        assert not is_remote(ModelConfig(backend="openai", base_url=url)), url
    assert not is_remote(ModelConfig(backend="llama")) and not is_remote(ModelConfig(backend="scripted"))
    rule = LocalOnly(["private/**", "*.secret.md"])
    assert rule.covers("sources/private/a/b.md") and rule.covers("sources/x/y.secret.md")
    assert not rule.covers("sources/public.md")


def test_a_remote_model_never_gets_a_local_only_source(tmp_path: Path) -> None:
    project = remote_project(tmp_path)
    api = RemoteAPI()
    report = build(project, BuildOptions(), Progress(quiet=True), backend_factory=api.backend)
    assert not report.ok  # exit 1: the build says which source and why
    errors = {e["where"]: e["message"] for e in report.errors}
    assert "privacy.local_only" in errors["sources/private/diary.md"]
    assert "llm.example.com" in errors["sources/private/diary.md"]
    assert api.bodies and api.carrying("Zqprivatediary") == 0
    assert (project.wiki_dir / "chunking.md").exists()  # the rest is built
    assert not any("zqprivatediary" in p.name for p in project.wiki_dir.glob("*.md"))


def test_local_model_builds_it_and_ask_keeps_it_from_the_remote_model(tmp_path: Path) -> None:
    project = remote_project(tmp_path, local_model=True)
    api = RemoteAPI()
    report = build(project, BuildOptions(), Progress(quiet=True), backend_factory=api.backend)
    assert report.ok, report.errors
    assert (project.wiki_dir / "zqprivatediary.md").exists()
    chunking = (project.wiki_dir / "chunking.md").read_text()
    assert api.carrying("Zqprivatediary") == 0 and "diary.md" in chunking  # written by the local model
    assert api.carrying("keeps chunks of a few hundred tokens on my laptop") == 0
    result = ask(
        project, "What is Zqprivatediary and what is chunking?", AskOptions(), backend_factory=api.backend
    )
    assert result.answer
    assert api.carrying("Zqprivatediary") == 1  # the question itself, nothing of the pages
    assert api.carrying("keeps chunks") == 0 and "diary" not in json.dumps(result.pages)


def test_lint_llm_keeps_local_only_pages_from_the_remote_model(tmp_path: Path) -> None:
    project = remote_project(tmp_path, local_model=True)
    api = RemoteAPI()
    assert build(project, BuildOptions(), Progress(quiet=True), backend_factory=api.backend).ok
    api.bodies.clear()
    result = lint(project, LintOptions(llm=True), backend_factory=api.backend)
    assert result.model_calls > 0 and api.bodies  # the other pages were checked by the model
    assert api.carrying("Zqprivatediary") == 0 and api.carrying("on my laptop") == 0
