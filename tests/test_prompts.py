"""The shipped templates are found where the package keeps them: `wikic.prompts.PACKAGE_DIR`
holds a system and a user template for every stage the code renders, and `Prompts`
renders each stage from there (a template left behind by a move fails here)."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import wikic
import wikic.prompts
from wikic.prompts import PACKAGE_DIR, PROJECT_DIR
from wikic.prompts.loader import CACHE_DIR, Prompts, template_files

PAGE = SimpleNamespace(title="Cats", text="Cats sleep a lot.")
# Each stage with a context like the one its caller passes (templates render with
# StrictUndefined, so a variable missing here fails the render).
STAGES: dict[str, dict[str, Any]] = {
    "digest": {
        "title": "Pets",
        "scope": "house animals",
        "types": ["concept", "entity"],
        "page_types": [SimpleNamespace(name="entity", description="a named thing")],
        "candidates": ["Cats"],
        "max_topics": 6,
        "path": "sources/pets.md",
        "part_index": 0,
        "part_count": 1,
        "lines": [(1, "# Pets"), (3, "Cats sleep a lot.")],
    },
    "write": {
        "title": "Pets",
        "scope": "house animals",
        "page_title": "Cats",
        "page_type": "entity",
        "type_description": "a named thing",
        "rules": ["Short sentences."],
        "max_paragraphs": 3,
        "claims": ["Cats sleep a lot."],
    },
    "ask": {
        "title": "Pets",
        "scope": "house animals",
        "index": "- [[Cats]]",
        "pages": [PAGE],
        "extra_pages": [SimpleNamespace(title="Dogs", text="Dogs need walks.")],
        "question": "Do cats sleep?",
    },
    "lint_unsupported": {
        "title": "Pets",
        "claim": "Cats sleep a lot.",
        "lines": [("sources/pets.md", 3, "Cats sleep a lot.")],
    },
    "lint_contradiction": {
        "title": "Pets",
        "source": "sources/pets.md",
        "statements": [SimpleNamespace(number=1, page="Cats", text="Cats sleep a lot.")],
    },
}


def test_package_dir_is_the_prompts_package_folder() -> None:
    assert Path(wikic.prompts.__file__).parent == PACKAGE_DIR
    assert PACKAGE_DIR.is_relative_to(Path(wikic.__file__).parent)


def test_package_dir_holds_both_templates_of_every_stage_and_no_other() -> None:
    expected = {f"{stage}.{role}.j2" for stage in STAGES for role in ("system", "user")}
    assert {p.name for p in PACKAGE_DIR.glob("*.j2")} == expected


def test_every_stage_here_is_one_the_code_renders() -> None:
    """The stage names stand as string literals in the code that renders them."""
    package = Path(wikic.__file__).parent
    literals: set[str] = set()
    for path in package.glob("**/*.py"):
        if path.parent == PACKAGE_DIR or path.name == "scripted.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        literals |= {
            n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
        }
    assert set(STAGES) <= literals


def test_template_files_are_the_package_dirs(tmp_path: Path) -> None:
    """What watch and the no-op check stat: the shipped templates, wherever they are."""
    assert template_files(tmp_path) == sorted(PACKAGE_DIR.glob("*.j2"))


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_each_stage_renders_from_the_package_dir(stage: str, tmp_path: Path) -> None:
    prompts = Prompts(tmp_path)  # a project without prompts/ of its own
    for role in ("system", "user"):
        assert prompts.source_of(f"{stage}.{role}.j2").parent == PACKAGE_DIR
    messages = prompts.render(stage, **STAGES[stage])
    assert [m["role"] for m in messages] == ["system", "user"]
    assert all(m["content"].strip() for m in messages)
    text = "\n".join(m["content"] for m in messages)
    assert "Pets" in text or "Cats" in text
    assert len(prompts.stage_hash(stage)) == 16


def test_a_project_template_overrides_the_shipped_one(tmp_path: Path) -> None:
    (tmp_path / PROJECT_DIR).mkdir()
    (tmp_path / PROJECT_DIR / "write.user.j2").write_text("Only {{ page_title }}.")
    prompts = Prompts(tmp_path)
    assert prompts.render("write", **STAGES["write"])[1]["content"] == "Only Cats."
    assert prompts.source_of("write.system.j2").parent == PACKAGE_DIR


def test_compiled_templates_are_kept_under_wikic_and_render_as_compiled_afresh(tmp_path: Path) -> None:
    """A project with .wikic/ keeps each template compiled (jinja2's bytecode cache): every
    stage renders from the kept code exactly as from a fresh compile."""
    (tmp_path / ".wikic").mkdir()
    fresh = {stage: Prompts(tmp_path).render(stage, **ctx) for stage, ctx in STAGES.items()}
    kept = sorted((tmp_path / CACHE_DIR).iterdir())
    assert len(kept) == 2 * len(STAGES)
    again = {stage: Prompts(tmp_path).render(stage, **ctx) for stage, ctx in STAGES.items()}
    assert again == fresh
    assert sorted((tmp_path / CACHE_DIR).iterdir()) == kept
    bare = tmp_path / "bare"  # no .wikic/: nothing made
    assert Prompts(bare).render("write", **STAGES["write"]) == fresh["write"]
    assert not bare.exists()


def test_a_kept_compiled_template_is_never_used_for_another_text(tmp_path: Path) -> None:
    """A template edited (same name, same size) renders its new text in the next process's
    Prompts, and its old text again once put back."""
    (tmp_path / ".wikic").mkdir()
    (tmp_path / PROJECT_DIR).mkdir()
    own = tmp_path / PROJECT_DIR / "write.user.j2"
    texts = [("One {{ page_title }}.", "One Cats."), ("Two {{ page_title }}.", "Two Cats.")]
    for text, expected in texts * 2:
        own.write_text(text)
        assert Prompts(tmp_path).render("write", **STAGES["write"])[1]["content"] == expected


def test_an_unwritable_template_cache_is_compiled_again_not_an_error(tmp_path: Path) -> None:
    (tmp_path / ".wikic").mkdir()
    (tmp_path / CACHE_DIR).write_text("not a folder")
    assert Prompts(tmp_path).render("write", **STAGES["write"])[1]["content"]
    (tmp_path / CACHE_DIR).unlink()
    (tmp_path / CACHE_DIR).mkdir()
    Prompts(tmp_path).render("write", **STAGES["write"])
    for kept in (tmp_path / CACHE_DIR).iterdir():
        kept.write_bytes(b"damaged")
    assert Prompts(tmp_path).render("write", **STAGES["write"]) == Prompts(tmp_path / "x").render(
        "write", **STAGES["write"]
    )


def test_a_template_reading_only_fixed_values_is_rendered_once_and_others_each_time(tmp_path: Path) -> None:
    """`fixed` names the values that are the same at every call (the schema's): a system
    message that reads only those is the same text at every call; one that reads a
    per-call value (a project's override reading `path`) is rendered for each call."""
    ctx = STAGES["digest"]
    prompts = Prompts(tmp_path)
    first = prompts.render(
        "digest", fixed=frozenset({"title", "scope", "types", "page_types", "max_topics"}), **ctx
    )
    other = {**ctx, "title": "changed", "path": "sources/other.md", "lines": [(1, "Dogs bark.")]}
    again = prompts.render(
        "digest", fixed=frozenset({"title", "scope", "types", "page_types", "max_topics"}), **other
    )
    assert again[0] == first[0]  # rendered once: the caller said title does not change
    assert again[1] == Prompts(tmp_path).render("digest", **other)[1]  # the user message each time
    assert again[1] != first[1]
    (tmp_path / PROJECT_DIR).mkdir()
    (tmp_path / PROJECT_DIR / "digest.system.j2").write_text("Index {{ path }} for {{ title }}.\n")
    own = Prompts(tmp_path)
    fixed = frozenset({"title"})
    assert own.render("digest", fixed=fixed, **ctx)[0]["content"] == "Index sources/pets.md for Pets."
    assert own.render("digest", fixed=fixed, **other)[0]["content"] == "Index sources/other.md for changed."
    (tmp_path / PROJECT_DIR / "digest.system.j2").write_text('{% include "digest.user.j2" %}\n')
    included = Prompts(tmp_path)  # what an included template reads is not known: never kept
    assert (
        included.render("digest", fixed=fixed, **ctx)[0] != included.render("digest", fixed=fixed, **other)[0]
    )
