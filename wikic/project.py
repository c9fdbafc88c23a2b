"""A project on disk: finding its root from any folder below it, its paths,
and `wikic init` creating a new one."""

from __future__ import annotations

from pathlib import Path

from wikic.errors import ProjectError

SCHEMA_FILE = "schema.yaml"

INIT_SCHEMA = """\
# schema.yaml: what this wiki is. `wikic build` compiles sources/ into wiki/ from it.
# Every key is optional; the values below are the defaults unless said otherwise.

title: {title}
scope: ""                    # one line on what belongs in this wiki (shown to the model)

model:
  backend: llama             # llama (local GGUF) | openai (any OpenAI-compatible server)
  name: smollm2              # smollm2 = the embedded SmolLM2-135M-Instruct; or a path to a .gguf,
                             # or the model name on an OpenAI-compatible server
  # base_url: http://127.0.0.1:8080/v1   # openai backend: the server's address
  # api_key_env: OPENAI_API_KEY          # openai backend: the variable that holds the key
  context: 8192              # context window in tokens
  temperature: 0.0
  max_tokens: 512            # longest answer per call
  jobs: 1                    # parallel requests (API backends; `wikic build -j N` overrides)

page_types:                  # the kinds of topic page; every source also gets a `source` page
  - name: concept
    description: an idea, method or technique
  - name: entity
    description: a named thing such as a tool, person, project or product

topics: []                   # topics that always get a page, with names merged into them:
#  - name: Vector databases
#    type: concept
#    aliases: [vector store, vector DB]

rules: []                    # writing rules for every page, e.g. "Use present tense."

lint:
  rules: {{}}                # per-rule level: error | warning | off, e.g. {{orphan-page: off}}

ask:
  budget: 6000               # prompt tokens for the wiki in `wikic ask`
"""


class Project:
    """A project's root folder and the paths in it. A plain class, not a dataclass: the no-op
    build imports this, and `dataclasses` (with `inspect`) costs it 7 ms."""

    __slots__ = ("root",)
    root: Path

    def __init__(self, root: Path) -> None:
        object.__setattr__(self, "root", root)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Project is immutable: cannot set {name}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Project) and other.root == self.root

    def __hash__(self) -> int:
        return hash(self.root)

    def __repr__(self) -> str:
        return f"Project(root={self.root!r})"

    def __reduce__(self) -> tuple[type[Project], tuple[Path]]:
        return (Project, (self.root,))

    @property
    def schema_path(self) -> Path:
        return self.root / SCHEMA_FILE

    @property
    def sources_dir(self) -> Path:
        return self.root / "sources"

    @property
    def wiki_dir(self) -> Path:
        return self.root / "wiki"

    @property
    def state_dir(self) -> Path:
        return self.root / ".wikic"

    @property
    def state_path(self) -> Path:
        return self.state_dir / "state.db"

    @property
    def lock_path(self) -> Path:
        return self.state_dir / "lock"


def find_project(start: Path) -> Project:
    """The nearest folder at or above `start` holding schema.yaml, like git finds .git."""
    start = start.resolve()
    for folder in [start, *start.parents]:
        if (folder / SCHEMA_FILE).is_file():
            return Project(folder)
    raise ProjectError(
        f"no {SCHEMA_FILE} in {start} or any folder above it; "
        "run `wikic init` to start a project, or use -C DIR"
    )


def init_project(folder: Path, title: str | None = None) -> Project:
    """Create schema.yaml, sources/, wiki/ and a .gitignore entry; never overwrite."""
    folder = folder.resolve()
    if (folder / SCHEMA_FILE).exists():
        raise ProjectError(f"{folder / SCHEMA_FILE} already exists: this is already a wikic project")
    folder.mkdir(parents=True, exist_ok=True)
    name = title or folder.name.replace("-", " ").replace("_", " ").strip().title() or "Wiki"
    (folder / SCHEMA_FILE).write_text(INIT_SCHEMA.format(title=_yaml_str(name)), encoding="utf-8")
    (folder / "sources").mkdir(exist_ok=True)
    (folder / "wiki").mkdir(exist_ok=True)
    ignore = folder / ".gitignore"
    existing = ignore.read_text(encoding="utf-8") if ignore.exists() else ""
    if ".wikic/" not in existing.split():
        sep = "" if not existing or existing.endswith("\n") else "\n"
        ignore.write_text(existing + sep + ".wikic/\n", encoding="utf-8")
    return Project(folder)


def _yaml_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
