"""The embedded backend: a GGUF model run in-process by llama-cpp-python; it
implements prefix caching (llama_prompt.py, prefix_cache.py) besides `complete`."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wikic.backends import llama_prompt, model_id
from wikic.backends.base import Completion, Counter, Message, PrefixAnswer, Request, StreamCallback
from wikic.backends.llama_path import resolve_model_path
from wikic.backends.prefix_cache import PrefixCache
from wikic.backends.retry import call_with_retries
from wikic.config import ModelConfig
from wikic.errors import BackendError, BadOutput, ConfigError

if TYPE_CHECKING:
    from llama_cpp import Llama

MIN_ANSWER_TOKENS = 32  # below this, shrinking max_tokens to fit would only truncate
# Generating one token of a small model is too little work to share: threads spend
# it waiting at barriers, and with other processes on the CPUs they spin (measured
# 2-5x slower with every CPU than with half). Prompt evaluation does use them all.
GENERATION_THREADS = max(1, (os.cpu_count() or 2) // 2)
TOKENS_PER_MESSAGE = 8  # role markers and separators, when the GGUF has no chat template


# llama.cpp expands maxLength/maxItems into repeated grammar rules, and a grammar
# it finds too large kills the process (SIGSEGV, not an exception): at a string
# maxLength of 1200 on 0.3.36. Bounds above these are enforced by validation instead.
GRAMMAR_MAX_LENGTH = 800
GRAMMAR_MAX_ITEMS = 32


def grammar_safe(schema: Any) -> Any:
    """The schema with every repetition bound small enough for llama.cpp's grammar."""
    if isinstance(schema, list):
        return [grammar_safe(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    safe = {key: grammar_safe(value) for key, value in schema.items()}
    if isinstance(safe.get("maxLength"), int) and safe["maxLength"] > GRAMMAR_MAX_LENGTH:
        safe["maxLength"] = GRAMMAR_MAX_LENGTH
    if isinstance(safe.get("maxItems"), int) and safe["maxItems"] > GRAMMAR_MAX_ITEMS:
        del safe["maxItems"]
    return safe


class LlamaBackend:
    """A local GGUF model. Loaded on the first call; calls are serialised by `lock`.

    One llama context holds one conversation at a time, so every use of `llama`
    (completions, prefix state save and restore) holds `lock`.
    """

    def __init__(self, cfg: ModelConfig, root: Path) -> None:
        self.cfg = cfg
        self.path = resolve_model_path(cfg.name, root)
        self.model_id = model_id(cfg, root)
        self.lock = threading.Lock()  # held for every use of the llama context
        self._load_lock = threading.Lock()
        self._llama: Llama | None = None
        self._formatter: Any = None
        self._tokens: llama_prompt.Tokens | None = None

    def __repr__(self) -> str:
        return f"LlamaBackend({self.model_id!r})"

    @property
    def llama(self) -> Llama:
        """The loaded model, loading it on first use."""
        with self._load_lock:
            if self._llama is None:
                self._llama = self._load()
            return self._llama

    def _prompt_tokens(self) -> llama_prompt.Tokens:
        if self._tokens is None:
            self._tokens = llama_prompt.Tokens(self.llama)
        return self._tokens

    def prompt_room(self, answer_tokens: int) -> tuple[Counter, int]:
        """PrefixCaching: the model's tokenizer (it reads only the vocabulary, so counting
        needs no lock), and the context less the answer and the chat template around the text."""
        with self.lock:
            tokens = self._prompt_tokens()
            room = self.llama.n_ctx() - answer_tokens - tokens.overhead() - 1
        return tokens.count, room

    def template_tokens(self) -> int:
        """PrefixCaching: the chat template's tokens around the two messages."""
        with self.lock:
            return self._prompt_tokens().overhead()

    def answer_with_prefix(
        self, request: Request, cache_dir: Path | None, cache_bytes: int, on_text: StreamCallback | None
    ) -> PrefixAnswer:
        """PrefixCaching: the prefix's state live, restored from `cache_dir` or evaluated (and saved)."""
        cache = PrefixCache(cache_dir, cache_bytes) if cache_dir is not None else None
        with self.lock:
            loaded = llama_prompt.Loaded(self.llama, self._prompt_tokens(), self.model_id, self.cfg)
            return llama_prompt.answer(loaded, cache, request, on_text)

    def _load(self) -> Llama:
        try:
            import llama_cpp
        except ImportError as exc:
            raise ConfigError(
                "the llama backend needs llama-cpp-python: pip install llama-cpp-python"
            ) from exc
        try:
            llama = llama_cpp.Llama(
                model_path=str(self.path),
                n_ctx=self.cfg.context,
                seed=self.cfg.seed,
                n_threads=GENERATION_THREADS,
                n_threads_batch=os.cpu_count(),
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ConfigError(f"cannot load the model {self.path}: {exc}; is it a valid GGUF file?") from exc
        template = llama.metadata.get("tokenizer.chat_template")
        if template:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            self._formatter = Jinja2ChatFormatter(
                template=template,
                eos_token=llama_prompt.token_text(llama, llama.token_eos()),
                bos_token=llama_prompt.token_text(llama, llama.token_bos()),
            )
        return llama

    def count_prompt_tokens(self, messages: list[Message]) -> int:
        """Tokens the chat-formatted messages take, as the model will see them."""
        llama = self.llama
        if self._formatter is not None:
            prompt = self._formatter(messages=messages).prompt
            return len(llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))
        return sum(
            len(llama.tokenize(m["content"].encode("utf-8"), add_bos=False)) + TOKENS_PER_MESSAGE
            for m in messages
        )

    def _fit(self, request: Request) -> tuple[int, int]:
        """The prompt's token count and the max_tokens that fit in the context."""
        prompt_tokens = self.count_prompt_tokens(request.messages)
        n_ctx = self.llama.n_ctx()
        room = n_ctx - prompt_tokens
        if room < min(request.max_tokens, MIN_ANSWER_TOKENS):
            raise BackendError(
                f"prompt of {prompt_tokens} tokens does not fit the context of {n_ctx} "
                f"with room for an answer; raise model.context in schema.yaml"
            )
        return prompt_tokens, min(request.max_tokens, room)

    def _arguments(self, request: Request, max_tokens: int) -> dict[str, Any]:
        args: dict[str, Any] = {
            "messages": request.messages,
            "temperature": request.temperature,
            "max_tokens": max_tokens,
            "seed": self.cfg.seed,
            "repeat_penalty": self.cfg.repeat_penalty,
        }
        if request.schema is not None:
            args["response_format"] = {"type": "json_object", "schema": grammar_safe(request.schema)}
        return args

    def complete(self, request: Request) -> Completion:
        return call_with_retries(lambda: self._complete_once(request), retries=self.cfg.retries)

    def _complete_once(self, request: Request) -> Completion:
        with self.lock:
            prompt_tokens, max_tokens = self._fit(request)
            try:
                result: Any = self.llama.create_chat_completion(**self._arguments(request, max_tokens))
            except (ValueError, RuntimeError) as exc:
                raise _translate(exc) from exc
        choices = result.get("choices") or []
        if not choices:
            raise BadOutput("the model returned no answer")
        usage = result.get("usage") or {}
        return Completion(
            text=choices[0]["message"].get("content") or "",
            prompt_tokens=int(usage.get("prompt_tokens") or prompt_tokens),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            finish_reason=choices[0].get("finish_reason") or "stop",
        )

    def stream(self, request: Request) -> Iterator[str | Completion]:
        """Yield the answer's text as it is generated, then the whole Completion."""
        with self.lock:
            prompt_tokens, max_tokens = self._fit(request)
            pieces: list[str] = []
            finish_reason = "stop"
            try:
                chunks: Any = self.llama.create_chat_completion(
                    **self._arguments(request, max_tokens), stream=True
                )
                for chunk in chunks:
                    choice = chunk["choices"][0] if chunk.get("choices") else {}
                    text = (choice.get("delta") or {}).get("content")
                    if text:
                        pieces.append(text)
                        yield text
                    finish_reason = choice.get("finish_reason") or finish_reason
            except (ValueError, RuntimeError) as exc:
                raise _translate(exc) from exc
            text = "".join(pieces)
            completion_tokens = len(self.llama.tokenize(text.encode("utf-8"), add_bos=False))
        yield Completion(text, prompt_tokens, completion_tokens, finish_reason=finish_reason)


def _translate(exc: Exception) -> BackendError:
    """llama_cpp raises ValueError and RuntimeError; say what they mean."""
    message = str(exc)
    if "exceed context window" in message:
        return BackendError(f"{message}; raise model.context in schema.yaml")
    return BackendError(f"the llama model failed: {message}")
