"""schema.yaml as validated before: a build, `wikic lint` and `ask` load it up to three
times a run, and validating it (PyYAML, then pydantic building its validators) costs
more than the rest of an edit's start. The validated settings are kept in .wikic/, as
plain JSON naming wikic's own models, by the bytes of schema.yaml and the code that
validated them; a schema.yaml with any problem is never kept, so it is validated, and
its problems reported, every time. Kept settings are taken back as plain views of the
models (settingsview.py): a build that takes them never imports pydantic."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wikic import __version__
from wikic.errors import ConfigError
from wikic.hashing import digest, fingerprint
from wikic.settingsview import decoded, view_of

if TYPE_CHECKING:
    from wikic.config import Schema

STATE_DIR = ".wikic"  # beside schema.yaml (project.py)
FILE = "settings.json"
# (key, the file they are kept in) -> the encoded settings: a run loads them up to three times;
# by file too, so that a process that builds another project (watch, tests) keeps them there
_kept: dict[tuple[str, str], Any] = {}


def load_schema(path: Path) -> Schema:
    """schema.yaml at `path`, validated (config.parse_schema), or as validated before (a view:
    settingsview.py). Here, not in config.py: the build imports it without pydantic."""
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")  # as read_text reads it
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: not found; run `wikic init` to create one") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc

    def validate() -> Schema:
        from wikic.config import parse_schema

        return parse_schema(text, path.name)

    return validated(path, raw, validate)


def validated(path: Path, raw: bytes, validate: Callable[[], Schema]) -> Schema:
    """The settings of schema.yaml's bytes `raw` (at `path`): as kept (a plain view of them,
    settingsview.py), else `validate()`d and kept (beside a .wikic/ folder only). Each call
    answers new settings, equal to a fresh validation's in every field and in which fields
    were set."""
    try:
        key = fingerprint([digest(raw), _code()])
    except OSError:  # wikic's code not a file to read (a zip, say): validated every time
        return validate()
    stored = path.parent / STATE_DIR / FILE
    encoded = _kept.get((key, str(stored)))
    if encoded is not None:
        return view_of(encoded)  # type: ignore[no-any-return]
    with contextlib.suppress(KeyError, TypeError, ValueError, AttributeError):  # not as written
        encoded = _read(stored, key)
        if encoded is not None:
            taken = view_of(encoded)
            _kept[key, str(stored)] = encoded
            return taken  # type: ignore[no-any-return]
    schema = validate()
    try:
        encoded = _encode(schema)
    except TypeError:  # a value JSON cannot say exactly: never kept
        return schema
    if not _same(_decode(encoded), schema):
        return schema
    _kept[key, str(stored)] = encoded
    if stored.parent.is_dir():
        _write(stored, json.dumps({"key": key, "settings": encoded}))
    return schema


def _code() -> list[Any]:
    """What validates schema.yaml besides its bytes: wikic's config.py, and the files of
    pydantic, pydantic-core and PyYAML that say their versions, by stat (found, not
    imported: taking kept settings must not import pydantic). Installing another version
    writes them anew."""
    return [
        __version__,
        digest(Path(__file__).with_name("config.py").read_bytes()),
        _files("pydantic", "version.py"),
        _files("pydantic_core", "_pydantic_core"),  # the compiled core and its stub
        _files("yaml", "__init__.py"),
    ]


def _files(package: str, prefix: str) -> list[list[Any]] | None:
    """[name, size, mtime_ns] of the package's files whose name starts with `prefix`."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.origin:
        return None
    folder = os.path.dirname(spec.origin)
    found = []
    for name in sorted(os.listdir(folder)):
        if name.startswith(prefix):
            st = os.stat(os.path.join(folder, name))
            found.append([name, st.st_size, st.st_mtime_ns])
    return found


def _read(stored: Path, key: str) -> Any:
    try:
        saved = json.loads(stored.read_bytes())
    except (OSError, ValueError):
        return None
    return saved.get("settings") if isinstance(saved, dict) and saved.get("key") == key else None


def _write(stored: Path, text: str) -> None:
    """Replaced whole, or left as it was: a cache, never an error."""
    tmp = stored.with_name(f"{FILE}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, stored)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _encode(value: Any) -> Any:
    """JSON for a validated value: a model as its class's name, fields and fields set."""
    from wikic.config import MODELS

    if isinstance(value, tuple(MODELS.values())):
        name = type(value).__name__
        if MODELS.get(name) is not type(value) or value.__pydantic_extra__ or value.__pydantic_private__:
            raise TypeError(name)
        fields = {k: _encode(v) for k, v in value.__dict__.items()}
        return {"$m": name, "f": fields, "s": sorted(value.model_fields_set)}
    if isinstance(value, dict):
        if not all(type(k) is str for k in value):
            raise TypeError("a key that is not a string")
        return {"$d": {k: _encode(v) for k, v in value.items()}}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if value is None or type(value) in (str, int, float, bool):
        return value
    raise TypeError(type(value).__name__)


def _decode(value: Any) -> Any:
    from wikic.config import MODELS

    return decoded(value, lambda name, fields, fields_set: MODELS[name].model_construct(fields_set, **fields))


def _same(a: Any, b: Any) -> bool:
    """Equal, of the same types all the way down, with the same fields set."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if hasattr(a, "model_fields_set"):
        return a.model_fields_set == b.model_fields_set and _same(a.__dict__, b.__dict__) and a == b
    return bool(a == b)
