"""Backend registry: a name in schema.yaml's `model.backend` to a factory.

Factories import their heavy libraries lazily, so that a build with nothing to
do never pays for importing `openai` or `llama_cpp`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from wikic.backends.base import Backend, Completion, Message, Request

if TYPE_CHECKING:  # not at run time: the no-op check (build/uptodate.py) resolves models without pydantic
    from wikic.config import ModelConfig

Factory = Callable[["ModelConfig", Path], Backend]


def _llama(cfg: ModelConfig, root: Path) -> Backend:
    from wikic.backends.llama import LlamaBackend

    return LlamaBackend(cfg, root)


def _openai(cfg: ModelConfig, root: Path) -> Backend:
    from wikic.backends.openai_compat import OpenAIBackend

    return OpenAIBackend(cfg)


def _scripted(cfg: ModelConfig, root: Path) -> Backend:
    from wikic.backends.scripted import ScriptedBackend

    return ScriptedBackend(cfg, root)


BACKENDS: dict[str, Factory] = {"llama": _llama, "openai": _openai, "scripted": _scripted}


def make_backend(cfg: ModelConfig, root: Path) -> Backend:
    return BACKENDS[cfg.backend](cfg, root)  # config validation admits only these names


def model_id(cfg: ModelConfig, root: Path | None = None) -> str:
    """The model's identity for action keys, computed without loading the model; each
    backend's `model_id` is this. `root` resolves a llama model given by a relative path."""
    if cfg.backend == "llama":
        from wikic.backends.llama_path import resolve_model_path

        path = resolve_model_path(cfg.name, root if root is not None else Path.cwd())
        return f"llama:{path.name}:{path.stat().st_size}"
    if cfg.backend == "openai":
        return f"openai:{cfg.base_url or 'default'}:{cfg.name}"
    return f"scripted:{cfg.name}"


__all__ = ["Backend", "Completion", "Message", "Request", "make_backend", "model_id"]
