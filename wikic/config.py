"""schema.yaml: the pydantic model of a wiki's configuration, and loading it with
every problem reported at once, by key path and line; a schema.yaml validated before
(same bytes, same wikic, pydantic and PyYAML) is taken as validated from .wikic/."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from wikic.errors import ConfigError
from wikic.settingsview import NotPlain, dumped, index_order_of, params_of, type_names_of

if TYPE_CHECKING:  # imported where a schema.yaml is parsed: one validated before is not
    import yaml

# pydantic looks for plugins when it builds its first model, reading the entry points of
# every installed distribution (24 ms with the 186 of the machine that measured it), at
# the start of every build that does work and of every `wikic lint` and `ask`. wikic's
# models have no use for a plugin: they are built with plugins off, unless the user set
# PYDANTIC_DISABLE_PLUGINS, and the variable is taken back after each (_no_plugins).
_PLUGINS = "PYDANTIC_DISABLE_PLUGINS"


@contextlib.contextmanager
def _no_plugins() -> Iterator[None]:
    user_set = _PLUGINS in os.environ
    os.environ.setdefault(_PLUGINS, "__all__")
    try:
        yield
    finally:
        if not user_set:
            os.environ.pop(_PLUGINS, None)


def _yaml_off(value: Any) -> Any:
    """A bare `off` in schema.yaml: YAML 1.1 (PyYAML) reads it as false, the setting means "off"."""
    return "off" if value is False else value


Level = Annotated[Literal["error", "warning", "off"], BeforeValidator(_yaml_off)]


class Strict(BaseModel):
    # built at their first validation, not at import: a build whose schema.yaml was
    # validated before never validates it (load_schema), and never pays for the building
    model_config = ConfigDict(extra="forbid", defer_build=True)

    def model_dump(
        self, *, mode: Literal["json", "python"] | str = "python", **kwargs: Any
    ) -> dict[str, Any]:
        """pydantic's model_dump; without options, the same dict made from the fields as they
        are, so that an edit, which dumps the settings for its keys, never builds pydantic's
        serializers (25 ms). tests/test_config_dump.py holds it to pydantic's own."""
        if not kwargs:
            with contextlib.suppress(NotPlain):
                return dumped(self.plain_fields(), mode == "json")
        return super().model_dump(mode=mode, **kwargs)

    def plain_fields(self) -> Iterator[tuple[str, Any]]:
        """The fields for settingsview.dumped: wikic's own models only (MODELS), whose fields
        pydantic's serializer writes as they are."""
        if type(self) not in MODELS.values():
            raise NotPlain
        return ((name, getattr(self, name)) for name in type(self).model_fields)


class Price(Strict):
    """Dollars per million tokens, as the provider's price list says: wikic never guesses one."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    batch_input: float | None = Field(default=None, ge=0)  # through the Batch API (often half)
    batch_output: float | None = Field(default=None, ge=0)


class ModelConfig(Strict):
    """Which model compiles the wiki, and how it is called."""

    backend: Literal["llama", "openai", "scripted"] = "llama"
    name: str = "smollm2"
    base_url: str | None = None
    api_key_env: str | None = None
    context: int = Field(default=8192, ge=512)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=512, ge=16)
    jobs: int = Field(default=1, ge=1, le=64)
    timeout: float = Field(default=120.0, gt=0)
    retries: int = Field(default=4, ge=0, le=20)
    seed: int = 0
    repeat_penalty: float = Field(default=1.1, ge=0.5, le=2.0)  # llama backend: discourages loops
    latency: float = Field(default=0.0, ge=0.0)  # scripted backend only: seconds per call
    # issue 17: the provider's Batch API (openai backend) and prices; none of it changes an answer
    # auto: a stage with at least batch_min pending actions
    batch: Annotated[Literal["off", "auto"], BeforeValidator(_yaml_off)] = "off"
    batch_min: int = Field(default=100, ge=1)
    batch_poll: float = Field(default=60.0, gt=0)  # seconds between looks at a batch with --wait
    price: Price | None = None  # for --dry-run's estimate and the report's cost

    def params(self) -> dict[str, Any]:
        """What changes the model's answers: part of every action key."""
        return params_of(self)


class PageType(Strict):
    name: str
    description: str = ""

    @field_validator("name")
    @classmethod
    def _slug_like(cls, v: str) -> str:
        if not v or not v.replace("-", "").replace("_", "").isalnum():
            raise ValueError("page type names are single words (letters, digits, - or _)")
        return v


class Topic(Strict):
    """A topic pinned by the user: always a page, with aliases merged into it."""

    name: str = Field(min_length=1, max_length=120)
    type: str = "concept"
    aliases: list[str] = []


class SourcesConfig(Strict):
    # text as it is; the other formats through their extractors (sources/formats.py, the same list)
    include: list[str] = [
        *("**/*.md", "**/*.txt", "**/*.markdown", "**/*.pdf", "**/*.docx", "**/*.pptx"),
        *("**/*.xlsx", "**/*.csv", "**/*.html", "**/*.htm", "**/*.epub"),
    ]
    exclude: list[str] = []
    max_bytes: int = Field(default=5_000_000, ge=1)
    part_lines: int = Field(default=120, ge=10)  # longer sources are digested in parts
    max_parts: int = Field(default=100, ge=1)  # a source needing more parts (model calls) is refused


