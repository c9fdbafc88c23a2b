"""privacy.redact: each built-in detector and a custom pattern, what reaches the
(scripted) model, what the pages show, citations to the right lines, and which
actions a change of the rules re-runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from projects import make_project, run_build

from wikic.backends.base import Completion, Request
from wikic.backends.scripted import ScriptedBackend
from wikic.cli.main import cli
from wikic.config import ModelConfig, parse_schema
from wikic.errors import ConfigError
from wikic.privacy.redact import Redactor, luhn
from wikic.project import Project

VALUES = {
    "email": "alice.liddell@example.com",
    "phone": "+44 20 7946 0958",
    "api_key": "sk-proj-Abcdefghijklmnopqrstuvwx0123",
    "card": "4111 1111 1111 1111",
    "iban": "GB82 WEST 1234 5698 7654 32",
    "ticket": "TCK-48213",
}
SECRETS = f"""# Customer escalation

## Contact

Write to **Alice Liddell** at {VALUES["email"]} or call {VALUES["phone"]} before noon.

## Billing

The refund goes to card {VALUES["card"]} and the account {VALUES["iban"]} next week.
Ticket {VALUES["ticket"]} tracks the refund for Alice Liddell.

## Access

The staging token {VALUES["api_key"]} must be rotated; mail {VALUES["email"]} when done.
"""
RULES = """privacy:
  redact: [email, phone, api_key, card, iban, {name: ticket, pattern: 'TCK-\\d+'}]
