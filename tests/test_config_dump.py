"""Strict.model_dump without options (config.py) is pydantic's own model_dump, in both modes,
for the default settings and for settings that use every kind of field; with options, or a
value pydantic writes otherwise (a float that JSON cannot hold), it is pydantic's."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from wikic.config import Schema, parse_schema

FULL = """
title: Pottery
scope: glazes and kilns
model: {backend: openai, name: gpt-x, base_url: "http://127.0.0.1:9/v1", temperature: 0.5,
        price: {input: 1.5, output: 6, batch_input: 0.75}}
page_types: [{name: glaze, description: a coating}, {name: kiln}]
topics: [{name: Raku, type: glaze, aliases: [raku firing]}]
rules: [cite every claim]
min_topic_sources: 2
sources: {include: ["**/*.md"], exclude: [drafts/**], part_lines: 40}
lint: {rules: {orphan: "off", stale: error}, citation_threshold: 70}
write: {mode: notes, max_notes: 12}
ask: {budget: 4000, mode: quote}
privacy:
  redact: [email, {name: ticket, pattern: "T-[0-9]+"}]
  local_only: [private/**]
  local_model: {backend: llama, name: smollm2, timeout: .inf}
"""


def _pydantic(model: BaseModel, **options: Any) -> dict[str, Any]:
    return BaseModel.model_dump(model, **options)


@pytest.mark.parametrize("text", ["", FULL])
@pytest.mark.parametrize("mode", ["python", "json"])
def test_a_dump_is_pydantics_own(text: str, mode: str) -> None:
    schema = parse_schema(text)
    mine = schema.model_dump(mode=mode)
    assert mine == _pydantic(schema, mode=mode)
    assert json.dumps(mine, sort_keys=True) == json.dumps(_pydantic(schema, mode=mode), sort_keys=True)
    assert list(mine) == list(_pydantic(schema, mode=mode))  # in the fields' order too
    for part in (schema.model, schema.lint, schema.privacy, *schema.page_types):
        assert part.model_dump(mode=mode) == _pydantic(part, mode=mode)


def test_a_float_json_cannot_hold_is_left_to_pydantic() -> None:
    local = parse_schema(FULL).privacy.local_model
    assert local is not None and local.timeout == float("inf")
    assert local.model_dump(mode="json") == _pydantic(local, mode="json")
    assert local.model_dump()["timeout"] == float("inf")


def test_options_are_pydantics() -> None:
    schema = Schema()
    assert schema.ask.model_dump(exclude={"cache_bytes"}) == _pydantic(schema.ask, exclude={"cache_bytes"})
    assert "cache_bytes" not in schema.ask.model_dump(exclude={"cache_bytes"})
    assert schema.model_dump(exclude_defaults=True) == {}
