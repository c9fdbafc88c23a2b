"""A deterministic backend whose answers are derived from the prompt, for tests
and benchmarks: it goes through the same interface as the real models.

digest: every Markdown heading below the title, and every **bold** term, is a
topic supported by the lines where it stands; the summary is the first line of text.
write: one paragraph per note (at most four), citing that note.
lint (--llm): a claim is supported when half its longer words are in the cited
lines; two statements contradict when they differ only by a negation.
Ask-style free text: the first sentence of the last user message, echoed; any
other request with a schema gets the smallest JSON that follows the schema.
Like the real models, a prompt that does not fit `model.context` (at four
characters a token) is a BackendError.

`model.latency` adds a fixed delay per call; with WIKIC_SCRIPTED_LOG set, every
call is appended to that file as a JSON line, so tests can count calls made by
another process.

WIKIC_SCRIPTED_RESPONSES=file serves scripted raw answers instead, to inject
hostile or broken model output through the real interface. The file is a JSON
object from a selector to a list of raw texts, served in order, one per call:

    {"digest": ["not json", "{\"topics\": 5}"], "write:Evil": ["```json\n{..."]}

A selector is a stage (digest, write, lint, text), optionally with `:needle`:
then only calls of that stage whose prompt contains the needle take from it (the
first matching selector with texts left wins, needles before bare stages). When
a selector's list is used up, answers are derived from the prompt as usual.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wikic.backends import model_id
from wikic.backends.base import Completion, Request
from wikic.errors import BackendError, ConfigError

if TYPE_CHECKING:
    from wikic.config import ModelConfig

NUMBERED = re.compile(r"^(\d+): (.*)$")
NOTE = re.compile(r"^\[(\d+)\] (.*)$")
HEADING = re.compile(r"^#{2,6}\s+(.+?)\s*$")
BOLD = re.compile(r"\*\*([^*\n]{2,60})\*\*")
WORD = re.compile(r"\w+")
STATEMENT = re.compile(r"^\[(\d+)\] \([^)]*\) (.*)$")
NEGATIONS = {"not", "no", "never"}


def _between(text: str, tag: str) -> str:
    start, end = text.find(f"<{tag}>"), text.find(f"</{tag}>")
    return text[start + len(tag) + 2 : end] if 0 <= start < end else ""


def _load_script(path: str | None) -> list[tuple[str, list[str]]]:
    """The scripted answers, selectors with a needle first."""
    if not path:
        return []
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        script = [(str(k), [str(t) for t in v]) for k, v in data.items()]
    except (OSError, ValueError, AttributeError, TypeError) as exc:
        raise ConfigError(
            f"WIKIC_SCRIPTED_RESPONSES={path}: not a JSON object of lists of texts ({exc})"
        ) from exc
    return sorted(script, key=lambda item: ":" not in item[0])


def _instance(schema: dict[str, Any], text: str) -> Any:
    """The smallest value that follows `schema` (its strings hold `text`, cut to fit)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: _instance(props.get(name, {}), text) for name in schema.get("required", [])}
    if kind == "array":
        return [_instance(schema.get("items", {}), text)] * min(1, schema.get("maxItems", 1))
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return text[: schema.get("maxLength", len(text))]


