"""Rendering prompt templates: the jinja2 files shipped beside this module, each
overridable by a file of the same name in the project's own prompts/ folder, compiled
once per project and template text (jinja2's bytecode cache, under .wikic/)."""

from __future__ import annotations

import contextlib
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wikic.backends.base import Message
from wikic.hashing import FINGERPRINT, digest, fingerprint
from wikic.prompts import PACKAGE_DIR, PROJECT_DIR

if TYPE_CHECKING:
    import jinja2

CACHE_DIR = ".wikic/templates"  # compiled templates, by template text (jinja2's bytecode cache)
# How the environment compiles: part of every cached file's name, so that a wikic that
# compiles otherwise never loads what another compiled (jinja2 keys a file by the template's
# name and text alone, and checks its own and Python's versions)
OPTIONS: dict[str, Any] = {
    "keep_trailing_newline": False,
    "trim_blocks": True,
    "lstrip_blocks": True,
    "autoescape": False,
}


class Prompts:
    """Renders a stage's system and user templates into chat messages."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.dirs = [root / PROJECT_DIR, PACKAGE_DIR]
        self._hashes: dict[str, str] = {}
        self._templates: dict[str, jinja2.Template] = {}  # by file name: found and loaded once
        self._fixed: dict[str, str] = {}  # file name -> its text, where it reads only fixed values
        self._reads: dict[str, set[str]] = {}  # file name -> the context values it reads

    @cached_property
    def env(self) -> jinja2.Environment:
        """Made (and jinja2 imported) at the first prompt rendered: a build whose actions are
        all up to date or cached renders none. Compiling a template costs more than rendering
        it (60 ms a build): where the project has its .wikic/ folder, each template is compiled
        once per text and kept there."""
        import jinja2

        return jinja2.Environment(
            loader=jinja2.FileSystemLoader([str(d) for d in self.dirs]),
            undefined=jinja2.StrictUndefined,
            bytecode_cache=_cache(self.root),
            **OPTIONS,
        )

    def source_of(self, name: str) -> Path:
        for d in self.dirs:
            if (d / name).is_file():
                return d / name
        import jinja2  # the error its callers expect, as the environment raises it

        raise jinja2.TemplateNotFound(name)

    def shipped(self, name: str) -> bool:
        """Whether the template is wikic's own, not the project's."""
        return self.source_of(name).parent == PACKAGE_DIR

    def stage_hash(self, stage: str) -> str:
        """A hash of the templates a stage uses, to explain why its prompts changed."""
        if stage not in self._hashes:
            parts = [self.source_of(f"{stage}.{part}.j2").read_bytes() for part in ("system", "user")]
            self._hashes[stage] = digest(b"".join(parts), FINGERPRINT)
        return self._hashes[stage]

    def render(self, stage: str, fixed: frozenset[str] = frozenset(), **context: Any) -> list[Message]:
        """The stage's system and user messages. `fixed`: the names of the context values that
        are the same at every call of this stage on this Prompts (the schema's, for one
        build): a template that reads nothing else is rendered once (the digest's system
        message, 10,000 times the same text)."""
        out: list[Message] = []
        for role in ("system", "user"):
            name = f"{stage}.{role}.j2"
            text = self._fixed.get(name) if fixed else None
            if text is None:
                template = self._template(name)
                text = template.render(**context).strip()
                if fixed and self.reads(name) <= fixed:
                    self._fixed[name] = text
            out.append({"role": role, "content": text})
        return out

    def _template(self, name: str) -> jinja2.Template:
        """The compiled template: looked up once per build, not checked on disk at each render."""
        found = self._templates.get(name)
        if found is None:
            found = self._templates[name] = self.env.get_template(name)
        return found

    def reads(self, name: str) -> set[str]:
        """The context values a template reads (its undeclared variables), from its source."""
        found = self._reads.get(name)
        if found is None:
            import jinja2.meta

            ast = self.env.parse(self.source_of(name).read_text(encoding="utf-8"))
            found = set(jinja2.meta.find_undeclared_variables(ast))
            if any(True for _ in jinja2.meta.find_referenced_templates(ast)):
                found.add(" other templates")  # what an included one reads is not known here
            self._reads[name] = found
        return found


def template_files(root: Path) -> list[Path]:
    """Every template file that can shape a prompt (for watch and the no-op check)."""
    files = sorted(PACKAGE_DIR.glob("*.j2"))
    project = root / PROJECT_DIR
    if project.is_dir():
        files += sorted(project.glob("*.j2"))
    return files


def _cache(root: Path) -> jinja2.BytecodeCache | None:
    """jinja2's bytecode cache under the project's .wikic/ (None without one: nothing is
    created for a folder that is not built). A file is used only for the template text it
    was compiled from (jinja2 compares a hash of the text); one that cannot be written or
    read is compiled again, never an error."""
    import jinja2

    folder = root / CACHE_DIR
    if not folder.parent.is_dir():
        return None
    try:
        folder.mkdir(exist_ok=True)
    except OSError:
        return None

    class Cache(jinja2.FileSystemBytecodeCache):
        def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            with contextlib.suppress(OSError):  # a full disk, a read-only folder: compiled next time
                super().dump_bytecode(bucket)

    return Cache(str(folder), fingerprint([OPTIONS, jinja2.__version__])[:16] + "-%s.cache")
