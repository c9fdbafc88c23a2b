"""The digest stage: one model action per source part, returning a summary and
the topics the part covers, each anchored to the line numbers that support it.

The model only names topics and points at lines; claim text is then taken from
the source itself, so every claim is verifiable by construction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from rapidfuzz import fuzz

from wikic.backends.base import Message, Request
from wikic.backends.structured import Invalid
from wikic.build.actions import Action, action_key
from wikic.hashing import fingerprint, text_hash
from wikic.prompts.loader import Prompts
from wikic.sources.read import HEADING, Part, Source, split_parts
from wikic.wiki.page import WIKILINK, clean_title
from wikic.wiki.support import check_against, judge, sentences

if TYPE_CHECKING:
    from wikic.config import Schema

VERSION = 2  # of the validated answer: bump when the same answer would validate differently
MAX_TOPICS = 8
MAX_SUMMARY = 3  # summary sentences
MAX_LINES = 12
MAX_CANDIDATES = 12
MENTION = 85  # rapidfuzz partial_ratio at which a line mentions a name
EMPHASIS = re.compile(r"\*\*([^*\n]{2,60})\*\*|__([^_\n]{2,60})__|`([^`\n]{2,40})`")
# Capitalised phrases, not at the start of the text or of a sentence, starting a word. The checks
# on what comes before its capital are made after it (lookbehinds that take it in): a pattern
# that starts with the capital is scanned for it, not tried at every character (4x quicker).
PROPER = re.compile(
    r"([A-Z](?<![.!?]\s[A-Z])(?<!^[A-Z])(?<!\w[A-Z])[\w-]+(?:\s+(?:of|for|la|à|de|the)?\s*[A-Z][\w-]+)+)"
)
SENTENCE = re.compile(r"(?<=[.!?])\s+")
MARKUP = re.compile(r"<[^>\n]*>")
WORDS = re.compile(r"\w+")
# the digest prompt's values that come from schema.yaml alone: the same for every source of a build
SCHEMA_VALUES = frozenset({"title", "scope", "types", "page_types", "max_topics"})


def response_schema(types: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "topics": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_TOPICS,
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "maxLength": 80},
                        "type": {"type": "string", "enum": types},
                        "lines": {"type": "array", "items": {"type": "integer"}, "maxItems": MAX_LINES},
                    },
                    "required": ["name", "type", "lines"],
                },
            },
            "summary": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_SUMMARY,
                "items": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string", "maxLength": 300},
                        "lines": {"type": "array", "items": {"type": "integer"}, "maxItems": 3},
                    },
                    "required": ["text", "lines"],
                },
            },
        },
        "required": ["topics", "summary"],
    }


def to_ranges(numbers: list[int]) -> list[list[int]]:
    """[3, 4, 5, 9] -> [[3, 5], [9, 9]]"""
    ranges: list[list[int]] = []
    for n in sorted(set(numbers)):
        if ranges and n == ranges[-1][1] + 1:
            ranges[-1][1] = n
        else:
            ranges.append([n, n])
    return ranges


def candidates(lines: list[str], part: Part) -> list[str]:
    """Names the part's own text marks as subjects: headings, emphasis, capitalised phrases.

    Offered to the model as hints; a weak model picks from them instead of inventing.
    """
    found: dict[str, None] = {}
    for n in range(part.start, part.end + 1):
        line = lines[n - 1]
        heading = HEADING.match(line)
        if heading and n > 1:
            found.setdefault(clean_title(heading.group(1), 80), None)
            continue
        for groups in EMPHASIS.findall(line) if "**" in line or "__" in line or "`" in line else ():
            found.setdefault(clean_title(next(g for g in groups if g), 80), None)
        for phrase in PROPER.findall(line.lstrip("#>-* ")):
            found.setdefault(clean_title(phrase, 80), None)
    return [name for name in found if name][:MAX_CANDIDATES]


def says_more(line: str, name: str) -> bool:
    """Whether a line holds more than the name: a title line "Cecil Parker" is no claim about him."""
    return bool(_words(line) - _words(name))


@lru_cache(maxsize=1 << 14)  # a name is asked about with each line naming it, a line with each name
def _words(text: str) -> frozenset[str]:
    return frozenset(WORDS.findall(text.casefold()))


def forget_words() -> None:
    """Let go of the words of the lines asked about (_words): 16,384 lines' sets, 25 MB, which
    the stages after the plan never ask for."""
    _words.cache_clear()


def _text_lines(lines: list[str], start: int, end: int) -> list[int]:
    """The numbers of start..end's text lines: not blank, not headings."""
    return [n for n in range(start, end + 1) if lines[n - 1].strip() and not HEADING.match(lines[n - 1])]


