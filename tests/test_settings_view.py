"""Kept settings read without pydantic (wikic/settingsview.py): a view answers every field,
the fields set, the methods a build calls and every other model method exactly as the
validated model does; and an edit whose schema.yaml was validated before never imports
pydantic (nor PyYAML)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from test_config_dump import FULL
from test_settings import SCHEMAS
from test_uptodate import _edit_source, built

from wikic import settings
from wikic.config import MODELS, parse_schema
from wikic.settingsview import VIEWS, View, view_of

TEXTS = {"default": "", "full": FULL, **{f"settings {k}": v for k, v in SCHEMAS.items()}}


def _typed(value: Any) -> Any:
    """A value with the type of every part of it, to compare types as well as values."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return [type(value).__name__, repr(value)]


def test_there_is_a_view_for_every_model() -> None:
    assert set(VIEWS) == set(MODELS)
    assert all(cls.__name__ == name and issubclass(cls, View) for name, cls in VIEWS.items())


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_a_view_answers_as_the_validated_model(name: str) -> None:
    model = parse_schema(TEXTS[name])
    view = view_of(settings._encode(model))
    assert isinstance(view, View) and type(view).__name__ == "Schema"
    assert view.model_fields_set == model.model_fields_set
    assert view.model.model_fields_set == model.model.model_fields_set
    assert list(vars(view)) == list(vars(model))
    for mode in ("python", "json"):
        assert _typed(view.model_dump(mode=mode)) == _typed(BaseModel.model_dump(model, mode=mode))
        assert _typed(view.lint.model_dump(mode=mode)) == _typed(BaseModel.model_dump(model.lint, mode=mode))
    assert _typed(view.model.params()) == _typed(model.model.params())
    assert view.type_names() == model.type_names() and view.index_order() == model.index_order()
    assert [t.model_dump() for t in view.page_types] == [t.model_dump() for t in model.page_types]
    # anything else is the model's own: options, JSON, copies
    assert view.model_dump(exclude={"ask"}) == model.model_dump(exclude={"ask"})
    assert view.model.model_dump_json() == model.model.model_dump_json()
    assert view.model_copy(update={"title": "x"}).title == "x" and view.title == model.title
    assert view == model and model == view and view == view_of(settings._encode(model))
    assert view != view_of(settings._encode(model.model_copy(update={"title": "other"})))
    assert repr(view) == repr(model)
    real = view.real()
    assert type(real) is type(model) and real == model and real.model_fields_set == model.model_fields_set


def test_a_view_changed_is_asked_of_the_model_as_changed() -> None:
    view = view_of(settings._encode(parse_schema(FULL)))
    assert view.model.model_dump_json()  # the model made once
    view.model.name = "other"
    assert json.loads(view.model.model_dump_json())["name"] == "other"


def test_an_edit_takes_its_settings_without_importing_pydantic(tmp_path: Path) -> None:
    built(tmp_path / "first")  # its settings kept in this process too
    project = built(tmp_path / "p")  # the same schema.yaml's bytes: its settings kept there as well
    _edit_source(project)
    code = (
        "import json, sys\n"
        "from wikic.cli.entry import main\n"
        f"sys.argv = ['wikic', '-C', {str(project.root)!r}, 'build', '--json', '-q']\n"
        "try:\n    main()\n"
        "except SystemExit as e:\n    assert not e.code, e.code\n"
        "print(json.dumps(sorted(m for m in ('pydantic', 'yaml') if m in sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
    )
    report, heavy = out.stdout.strip().rsplit("\n", 1)
    assert not json.loads(report)["nothing_to_do"] and json.loads(report)["actions"]["ran"]
    assert json.loads(heavy) == []
