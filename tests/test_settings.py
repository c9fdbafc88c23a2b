"""schema.yaml as validated before (wikic/settings.py): kept in .wikic/ by its bytes, taken
back by another process equal to a fresh validation in every value, type and field set;
never for other bytes, never for a schema.yaml with a problem, never an error of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wikic.config import parse_schema
from wikic.errors import ConfigError
from wikic.project import init_project

SCHEMAS = {
    "empty": "",
    "full": (
        "title: Pets\nscope: house animals\n"
        "model:\n  backend: openai\n  name: m\n  base_url: http://127.0.0.1:1/v1\n  temperature: 1\n"
        "  price: {input: 1, output: 2.5}\n"
        "page_types:\n  - {name: concept}\n  - {name: place, description: where}\n"
        "topics:\n  - {name: Cats, aliases: [cat, kitty]}\n"
        "rules: [Short sentences.]\nmin_topic_sources: 2\n"
        "sources: {include: ['**/*.md'], exclude: [drafts/**], part_lines: 50}\n"
        "lint:\n  rules: {orphan-page: 'off', broken-link: warning}\n  citation_threshold: 70\n"
        "write: {mode: notes}\nask: {mode: quote}\n"
        "privacy:\n  redact: [email, {name: ticket, pattern: 'T-[0-9]+'}]\n  local_only: [secret/**]\n"
        "  local_model: {backend: llama, name: tiny, jobs: 2}\n"
    ),
}

# run in a process of its own: what it loads is what another wikic process would load
SHOW = """
import json, sys
from pathlib import Path
from wikic.config import load_schema

def show(v):
    if hasattr(v, "model_fields_set"):
        fields = {k: show(x) for k, x in v.__dict__.items()}
        return [type(v).__name__, sorted(v.model_fields_set), fields]
    if isinstance(v, list):
        return ["list", [show(x) for x in v]]
    if isinstance(v, dict):
        return ["dict", {k: show(x) for k, x in v.items()}]
    return [type(v).__name__, v]

try:
    print(json.dumps([show(load_schema(Path(sys.argv[1]))), "yaml" in sys.modules]))
except Exception as exc:
    print(json.dumps([f"{type(exc).__name__}: {exc} {getattr(exc, 'problems', '')}", "yaml" in sys.modules]))
"""


def loaded(path: Path) -> tuple[Any, bool]:
    """What a new process loads from `path`, and whether it imported PyYAML to do so."""
    out = subprocess.run(
        [sys.executable, "-c", SHOW, str(path)], capture_output=True, text=True, check=True, env=os.environ
    )
    shown, parsed = json.loads(out.stdout)
    return shown, parsed


def validated(text: str) -> Any:
    """What a fresh validation of `text` gives, shown as SHOW shows it."""
    namespace: dict[str, Any] = {}
    exec(SHOW.split("try:")[0], namespace)
    return json.loads(json.dumps(namespace["show"](parse_schema(text))))


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_kept_settings_equal_a_fresh_validation(tmp_path: Path, name: str) -> None:
    project = init_project(tmp_path)
    project.state_dir.mkdir()
    project.schema_path.write_text(SCHEMAS[name])
    first, parsed = loaded(project.schema_path)
    assert parsed and (project.state_dir / "settings.json").is_file()
    again, parsed = loaded(project.schema_path)
    assert not parsed  # taken as kept: PyYAML not even imported
    assert first == again == validated(SCHEMAS[name])


def test_kept_settings_are_never_taken_for_other_bytes(tmp_path: Path) -> None:
    """The same size, one letter changed, then back: each time the settings of the bytes there."""
    project = init_project(tmp_path)
    project.state_dir.mkdir()
    for title in ["Aaa", "Bbb", "Aaa", "Bbb"]:
        project.schema_path.write_text(f"title: {title}\nmodel: {{backend: scripted}}\n")
        shown, _ = loaded(project.schema_path)
        assert shown[2]["title"] == ["str", title]
        assert shown == validated(project.schema_path.read_text())


def test_a_schema_with_a_problem_is_reported_every_time_never_kept(tmp_path: Path) -> None:
    project = init_project(tmp_path)
    project.state_dir.mkdir()
    good = "title: T\nmodel: {backend: scripted}\n"
    project.schema_path.write_text(good)
    loaded(project.schema_path)
    bad = "title: T\nmodel: {backend: nope}\n"
    project.schema_path.write_text(bad)
    with pytest.raises(ConfigError) as fresh:
        parse_schema(bad)
    for _ in range(2):
        shown, parsed = loaded(project.schema_path)
        assert parsed and shown == f"ConfigError: {fresh.value} {fresh.value.problems}"
        assert "schema.yaml:2: model.backend" in shown
    project.schema_path.write_text(good)
    assert loaded(project.schema_path)[0] == validated(good)


def test_a_damaged_or_foreign_settings_file_is_validated_again(tmp_path: Path) -> None:
    project = init_project(tmp_path)
    project.state_dir.mkdir()
    text = "title: T\nmodel: {backend: scripted, jobs: 3}\n"
    project.schema_path.write_text(text)
    kept = project.state_dir / "settings.json"
    for damage in ["", "{not json", '{"key": 1}', "[]"]:
        kept.write_text(damage)
        assert loaded(project.schema_path) == (validated(text), True)
    saved = json.loads(kept.read_text())  # the right key with settings made up: a wrong shape
    saved["settings"] = {"$m": "NoSuchModel", "f": {}, "s": []}
    kept.write_text(json.dumps(saved))
    assert loaded(project.schema_path) == (validated(text), True)
    kept.unlink()
    kept.mkdir()  # cannot be written: still no error
    assert loaded(project.schema_path) == (validated(text), True)


def test_nothing_is_kept_without_a_wikic_folder(tmp_path: Path) -> None:
    project = init_project(tmp_path)
    assert not project.state_dir.exists()
    shown, parsed = loaded(project.schema_path)
    assert parsed and shown == validated(project.schema_path.read_text())
    assert not project.state_dir.exists()


def test_a_bare_off_in_schema_yaml_means_off() -> None:
    """YAML 1.1 reads a bare `off` as false: `orphan-page: off`, as `wikic lint --help` writes
    it, and `batch: off` are the settings' "off", not a problem."""
    text = "title: T\nmodel:\n  batch: off\nlint:\n  rules:\n    orphan-page: off\n    uncited-claim: error\n"
    schema = parse_schema(text)
    assert schema.lint.rules == {"orphan-page": "off", "uncited-claim": "error"}
    assert schema.model.batch == "off"
    with pytest.raises(ConfigError, match="orphan-page"):
        parse_schema("title: T\nlint:\n  rules:\n    orphan-page: on\n")  # true: no level
