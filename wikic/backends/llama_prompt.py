"""The llama backend's prefix caching: the chat prompt as two token lists (the
prefix, a true prefix of every full prompt, and the question part), the prefix's
state restored from .wikic/prefix/ or evaluated and saved, then streaming.

The chat template is applied here, not by llama-cpp-python's chat API, so that
the system message and the user-header after it tokenise the same way whatever
the question is: template text is tokenised with special tokens, page and
question text without (a page cannot smuggle in `<|im_end|>`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wikic.backends.base import PrefixAnswer, Request
from wikic.backends.prefix_cache import PrefixCache, keep_prefix
from wikic.errors import BackendError, UsageError

if TYPE_CHECKING:
    from llama_cpp import Llama

    from wikic.config import ModelConfig

SYSTEM_MARK = "\x00WIKIC-SYSTEM\x00"
USER_MARK = "\x00WIKIC-USER\x00"
FALLBACK = ("", "\n\n", "\n\nAnswer:")  # for a GGUF without a chat template
PAGE_STOPS = ("</page>", "<page ", "<index>")  # the prefix's own markup (prompts/ask.system.j2)


@dataclass(frozen=True)
class ChatSplit:
    """The chat template around the two messages: head SYSTEM middle USER tail."""

    head: str
    middle: str
    tail: str
    stop: list[str]


def chat_split(llm: Llama) -> ChatSplit:
    template = llm.metadata.get("tokenizer.chat_template")
    eos = token_text(llm, llm.token_eos())
    if not template:
        return ChatSplit(*FALLBACK, stop=_stops(eos))
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    bos = token_text(llm, llm.token_bos())
    formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
    prompt = formatter(
        messages=[{"role": "system", "content": SYSTEM_MARK}, {"role": "user", "content": USER_MARK}]
    ).prompt
    head, rest = prompt.split(SYSTEM_MARK, 1) if SYSTEM_MARK in prompt else ("", prompt)
    if USER_MARK not in rest:
        return ChatSplit(*FALLBACK, stop=_stops(eos))
    middle, tail = rest.split(USER_MARK, 1)
    return ChatSplit(head, middle, tail, stop=_stops(eos))


def _stops(eos: str) -> list[str]:
    """The end-of-turn token, and the page markup a small model likes to continue with."""
    return ([eos] if eos else []) + list(PAGE_STOPS)


def token_text(llm: Llama, token: int) -> str:
    return llm.detokenize([token], special=True).decode("utf-8", "replace") if token >= 0 else ""


class Tokens:
    """Counting and splitting prompts with the model's own tokenizer."""

    def __init__(self, llm: Llama) -> None:
        self.llm = llm
        self.split = chat_split(llm)
        bos = token_text(llm, llm.token_bos())
        self._add_bos = not (bos and self.split.head.startswith(bos))

    def text(self, text: str) -> list[int]:
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)) if text else []

    def special(self, text: str, bos: bool = False) -> list[int]:
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=bos, special=True)) if text or bos else []

    def count(self, text: str) -> int:
        return len(self.text(text))

    def overhead(self) -> int:
        """Tokens the template adds around the two messages."""
        s = self.split
        head = self.special(s.head, self._add_bos)
        return len(head) + len(self.special(s.middle)) + len(self.special(s.tail))

    def prompt(self, system: str, user: str) -> tuple[list[int], list[int]]:
        s = self.split
        prefix = self.special(s.head, self._add_bos) + self.text(system) + self.special(s.middle)
        return prefix, self.text(user) + self.special(s.tail)


@dataclass
class Loaded:
    """A loaded llama model with what answering needs of it: its tokens, id and settings."""

    llm: Llama
    tokens: Tokens
    model_id: str
    cfg: ModelConfig


def answer(
    model: Loaded,
    cache: PrefixCache | None,
    request: Request,
    on_text: Callable[[str], None] | None = None,
) -> PrefixAnswer:
    """Restore or evaluate the prefix (the request's system message), then stream the answer
    to its user message. Hold the backend's lock around this."""
    llm, tokens, model_id, cfg = model.llm, model.tokens, model.model_id, model.cfg
    started = time.monotonic()
    prefix, rest = tokens.prompt(*_two_messages(request))
    if len(prefix) + len(rest) + 1 > llm.n_ctx():
        raise UsageError(f"the question does not fit the model's context ({llm.n_ctx()} tokens); shorten it")
    run = PrefixAnswer(prefix_tokens=len(prefix), question_tokens=len(rest))
    _perf_reset(llm)
    run.prefix_cached = _live(llm, prefix) or (cache is not None and cache.restore(llm, model_id, prefix))
    if not run.prefix_cached:
        llm.reset()  # type: ignore[no-untyped-call]
        llm.eval(prefix)
    run.seconds["prefix"] = time.monotonic() - started
    room = llm.n_ctx() - len(prefix) - len(rest)
    args = {
        "max_tokens": min(request.max_tokens, room),
        "temperature": request.temperature,
        "seed": cfg.seed,
        "stop": tokens.split.stop,
        "repeat_penalty": cfg.repeat_penalty,
    }
    _stream(llm, prefix + rest, args, run, started, on_text)
    run.evaluated_tokens = _perf_prompt_tokens(llm)
    keep_prefix(llm, len(prefix))
    if cache is not None and not run.prefix_cached:
        run.state_bytes = cache.save(llm, model_id, prefix)
    return run


def _two_messages(request: Request) -> tuple[str, str]:
    """The prefix is one system message, the question one user message after it."""
    roles = [m["role"] for m in request.messages]
    if roles != ["system", "user"] or request.prefix_messages != 1:
        raise ValueError(f"prefix caching takes a system prefix and a user question, not {roles}")
    return request.messages[0]["content"], request.messages[1]["content"]


def _stream(
    llm: Llama,
    prompt: list[int],
    args: dict[str, Any],
    run: PrefixAnswer,
    started: float,
    on_text: Callable[[str], None] | None,
) -> None:
    """Generate from the full prompt: llama-cpp-python reuses the matching prefix already in
    the context and evaluates only the tokens after it."""
    pieces = []
    try:
        for chunk in llm.create_completion(prompt=prompt, stream=True, **args):
            piece = str(chunk["choices"][0]["text"] or "")  # type: ignore[index]
            run.seconds.setdefault("first_token", time.monotonic() - started)
            if piece:
                pieces.append(piece)
                run.completion_tokens += 1
                if on_text:
                    on_text(piece)
    except (ValueError, RuntimeError) as exc:
        raise BackendError(f"the llama model failed: {exc}") from exc
    run.text = "".join(pieces)
    run.seconds.setdefault("first_token", time.monotonic() - started)


def _live(llm: Llama, prefix: list[int]) -> bool:
    """The context already holds this prefix (an earlier question in this process)."""
    n = len(prefix)
    return bool(llm.n_tokens >= n and list(llm.input_ids[:n]) == prefix)


def _perf_reset(llm: Llama) -> None:
    import llama_cpp

    llama_cpp.llama_perf_context_reset(llm.ctx)


def _perf_prompt_tokens(llm: Llama) -> int | None:
    """llama.cpp's own count of prompt tokens decoded since the reset (None if it keeps none):
    the prefix and the question on a cold start, the question alone after a restore."""
    import llama_cpp

    data = llama_cpp.llama_perf_context(llm.ctx)
    n = int(data.n_p_eval)
    return n if n or data.n_eval else None