class ScriptedBackend:
    def __init__(self, cfg: ModelConfig, root: Path | None = None) -> None:
        self.cfg = cfg
        self.model_id = model_id(cfg, root)
        self.calls = 0
        self._lock = threading.Lock()
        self._script = _load_script(os.environ.get("WIKIC_SCRIPTED_RESPONSES"))

    def complete(self, request: Request) -> Completion:
        if self.cfg.latency:
            time.sleep(self.cfg.latency)
        prompt_tokens = max(1, sum(len(m["content"]) for m in request.messages) // 4)
        if prompt_tokens >= self.cfg.context:
            raise BackendError(
                f"prompt of {prompt_tokens} tokens does not fit the context of {self.cfg.context}; "
                "raise model.context in schema.yaml"
            )
        user = next((m["content"] for m in request.messages if m["role"] == "user"), "")
        if "<document" in user:
            stage, text = "digest", self._digest(user, request)
        elif "<notes>" in user:
            stage, text = "write", self._write(user)
        elif "<claim>" in user and "<evidence>" in user:
            stage, text = "lint", self._support(user)
        elif "<statements>" in user:
            stage, text = "lint", self._contradictions(user)
        else:
            stage, text = "text", self._echo(request)
            if request.schema is not None:
                text = json.dumps(_instance(request.schema, text))
        with self._lock:
            text = self._scripted(stage, request, text)
            self.calls += 1
            log = os.environ.get("WIKIC_SCRIPTED_LOG")
            if log:
                with open(log, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"stage": stage, "pid": os.getpid(), "t": time.time()}) + "\n")
        return Completion(text, prompt_tokens=prompt_tokens, completion_tokens=max(1, len(text) // 4))

    def _scripted(self, stage: str, request: Request, derived: str) -> str:
        """The next scripted answer for this call, if the script has one."""
        if not self._script:
            return derived
        prompt = "\n".join(m["content"] for m in request.messages)
        for selector, texts in self._script:
            kind, _, needle = selector.partition(":")
            if texts and kind == stage and (not needle or needle in prompt):
                return texts.pop(0)
        return derived

    def _digest(self, user: str, request: Request) -> str:
        numbered = [(int(m.group(1)), m.group(2)) for m in map(NUMBERED.match, user.splitlines()) if m]
        types = (
            (request.schema or {})
            .get("properties", {})
            .get("topics", {})
            .get("items", {})
            .get("properties", {})
            .get("type", {})
            .get("enum", ["concept"])
        )
        topics: dict[str, list[int]] = {}
        current: str | None = None
        summary = ""
        for number, line in numbered:
            heading = HEADING.match(line)
            if heading:
                current = heading.group(1)
                topics.setdefault(current, [])
                continue
            if line.startswith("#"):
                current = None
                continue
            if line.strip() and not summary:
                summary = line.strip()[:200]
            if current and line.strip():
                topics[current].append(number)
            for term in BOLD.findall(line):
                topics.setdefault(term, []).append(number)
        items = [
            {"name": name, "type": types[0], "lines": lines[:12]} for name, lines in topics.items() if lines
        ]
        return json.dumps({"summary": summary, "topics": items[:8]})

    def _write(self, user: str) -> str:
        notes = [(int(m.group(1)), m.group(2)) for m in map(NOTE.match, user.splitlines()) if m]
        paragraphs = [{"text": text[:300], "cites": [n]} for n, text in notes[:4]]
        return json.dumps({"paragraphs": paragraphs or [{"text": "No notes.", "cites": []}]})

    def _support(self, user: str) -> str:
        """Supported when at least half of the claim's longer words occur in the evidence."""
        claim = set(WORD.findall(_between(user, "claim").casefold()))
        evidence = set(WORD.findall(_between(user, "evidence").casefold()))
        long_words = {w for w in claim if len(w) > 3}
        share = len(long_words & evidence) / max(1, len(long_words))
        reason = f"{share:.0%} of the claim's words are cited"
        return json.dumps({"supported": share >= 0.5, "reason": reason})

    def _contradictions(self, user: str) -> str:
        """Two statements contradict when they are the same words but for a negation."""
        found = []
        statements = [(int(m.group(1)), m.group(2)) for m in map(STATEMENT.match, user.splitlines()) if m]
        for i, (a, text_a) in enumerate(statements):
            for b, text_b in statements[i + 1 :]:
                words_a, words_b = set(WORD.findall(text_a.casefold())), set(WORD.findall(text_b.casefold()))
                if words_a - NEGATIONS == words_b - NEGATIONS and words_a & NEGATIONS != words_b & NEGATIONS:
                    found.append({"a": a, "b": b, "why": "one says the opposite of the other"})
        return json.dumps({"contradictions": found})

    def _echo(self, request: Request) -> str:
        last = request.messages[-1]["content"] if request.messages else ""
        return "Scripted answer: " + last.strip().split("\n")[-1][:200]