"""


class Recording:
    """The scripted model, keeping the text of every request it is given."""

    def __init__(self) -> None:
        self.inner = ScriptedBackend(ModelConfig(backend="scripted", name="v1"))
        self.model_id = self.inner.model_id
        self.prompts: list[str] = []

    def complete(self, request: Request) -> Completion:
        self.prompts.append(json.dumps(request.messages, ensure_ascii=False))
        return self.inner.complete(request)

    def stages(self) -> list[str]:
        return ["digest" if "<document" in p else "write" for p in self.prompts]


def redacted_project(tmp_path: Path, rules: str = RULES, prose: bool = True) -> Project:
    project = make_project(
        tmp_path, {"escalation.md": SECRETS, "plain.md": "# Plain\n\nNothing **secret** here.\n"}
    )
    extra = "write:\n  mode: prose\n" if prose else "write:\n  mode: notes\n"
    project.schema_path.write_text(project.schema_path.read_text() + rules + extra, encoding="utf-8")
    return project


def every_file(project: Project, under: str) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in (project.root / under).rglob("*") if p.is_file()}


# --- the detectors -------------------------------------------------------------------
def test_each_kind_becomes_its_placeholder_and_lines_stay() -> None:
    redactor = Redactor(["email", "phone", "api_key", "card", "iban", ("ticket", r"TCK-\d+")])
    out = redactor.redact(SECRETS)
    for kind, value in VALUES.items():
        assert value not in out.text
        assert f"[{kind}-1]" in out.text
    assert out.text.count("[email-1]") == 2  # the same value, the same placeholder
    assert "[email-2]" not in out.text
    assert len(out.text.split("\n")) == len(SECRETS.split("\n"))
    assert set(out.kinds) == set(VALUES)


def test_what_is_not_a_secret_is_kept() -> None:
    redactor = Redactor(["phone", "card", "iban"])
    text = "On 2024-01-15 we sold 1999 units in 12 shops; card 4111 1111 1111 1112 fails Luhn."
    assert redactor.redact(text).text == text
    assert "[iban" not in redactor.redact("GB00 WEST 1234 5698 7654 32 fails mod 97").text
    assert luhn("4111111111111111") and not luhn("4111111111111112")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("call (555) 123-4567 now", "call [phone-1] now"),
        ("ring 020 7946 0958.", "ring [phone-1]."),
        ("tel:+442079460958", "tel:[phone-1]"),
        ("06 12 34 56 78", "[phone-1]"),
        ("10 000 000 people in 1999", "10 000 000 people in 1999"),
        ("x1234567890 and version 1.2.3", "x1234567890 and version 1.2.3"),
        ("a.b+c@sub.example.co.uk, no@tld", "[email-1], no@tld"),
        ("Authorization: Bearer abcdefghijklmnop", "Authorization: Bearer [api_key-1]"),
        ("password: 'hunter2hunter2' and author: Jane", "password: '[api_key-1]' and author: Jane"),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijk", "[api_key-1]"),
        ("AKIAIOSFODNN7EXAMPLE ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[api_key-1] [api_key-2]"),
        ("mysk-proj-abcdefghijklmnopqrstuvwx", "mysk-proj-abcdefghijklmnopqrstuvwx"),  # inside a word
        ("5500 0000 0000 0004 or 378282246310005", "[card-1] or [card-2]"),
        ("DE89 3704 0044 0532 0130 00, FR1420041010050500013M02606", "[iban-1], [iban-2]"),
    ],
)
def test_detector_cases(text: str, expected: str) -> None:
    assert Redactor(["email", "phone", "api_key", "card", "iban"]).redact(text).text == expected


def test_a_multi_line_secret_keeps_its_lines() -> None:
    text = "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\nAAAA\n-----END RSA PRIVATE KEY-----\nafter\n"
    out = Redactor(["api_key"]).redact(text)
    assert "MIIE" not in out.text and out.text.split("\n")[5] == "after"
    assert len(out.text.split("\n")) == len(text.split("\n"))


def test_rules_are_validated_with_their_key_path() -> None:
    with pytest.raises(ConfigError) as err:
        parse_schema("privacy:\n  redact: [email, emial, {name: t, pattern: '(unclosed'}]\n")
    text = str(err.value) + " ".join(err.value.details if hasattr(err.value, "details") else [])
    assert "privacy.redact" in text
    with pytest.raises(ConfigError):
        parse_schema("privacy:\n  redact: [{name: empty, pattern: 'x*'}]\n")


# --- the build -------------------------------------------------------------------------
def test_the_model_sees_placeholders_only_and_pages_hold_no_value(tmp_path: Path) -> None:
    project = redacted_project(tmp_path)
    backend = Recording()
    report, _ = run_build(project, backend)  # type: ignore[arg-type]
    assert report.ok, report.errors
    assert "write" in backend.stages()  # prose mode: notes went to the model too
    sent = "\n".join(backend.prompts)
    for kind, value in VALUES.items():
        assert value not in sent, kind
    assert "[email-1]" in sent and "[ticket-1]" in sent
    wiki = every_file(project, "wiki")
    for kind, value in VALUES.items():
        assert not any(value.encode() in data for data in wiki.values()), kind
    assert any(b"[card-1]" in data for data in wiki.values())


def test_notes_pages_and_lint_agree_with_the_redacted_lines(tmp_path: Path) -> None:
    project = redacted_project(tmp_path, prose=False)
    report, _ = run_build(project)
    assert report.ok, report.errors
    pages = "\n".join(p.read_text() for p in project.wiki_dir.glob("*.md"))
    assert VALUES["email"] not in pages and "[email-1]" in pages
    # every citation points at the line that says it: lint's bad-citation check passes
    result = CliRunner().invoke(cli, ["-C", str(project.root), "lint", "--format", "json"])
    findings = json.loads(result.output)
    assert not [f for f in findings if f["rule"] in ("bad-citation", "stale-page")], findings
    lines = SECRETS.split("\n")
    assert "[iban-1]" in pages and VALUES["iban"] in lines[8]  # line 9: cited as escalation.md:9
    assert "escalation.md:9" in pages


def test_changing_the_rules_rebuilds_exactly_the_sources_they_touch(tmp_path: Path) -> None:
    project = redacted_project(tmp_path, prose=False)
    run_build(project)
    text = project.schema_path.read_text().replace("{name: ticket, pattern: 'TCK-\\d+'}", "")
    project.schema_path.write_text(text.replace("iban, ]", "iban]"), encoding="utf-8")
    report, backend = run_build(project, explain=True)
    assert report.ok, report.errors
    assert backend.digests == 1  # escalation.md only: plain.md matched no rule
    reasons = {e["action"]: e["reason"] for e in report.explain}
    assert "privacy.redact rules changed" in reasons["digest sources/escalation.md"]
    assert "digest sources/plain.md" not in reasons
    assert VALUES["ticket"] in "\n".join(p.read_text() for p in project.wiki_dir.glob("*.md"))
