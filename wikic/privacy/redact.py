"""Redaction: the built-in detectors (email, phone, api_key, card, iban) and custom
patterns, replacing each match by a placeholder that is stable within a source
(`[email-1]`: the same value, the same placeholder) before any text reaches a model.

Each detector is one regular expression anchored at a token's start (a lookbehind),
so a scan visits each character a bounded number of times: linear in the text.
A placeholder keeps every newline of what it replaces, so line numbers (and the
citations made from them) never move. Stdlib only: lint and ask import it too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from wikic.hashing import fingerprint
from wikic.sources.read import Source

# Each pattern starts with what it must start with (a literal, or a class of characters), so
# that the regex engine skips ahead to candidates in C; what may not come before a match is
# a lookbehind placed after that first character, or `before` (checked on each candidate).
# Common key and token formats: provider prefixes, JWTs, PEM private keys.
_KEY_TOKEN = (
    r"sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"
    r"|sk_(?:live|test)_[A-Za-z0-9]{16,}|pk_(?:live|test)_[A-Za-z0-9]{16,}|rk_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}"
    r"|glpat-[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|hf_[A-Za-z0-9]{30,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
    r"|-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----[\s\S]{0,10000}?-----END [A-Z ]{0,40}PRIVATE KEY-----"
)
# The value of a `password: ...`, `token = ...`, `api_key: ...` assignment (only the value goes).
_KEY_ASSIGNED = (
    r"[aAsStTpP](?<![\w-][aAsStTpP])"
    r"(?i:(?<=a)(?:pi[_-]?key|ccess[_-]?key|uth)|(?<=s)ecret|(?<=t)oken|(?<=p)(?:assword|asswd))"
    r"[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?(?P<value>[^\s\"'`]{8,})"
)
_BEARER = r"[Bb]earer[ \t]+(?P<value>[A-Za-z0-9._~+/-]{16,}=*)"
_EMAIL_DOMAIN = r"@[A-Za-z0-9][A-Za-z0-9-]{0,62}(?:\.[A-Za-z0-9-]{1,63})+"  # the local part: _EMAIL_LOCAL
_EMAIL_LOCAL = r"(?<![\w.+-])[\w.+-]{1,64}\Z"
_PHONE = (  # +44 20 7946 0958, (555) 123-4567, 020 7946 0958: by their first character
    r"\+(?<![\w+]\+)\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,4}){1,4}(?!\w)",
    r"\((?<![\w+]\()\d{1,4}\)[ .-]?\d{2,4}(?:[ .-]?\d{2,4}){1,4}(?!\w)",
    r"\d(?<![\w+]\d)\d{1,3}(?:[ .-]?\d{2,4}){1,4}(?!\w)",
)
_CARD = r"\d(?<![\w-]\d)(?:[ -]?\d){12,18}(?!\w)"
_IBAN = r"[A-Z](?<![A-Za-z0-9][A-Z])[A-Z]\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])"
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_THOUSANDS = re.compile(r"\d{1,2}(?:[ .]\d{3})+")  # 10 000 000, 1.250.000: a number


_NON_DIGIT = re.compile(r"\D")


def _digits(text: str) -> str:
    return _NON_DIGIT.sub("", text)


def luhn(number: str) -> bool:
    """The Luhn checksum every payment card number passes."""
    total = 0
    for i, ch in enumerate(reversed(number)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _is_card(text: str) -> bool:
    digits = _digits(text)
    return 13 <= len(digits) <= 19 and luhn(digits)


def _is_iban(text: str) -> bool:
    """ISO 13616: the country and check digits moved to the end, letters as numbers, mod 97 is 1."""
    compact = text.replace(" ", "")
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(ch, 36)) for ch in moved)) % 97 == 1


def _is_phone(text: str) -> bool:
    """7 to 15 digits (E.164); an ISO date, a number grouped in thousands or a bare run of
    fewer than 10 digits is not a phone number."""
    digits = _digits(text)
    if not 7 <= len(digits) <= 15 or _ISO_DATE.fullmatch(text) or _THOUSANDS.fullmatch(text):
        return False
    return not text.isdigit() or text.startswith("+") or len(digits) >= 10


@dataclass(frozen=True)
class Detector:
    """One named kind of value to redact."""

    name: str
    pattern: re.Pattern[str]
    check: Callable[[str], bool] | None = None  # a match that fails it is not redacted
    inside: bool = False  # a match right after a letter, digit, _ or - (inside a word) is not one
    left: re.Pattern[str] | None = None  # the part before the match: it must end where the match starts


BUILTIN: dict[str, tuple[Detector, ...]] = {
    "api_key": (
        Detector("api_key", re.compile(_KEY_TOKEN), inside=True),
        Detector("api_key", re.compile(_KEY_ASSIGNED)),
        Detector("api_key", re.compile(_BEARER), inside=True),
    ),
    "email": (Detector("email", re.compile(_EMAIL_DOMAIN), left=re.compile(_EMAIL_LOCAL)),),
    "iban": (Detector("iban", re.compile(_IBAN), _is_iban),),
    "card": (Detector("card", re.compile(_CARD), _is_card),),
    "phone": tuple(Detector("phone", re.compile(p), _is_phone) for p in _PHONE),
}
PRIORITY = ["api_key", "email", "iban", "card", "phone"]  # where two kinds overlap, the first wins


@dataclass(frozen=True)
class Redacted:
    """A text with its values replaced, and which rules fired."""

    text: str
    kinds: tuple[str, ...]  # the rules that matched, in rule order

    @property
    def changed(self) -> bool:
        return bool(self.kinds)


class Redactor:
    """The rules of `privacy.redact`, compiled once; `redact` is pure."""

    def __init__(self, rules: Iterable[str | tuple[str, str]]) -> None:
        custom: list[Detector] = []
        builtin: list[str] = []
        for rule in rules:
            if isinstance(rule, str):
                builtin.append(rule)
            else:
                custom.append(Detector(rule[0], re.compile(rule[1])))
        # custom patterns first: a user's own kind of value is more specific than a built-in one
        self.detectors = custom + [d for name in PRIORITY if name in builtin for d in BUILTIN[name]]

    @classmethod
    def from_config(cls, redact: list[Any]) -> Redactor:
        """From the validated `privacy.redact` list (names, or objects with name and pattern)."""
        rules: list[str | tuple[str, str]] = []
        for rule in redact:
            rules.append(rule if isinstance(rule, str) else (rule.name, rule.pattern))
        return cls(rules)

    @property
    def active(self) -> bool:
        return bool(self.detectors)

    def fingerprint_of(self, kinds: Iterable[str]) -> str:
        """The rules that fired in a text: a digest action's input, so that a change to a
        rule re-examines only the sources it matched (their requests decide the rest)."""
        fired = set(kinds)
        return fingerprint([[d.name, d.pattern.pattern] for d in self.detectors if d.name in fired])

    def source(self, source: Source) -> tuple[Source, str]:
        """A source as the model may see it (its hash stays the file's: lint's staleness
        compares it with the file), and the fingerprint of the rules that fired ("" if none)."""
        red = self.redact(source.text)
        if not red.changed:
            return source, ""
        # replace: a PDF's page map and extractor stay (the redaction keeps every line)
        return replace(source, text=red.text), self.fingerprint_of(red.kinds)

    def lines(self, lines: list[str]) -> list[str]:
        """A whole source's lines, redacted as the build redacted them (one numbering)."""
        if not self.detectors:
            return lines
        return self.redact("\n".join(lines)).text.split("\n")

    def redact(self, text: str) -> Redacted:
        """The text with every match replaced by its placeholder; one text, one numbering."""
        if not self.detectors:
            return Redacted(text, ())
        spans = self._spans(text)
        if not spans:
            return Redacted(text, ())
        numbers: dict[tuple[str, str], str] = {}
        counts: dict[str, int] = {}
        out: list[str] = []
        pos = 0
        for start, end, kind in spans:
            value = text[start:end]
            placeholder = numbers.get((kind, value))
            if placeholder is None:
                counts[kind] = counts.get(kind, 0) + 1
                placeholder = numbers[(kind, value)] = f"[{kind}-{counts[kind]}]"
            out += [text[pos:start], placeholder, "\n" * value.count("\n")]
            pos = end
        out.append(text[pos:])
        fired = tuple(d.name for d in self.detectors if d.name in counts)
        return Redacted("".join(out), fired)

    def _spans(self, text: str) -> list[tuple[int, int, str]]:
        """Non-overlapping (start, end, kind): earliest first; at a tie, the rule listed first."""
        found: list[tuple[int, int, int, str]] = []
        for rank, det in enumerate(self.detectors):
            for m in det.pattern.finditer(text):
                span = _span(det, text, m)
                if span is not None:
                    found.append((span[0], rank, span[1], det.name))
        found.sort()
        spans: list[tuple[int, int, str]] = []
        last = 0
        for start, _, end, kind in found:
            if start >= last:
                spans.append((start, end, kind))
                last = end
        return spans


def _span(det: Detector, text: str, m: re.Match[str]) -> tuple[int, int] | None:
    """Where a detector's match redacts: the `value` group if it has one, extended by `left`;
    None when it is no match after all (inside a word, failing the check)."""
    group = "value" if "value" in det.pattern.groupindex and m.group("value") else 0
    start, end = m.span(group)
    if det.inside and start and (text[start - 1].isalnum() or text[start - 1] in "_-"):
        return None
    if det.left is not None:
        lead = det.left.search(text, max(0, start - 64), start)
        if lead is None:
            return None
        start = lead.start()
    if end <= start or (det.check is not None and not det.check(text[start:end])):
        return None
    return start, end


NONE = Redactor([])