class LintConfig(Strict):
    rules: dict[str, Level] = {}
    missing_page_threshold: int = Field(default=3, ge=2)
    citation_threshold: int = Field(default=60, ge=0, le=100)
    duplicate_threshold: int = Field(default=92, ge=50, le=100)


class WriteConfig(Strict):
    """How topic pages are written from their notes."""

    # prose: the model writes paragraphs, checked sentence by sentence; notes: the page is its
    # notes' own sentences, no model call; auto: notes for a model known to be small
    mode: Literal["auto", "prose", "notes"] = "auto"
    max_notes: int = Field(default=40, ge=1)  # notes written into a page's text; the rest are listed


class AskConfig(Strict):
    budget: int = Field(default=6000, ge=256)  # prompt tokens for the prefix + pages
    answer_tokens: int = Field(default=256, ge=16)
    cache_bytes: int = Field(default=2_000_000_000, ge=0)  # total size of saved prefix states
    mode: Literal["answer", "quote"] = "answer"  # quote: the pages' own sentences, no model call


class RedactPattern(Strict):
    """A custom kind of value to redact: its placeholder name and a regular expression."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,30}$")
    pattern: str = Field(min_length=1)

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            compiled = re.compile(v)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from exc
        if compiled.fullmatch(""):
            raise ValueError("the pattern matches the empty string; make it match at least one character")
        return v


class PrivacyConfig(Strict):
    """What may reach a model: redaction rules, and sources kept off remote backends."""

    # built-in detector names, or {name, pattern}; matches become placeholders like [email-1]
    redact: list[Literal["email", "phone", "api_key", "card", "iban"] | RedactPattern] = []
    local_only: list[str] = []  # globs under sources/ that never reach a remote backend
    local_model: ModelConfig | None = None  # runs their actions when model: is remote

    @field_validator("redact")
    @classmethod
    def _distinct(cls, v: list[Any]) -> list[Any]:
        names = [r if isinstance(r, str) else r.name for r in v]
        clash = sorted({n for n in names if names.count(n) > 1})
        if clash:
            raise ValueError(f"{', '.join(clash)} listed twice (custom names differ from the built-in ones)")
        return v


class Schema(Strict):
    """The whole of schema.yaml."""

    title: str = "Wiki"
    scope: str = ""
    model: ModelConfig = Field(default_factory=ModelConfig)
    page_types: list[PageType] = Field(
        default_factory=lambda: [
            PageType(name="concept", description="an idea, method or technique"),
            PageType(name="entity", description="a named thing: a tool, person, project or product"),
        ]
    )
    topics: list[Topic] = []
    rules: list[str] = []
    min_topic_sources: int = Field(default=1, ge=1)
    sources: SourcesConfig = Field(default_factory=SourcesConfig)
    lint: LintConfig = Field(default_factory=LintConfig)
    write: WriteConfig = Field(default_factory=WriteConfig)
    ask: AskConfig = Field(default_factory=AskConfig)
    privacy: PrivacyConfig = Field(default_factory=PrivacyConfig)

    def type_names(self) -> list[str]:
        return type_names_of(self)

    def index_order(self) -> list[str]:
        """The types in the order index.md lists their pages: the schema's, then the source
        pages and the saved answers (the others after them, by name)."""
        return index_order_of(self)


def _line_index(node: yaml.Node, path: tuple[Any, ...], out: dict[tuple[Any, ...], int]) -> None:
    import yaml

    out[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            out[path + (key.value,)] = key.start_mark.line + 1
            _line_index(value, path + (key.value,), out)
            out[path + (key.value,)] = key.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _line_index(item, path + (i,), out)


def _line_for(lines: dict[tuple[Any, ...], int], loc: tuple[Any, ...]) -> int | None:
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return None


def parse_schema(text: str, name: str = "schema.yaml") -> Schema:
    """Validate schema.yaml's text; raise ConfigError listing every problem."""
    import yaml

    try:
        node = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{name}:{mark.line + 1}" if mark else name
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{where}: invalid YAML: {problem}") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{name}:1: the top level must be a mapping of keys (title:, model:, ...)")
    lines: dict[tuple[Any, ...], int] = {}
    if node is not None:
        _line_index(node, (), lines)
    try:
        with _no_plugins():  # the models are built at the first validation
            return Schema.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(err["loc"])
            key = ".".join(str(p) for p in loc) or "(top)"
            line = _line_for(lines, loc)
            msg = err["msg"]
            if err["type"] == "extra_forbidden":
                msg = "unknown key (check the spelling; see the example schema.yaml)"
            problems.append(f"{name}:{line}: {key}: {msg}" if line else f"{name}: {key}: {msg}")
        raise ConfigError(f"{name} has {len(problems)} problem(s):", problems) from exc


def load_schema(path: Path) -> Schema:
    """schema.yaml at `path`, validated (parse_schema), or as validated before (settings.py,
    where the build imports it from: without pydantic)."""
    from wikic import settings

    return settings.load_schema(path)


MODELS: dict[str, type[Strict]] = {
    cls.__name__: cls
    for cls in (Price, ModelConfig, PageType, Topic, SourcesConfig, LintConfig)
    + (WriteConfig, AskConfig, RedactPattern, PrivacyConfig, Schema)
}  # every model a Schema is made of, by name (settings.py takes them back by these names)