def _claim_lines(name: str, lines: list[str], text: list[int]) -> list[int]:
    """Of the text lines `text`, those that could support a claim about `name`: not the bare name."""
    named = _words(name)
    return [n for n in text if not _words(lines[n - 1]) <= named]  # says_more, its name's words once


def mentions(name: str, lines: list[str], numbers: list[int]) -> list[int]:
    """Those of `numbers` whose line names `name` (fuzzily)."""
    key = name.casefold()
    return _mentioned(key, [(n, lines[n - 1].casefold()) for n in numbers])


def _mentioned(key: str, folded: list[tuple[int, str]]) -> list[int]:
    """`mentions` over lines already case-folded: (number, line)."""
    found = []
    for n, line in folded:
        # a line holding the name as it is scores 100 (unless the name is ""): no fuzzy match;
        # the cutoff lets rapidfuzz give up on a line early (about half the time)
        if (key and key in line) or fuzz.partial_ratio(key, line, score_cutoff=MENTION) >= MENTION:
            found.append(n)
    return found


def supporting_lines(name: str, lines: list[str]) -> list[int]:
    """Lines of a whole source that name `name` and say something about it."""
    return mentions(name, lines, _claim_lines(name, lines, _text_lines(lines, 1, len(lines))))[:MAX_LINES]


class _PartText:
    """A part's text lines (_text_lines) with what every topic's grounding reads of each, made
    once per answer validated, not once per topic: its case-folded text, and its words where
    a topic asks whether the line says more than its name (most lines are never asked)."""

    def __init__(self, lines: list[str], part: Part) -> None:
        self.lines = lines
        # _text_lines and _sections in one pass: each line matched against HEADING once
        self.numbers: list[int] = []
        self.sections: dict[str, list[int]] = {}
        current: list[int] | None = None
        for n in range(part.start, part.end + 1):
            line = lines[n - 1]
            heading = HEADING.match(line)
            if heading:
                current = self.sections.setdefault(clean_title(heading.group(1), 80).casefold(), [])
            elif line.strip():
                self.numbers.append(n)
                if current is not None:
                    current.append(n)
        self.text = set(self.numbers)
        self.folded = [(n, lines[n - 1].casefold()) for n in self.numbers]
        self._words: dict[int, frozenset[str]] = {}  # a text line's words, once asked for

    def words_of(self, n: int) -> frozenset[str]:
        words = self._words.get(n)
        if words is None:
            words = self._words[n] = _words(self.lines[n - 1])
        return words

    def says_more(self, n: int, named: frozenset[str]) -> bool:
        """Whether text line n holds more words than a name's (says_more)."""
        return not self.words_of(n) <= named

    def grounded(self, name: str, proposed: list[int]) -> list[int]:
        """The lines that support a topic: the model's where they mention it, else the lines
        that do (its section, for a heading). Empty when nothing in the part does. Of the text
        lines, only those that say more than the name can (says_more): asked of the lines
        that mention it and the model's, the same as asked of every line first."""
        named, key = _words(name), name.casefold()
        mentioned = self.sections.get(key) or [
            n for n in _mentioned(key, self.folded) if self.says_more(n, named)
        ]
        proposed = [n for n in proposed if n in self.text and self.says_more(n, named)]
        if mentioned:
            agreed = [n for n in proposed if n in mentioned]
            return (agreed or mentioned)[:MAX_LINES]
        words = {w for w in named if len(w) > 3}
        return [n for n in proposed if words & self.words_of(n)][:MAX_LINES]


def clean_summary(text: str) -> str:
    """Two or three distinct sentences: small models repeat themselves. Plain text: the
    model's HTML and [[links]] (to pages that may not exist) are dropped, as in page prose."""
    text = WIKILINK.sub(lambda m: m.group(3) or m.group(1), MARKUP.sub("", text))
    sentences: list[str] = []
    for sentence in SENTENCE.split(" ".join(text.split())):
        if sentence and sentence not in sentences:
            sentences.append(sentence)
    summary = " ".join(sentences[:3])
    return summary if len(summary) <= 400 else summary[:399].rsplit(" ", 1)[0] + "…"


