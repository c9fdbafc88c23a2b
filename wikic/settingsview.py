"""Settings as kept (settings.py), read without pydantic: a plain view of each validated
model, its fields as attributes and its fields set, with the methods a build calls of
them (`params`, `type_names`, `index_order`, `model_dump` without options). Anything else pydantic's
models answer (`model_dump_json`, `model_copy`, ...) is asked of the model itself, made
from the view at the first such call (pydantic imported then). An edit whose schema.yaml
was validated before never imports pydantic (0.1-0.2 s of its start).
tests/test_settings.py holds a view to a fresh validation, value for value."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

# config.MODELS by name, the models a Schema is made of (a test keeps the two lists equal)
NAMES = (
    "Price",
    "ModelConfig",
    "PageType",
    "Topic",
    "SourcesConfig",
    "LintConfig",
    "WriteConfig",
    "AskConfig",
    "RedactPattern",
    "PrivacyConfig",
    "Schema",
)


def params_of(model: Any) -> dict[str, Any]:
    """What changes the model's answers: part of every action key (config.ModelConfig.params)."""
    return {
        "backend": model.backend,
        "name": model.name,
        "base_url": model.base_url,
        "context": model.context,
        "temperature": model.temperature,
        "max_tokens": model.max_tokens,
        "seed": model.seed,
        "repeat_penalty": model.repeat_penalty,
    }


def type_names_of(schema: Any) -> list[str]:
    """The page types' names (config.Schema.type_names)."""
    return [t.name for t in schema.page_types]


def index_order_of(schema: Any) -> list[str]:
    """The types in the order index.md lists their pages (config.Schema.index_order)."""
    return [*type_names_of(schema), "source", "answer"]


class NotPlain(Exception):
    """A value that pydantic's serializer may write otherwise than as it is."""


class View:
    """One validated model as kept: its fields (in `__dict__`, in the model's order, and
    nothing else there, as a model's), which of them were set, and the model made on demand."""

    __slots__ = ("__dict__", "_set", "_real")

    def __init__(self, fields: dict[str, Any], fields_set: set[str]) -> None:
        self.__dict__.update(fields)
        object.__setattr__(self, "_set", fields_set)
        object.__setattr__(self, "_real", None)

    @property
    def model_fields_set(self) -> set[str]:
        return self._set  # type: ignore[no-any-return]

    def model_dump(self, *, mode: str = "python", **kwargs: Any) -> dict[str, Any]:
        """As config.Strict.model_dump: the fields as they are, without options (the
        build's keys); with options, or a value JSON cannot hold, pydantic's own."""
        if not kwargs:
            try:
                return dumped(self.plain_fields(), mode == "json")
            except NotPlain:
                pass
        return self.real().model_dump(mode=mode, **kwargs)  # type: ignore[no-any-return]

    def plain_fields(self) -> Iterable[tuple[str, Any]]:
        return self.__dict__.items()

    def real(self) -> Any:
        """The pydantic model of these values (as settings.py decodes a kept one)."""
        if self._real is None:
            from wikic.config import MODELS

            fields = {k: _real(v) for k, v in self.__dict__.items()}
            made = MODELS[type(self).__name__].model_construct(set(self._set), **fields)
            object.__setattr__(self, "_real", made)
        return self._real

    def __getattr__(self, name: str) -> Any:
        # only for names that are neither fields nor the view's own: pydantic's API
        if name.startswith("__") or name in View.__slots__:  # (a copy's, before its state is set)
            raise AttributeError(name)
        return getattr(self.real(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        object.__setattr__(self, "_real", None)  # made again from the values as they are now

    def __eq__(self, other: object) -> bool:
        if isinstance(other, View):  # as pydantic compares models: type and values
            return type(self) is type(other) and self.__dict__ == other.__dict__
        if hasattr(other, "__pydantic_fields__"):  # a model: pydantic is loaded already
            return bool(self.real() == other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # as a model's: mutable, unhashable

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.__dict__.items())})"


class ModelConfigView(View):
    __slots__ = ()

    def params(self) -> dict[str, Any]:
        return params_of(self)


class SchemaView(View):
    __slots__ = ()

    def type_names(self) -> list[str]:
        return type_names_of(self)

    def index_order(self) -> list[str]:
        return index_order_of(self)


def _named(name: str, base: type[View]) -> type[View]:
    """A view class called as its model is (what code and messages see of its type)."""
    return type(name, (base,), {"__slots__": (), "__module__": __name__, "__qualname__": name})


VIEWS: dict[str, type[View]] = {
    name: _named(name, {"ModelConfig": ModelConfigView, "Schema": SchemaView}.get(name, View))
    for name in NAMES
}


def _real(value: Any) -> Any:
    if isinstance(value, View):
        return value.real()
    if isinstance(value, list):
        return [_real(v) for v in value]
    if isinstance(value, dict):
        return {k: _real(v) for k, v in value.items()}
    return value


def dumped(fields: Iterable[tuple[str, Any]], json_mode: bool) -> dict[str, Any]:
    """A model's fields (View.plain_fields, config.Strict.plain_fields) as pydantic's serializer
    writes them, where that is the values as they are; NotPlain where it may not be."""
    return {name: plain(value, json_mode) for name, value in fields}


def plain(value: Any, json_mode: bool) -> Any:
    kind = type(value)
    if kind in (str, int, bool) or value is None:
        return value
    if kind is float:
        if json_mode and not math.isfinite(value):  # JSON has no inf or nan: as pydantic says
            raise NotPlain
        return value
    if kind is list:
        return [plain(v, json_mode) for v in value]
    if kind is dict:
        return {plain(k, json_mode): plain(v, json_mode) for k, v in value.items()}
    fields = getattr(value, "plain_fields", None)  # a model within: a View, or wikic's own model
    if fields is not None:
        return dumped(fields(), json_mode)
    raise NotPlain


def view_of(value: Any) -> Any:
    """A kept encoding (settings._encode) as views: what settings._decode makes as models."""
    return decoded(value, lambda name, fields, fields_set: VIEWS[name](fields, fields_set))


def decoded(value: Any, make: Callable[[str, dict[str, Any], set[str]], Any]) -> Any:
    """A kept encoding (settings._encode) with each model in it made by `make(its name, its
    fields, the fields set)`."""
    if isinstance(value, list):
        return [decoded(v, make) for v in value]
    if isinstance(value, dict):
        if "$d" in value:
            return {k: decoded(v, make) for k, v in value["$d"].items()}
        return make(value["$m"], {k: decoded(v, make) for k, v in value["f"].items()}, set(value["s"]))
    return value
