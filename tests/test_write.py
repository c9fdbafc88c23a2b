"""The write stage's validator: paragraphs must say what the notes they cite say."""

from __future__ import annotations

import pytest

from wikic.backends.structured import Invalid
from wikic.build.write import validator

NOTES = [
    "Bazel is the open-source version of Google's internal build system, Blaze.",
    "Builds are described in BUILD files with rules that declare their inputs and outputs exactly.",
]
SUPPORTED = "Bazel is the open-source version of Blaze, Google's internal build system."
INVENTED = (
    "The team at Google has continuously maintained it since its first release, "
    "improving performance and reliability of developer tooling worldwide."
)


def test_a_paragraph_the_notes_do_not_support_is_dropped() -> None:
    validate = validator(NOTES, "Bazel", threshold=60)
    out = validate({"paragraphs": [{"text": SUPPORTED, "cites": [1]}, {"text": INVENTED, "cites": [1, 2]}]})
    assert out == {"paragraphs": [{"text": SUPPORTED, "cites": [1]}]}


def test_when_no_paragraph_is_supported_the_model_is_told_why() -> None:
    validate = validator(NOTES, "Bazel", threshold=60)
    with pytest.raises(Invalid, match=r"the notes hold only \d+% of the paragraphs' words; write only what"):
        validate({"paragraphs": [{"text": INVENTED, "cites": [1]}]})


def test_threshold_zero_keeps_any_paragraph_with_text() -> None:
    out = validator(NOTES, "Bazel", threshold=0)({"paragraphs": [{"text": INVENTED, "cites": [1]}]})
    assert [p["text"] for p in out["paragraphs"]] == [INVENTED]