def summary_sentences(
    raw: Any, lines: list[str], part: Part, threshold: float, text: list[int] | None = None
) -> list[dict[str, Any]]:
    """The model's summary sentences that the shared check supports, each with the few lines
    of the part that carry it (the model's, where they do; else the best ones). `text`: the
    part's text lines, where known (_PartText.numbers)."""
    items = raw if isinstance(raw, list) else [{"text": str(raw or ""), "lines": []}]
    numbers = (
        text
        if text is not None
        else [n for n in range(part.start, part.end + 1) if n <= len(lines) and _is_text(lines[n - 1])]
    )
    texts = [lines[n - 1] for n in numbers]
    out: list[dict[str, Any]] = []
    for item in items[:MAX_SUMMARY]:
        item = item if isinstance(item, dict) else {"text": str(item), "lines": []}
        given = [n for n in item.get("lines") or [] if isinstance(n, int) and n in numbers][:3]
        for sentence in sentences(clean_summary(str(item.get("text") or ""))):
            if any(s["text"] == sentence for s in out) or sum(map(str.isalpha, sentence)) < 12:
                continue
            if given and judge(sentence, [lines[n - 1] for n in given], threshold).ok:
                chosen = given
            else:
                picked, verdict = check_against(sentence, texts, threshold, limit=3)
                chosen = [numbers[i] for i in picked] if verdict.ok else []
            if chosen:
                out.append({"text": sentence, "lines": to_ranges(chosen)})
    return out[:MAX_SUMMARY]


def _is_text(line: str) -> bool:
    return bool(line.strip()) and not HEADING.match(line)


def validator(part: Part, lines: list[str], types: list[str], threshold: float = 60) -> Any:
    def validate(data: Any) -> dict[str, Any]:
        if not isinstance(data, dict) or not isinstance(data.get("topics"), list):
            raise Invalid('expected an object with "topics" and "summary"')
        part_text = _PartText(lines, part)  # here, not for each of 10,000 actions already made
        topics: list[dict[str, Any]] = []
        seen: set[str] = set()
        for item in data["topics"][:MAX_TOPICS]:
            if not isinstance(item, dict):
                continue
            name = clean_title(str(item.get("name") or ""), 80)
            proposed = [n for n in item.get("lines") or [] if isinstance(n, int)]
            numbers = part_text.grounded(name, proposed) if name else []
            if not numbers or name.casefold() in seen:
                continue
            seen.add(name.casefold())
            kind = item.get("type") if item.get("type") in types else types[0]
            topics.append({"name": name, "type": kind, "lines": to_ranges(numbers)})
        if not topics and data["topics"]:
            raise Invalid("none of the topics is named in the document; use names that appear in its lines")
        summary = summary_sentences(data.get("summary"), lines, part, threshold, part_text.numbers)
        return {"summary": summary, "topics": topics}

    return validate


def _no_topics(problem: str) -> dict[str, Any]:
    """When the model's topics stay unusable: the source still gets its page (its own
    opening lines for a summary), it just feeds no topic page."""
    return {
        "summary": [],
        "topics": [],
        "fallback": f"the model's answers stayed unusable {problem}; "
        "the source's page uses its opening lines and feeds no topic",
    }


def digest_inputs(schema: Schema, prompts: Prompts, model_fp: str) -> dict[str, str]:
    """The inputs every source's digest shares: the template, the model, schema.yaml's part.
    Computed once per build, not once per source (10,000 sources: a second)."""
    kinds = [t.model_dump() for t in schema.page_types]
    return {
        "template": fingerprint([prompts.stage_hash("digest"), VERSION]),
        "model": model_fp,
        "schema": fingerprint([schema.title, schema.scope, kinds, [t.name for t in schema.topics]]),
    }


# a source's digest requests made ahead (part_requests): the model id their keys are for, and
# each part's key and messages
Made = tuple[str, list[tuple[str, list[Message]]]]


def digest_actions(
    source: Source,
    schema: Schema,
    prompts: Prompts,
    shared: dict[str, str],
    privacy: str = "",
    hints: list[list[str]] | None = None,
    made: Made | None = None,
) -> list[Action]:
    """One digest action per part of the source (one part unless it is long). `source` is
    already redacted; `shared`: digest_inputs(...), the same for every source; `privacy`
    fingerprints the redaction rules that fired in it; `hints`: part_hints(...) of its lines,
    `made`: part_requests(...) of it, where made already (by a forked child: prefacts.py)."""
    lines = source.lines  # a new list at each use: one list for every part's action to share
    parts = split_parts(lines, schema.sources.part_lines)
    known = dict(enumerate(hints)) if hints is not None and len(hints) == len(parts) else {}
    digester = _Digester(source, lines, schema, prompts, shared, parts, privacy, known)
    model, requests = made if made is not None and len(made[1]) == len(parts) else ("", [])
    digester.made = {i: messages for i, (_, messages) in enumerate(requests)}
    actions = [digester.action(part) for part in digester.parts]
    for action, (key, _) in zip(actions, requests, strict=False):  # none where none were made
        action.keyed = (model, key)
    return actions


