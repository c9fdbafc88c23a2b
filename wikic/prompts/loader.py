"""Rendering prompt templates: the jinja2 files shipped beside this module, each
overridable by a file of the same name in the project's own prompts/ folder."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wikic.backends.base import Message
from wikic.hashing import FINGERPRINT, digest
from wikic.prompts import PACKAGE_DIR, PROJECT_DIR

if TYPE_CHECKING:
    import jinja2


class Prompts:
    """Renders a stage's system and user templates into chat messages."""

    def __init__(self, root: Path) -> None:
        self.dirs = [root / PROJECT_DIR, PACKAGE_DIR]
        self._hashes: dict[str, str] = {}

    @cached_property
    def env(self) -> jinja2.Environment:
        """Made (and jinja2 imported) at the first prompt rendered: a build whose actions are
        all up to date or cached renders none."""
        import jinja2

        return jinja2.Environment(
            loader=jinja2.FileSystemLoader([str(d) for d in self.dirs]),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=False,
            trim_blocks=True,
            lstrip_blocks=True,
            autoescape=False,
        )

    def source_of(self, name: str) -> Path:
        for d in self.dirs:
            if (d / name).is_file():
                return d / name
        import jinja2  # the error its callers expect, as the environment raises it

        raise jinja2.TemplateNotFound(name)

    def stage_hash(self, stage: str) -> str:
        """A hash of the templates a stage uses, to explain why its prompts changed."""
        if stage not in self._hashes:
            parts = [self.source_of(f"{stage}.{part}.j2").read_bytes() for part in ("system", "user")]
            self._hashes[stage] = digest(b"".join(parts), FINGERPRINT)
        return self._hashes[stage]

    def render(self, stage: str, **context: Any) -> list[Message]:
        return [
            {"role": role, "content": self.env.get_template(f"{stage}.{role}.j2").render(**context).strip()}
            for role in ("system", "user")
        ]


def template_files(root: Path) -> list[Path]:
    """Every template file that can shape a prompt (for watch and the no-op check)."""
    files = sorted(PACKAGE_DIR.glob("*.j2"))
    project = root / PROJECT_DIR
    if project.is_dir():
        files += sorted(project.glob("*.j2"))
    return files