def part_requests(
    source: Source,
    schema: Schema,
    prompts: Prompts,
    shared: dict[str, str],
    model_id: str,
    privacy: str = "",
    hints: list[list[str]] | None = None,
) -> Made:
    """Each part's digest request, as digest_actions makes it, and its key for `model_id`, as
    resolve makes it: made by a forked child a chunk ahead (prefacts.py), 0.1 ms a request
    that the digest then only takes."""
    made = []
    for action in digest_actions(source, schema, prompts, shared, privacy, hints):
        request, extractor = action.render(), action.inputs.get("extractor", "")
        made.append((action_key(action.stage, request, model_id, extractor), request.messages))
    return model_id, made


def part_hints(lines: list[str], part_lines: int) -> list[list[str]]:
    """Each part's candidates (the hints its request offers), as digest_actions splits the
    source's lines into parts."""
    return [candidates(lines, part) for part in split_parts(lines, part_lines)]


@dataclass
class _Digester:
    """What every part's digest action of one source shares."""

    source: Source
    lines: list[str]
    schema: Schema
    prompts: Prompts
    shared: dict[str, str]  # digest_inputs
    parts: list[Part]
    privacy: str = ""
    hints: dict[int, list[str]] = field(default_factory=dict)  # each part's candidates, once
    made: dict[int, list[Message]] = field(default_factory=dict)  # each part's messages, made ahead

    def action(self, part: Part) -> Action:
        source, schema, lines = self.source, self.schema, self.lines
        suffix = "" if len(self.parts) == 1 else f"#{part.index + 1}"
        part_text = "\n".join(lines[part.start - 1 : part.end])
        types = schema.type_names()
        inputs = {
            "source": text_hash(f"{part.start}:{part.index}/{len(self.parts)}\n{part_text}"),
            **self.shared,
        }
        if self.privacy:  # only where a rule fired: other sources keep their keys as they were
            inputs["privacy"] = self.privacy
        if source.extractor:  # a PDF, DOCX, ...: upgrading its extractor runs it again
            inputs["extractor"] = source.extractor
        return Action(
            id=f"digest:{source.path}{suffix}",
            stage="digest",
            label=f"digest {source.path}{suffix}",
            inputs=inputs,
            render=lambda: self.request(part),
            validate=validator(part, lines, types, schema.lint.citation_threshold),
            fallback=_no_topics,
        )

    def request(self, part: Part) -> Request:
        schema, types = self.schema, self.schema.type_names()
        messages = self.made.get(part.index) or self._messages(part)
        return Request(messages, response_schema(types), schema.model.max_tokens, schema.model.temperature)

    def _messages(self, part: Part) -> list[Message]:
        # made here, not with the action: 100,000 sources' numbered lines are never all held
        numbered = [(n, self.lines[n - 1]) for n in range(part.start, part.end + 1) if n <= len(self.lines)]
        schema, types = self.schema, self.schema.type_names()
        return self.prompts.render(
            "digest",
            fixed=SCHEMA_VALUES,
            title=schema.title,
            scope=schema.scope,
            types=types,
            page_types=schema.page_types,
            candidates=self._hints(part),
            max_topics=MAX_TOPICS,
            path=self.source.path,
            part_index=part.index,
            part_count=len(self.parts),
            lines=numbered,
        )

    def _hints(self, part: Part) -> list[str]:
        """The part's candidates: a pending action's request is made twice (for its key, then
        to send), and a model's repair request again."""
        if part.index not in self.hints:
            self.hints[part.index] = candidates(self.lines, part)
        return self.hints[part.index]


def merge_parts(outputs: list[dict[str, Any]]) -> dict[str, Any]:
    """One digest for a source from its parts' digests."""
    summaries = [s for o in outputs for s in (o.get("summary") or [])]
    topics = [t for o in outputs for t in o.get("topics", [])]
    merged: dict[str, Any] = {"summary": summaries[:MAX_SUMMARY], "topics": topics}
    if any(o.get("fallback") for o in outputs):  # made without the model: it feeds no topic
        merged["fallback"] = True
    return merged
