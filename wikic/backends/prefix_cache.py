"""Saved llama model states for `ask`'s prefix, so a new process evaluates only
the question: one `<key>.bin` (llama_state_get_data bytes) and `<key>.json`
(what it was made from, and a checksum) per prefix under .wikic/prefix/.

An entry is used only when everything it was made from matches (format, model,
context size, the exact token list) and its bytes pass the checksum; anything
else is deleted and rebuilt, never trusted. Entries of the same model for other
prefixes are stale (the wiki changed) and removed when a new one is saved; the
rest are bounded in total size, least recently used first.

llama-cpp-python's own LlamaRAMCache/LlamaDiskCache are not used: they save
state after every completion, which made follow-up questions slower.
"""

from __future__ import annotations

import ctypes
import json
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wikic.fsutil import TMP_MARK, atomic_write
from wikic.hashing import PREFIX_ENTRY, PREFIX_TOKENS, digest

if TYPE_CHECKING:
    from llama_cpp import Llama

FORMAT = 1


def tokens_digest(tokens: list[int]) -> str:
    return digest(json.dumps(tokens), PREFIX_TOKENS)


def entry_key(model_id: str, n_ctx: int, tokens: list[int]) -> str:
    """Names the entry: the prefix (as tokens, so the template and tokenizer count) and the model."""
    raw = json.dumps([FORMAT, model_id, n_ctx, tokens_digest(tokens)])
    return digest(raw, PREFIX_ENTRY)


@dataclass(frozen=True)
class Entry:
    key: str
    size: int
    used: float  # mtime of the .json, touched on every use (LRU)
    model_id: str


class PrefixCache:
    def __init__(self, folder: Path, max_bytes: int) -> None:
        self.folder = folder
        self.max_bytes = max_bytes

    @property
    def enabled(self) -> bool:
        return self.max_bytes > 0

    def _bin(self, key: str) -> Path:
        return self.folder / f"{key}.bin"

    def _meta(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def restore(self, llm: Llama, model_id: str, tokens: list[int]) -> bool:
        """Load the saved state for exactly these prefix tokens; False (and the entry gone) otherwise."""
        if not self.enabled:
            return False
        key = entry_key(model_id, llm.n_ctx(), tokens)
        meta = self._read_meta(key)
        if meta is None:
            return False
        expected = {
            "format": FORMAT,
            "model_id": model_id,
            "n_ctx": llm.n_ctx(),
            "n_tokens": len(tokens),
            "tokens": tokens_digest(tokens),
        }
        if any(meta.get(k) != v for k, v in expected.items()):
            self.discard(key)
            return False
        data = self._read_checked(key, meta)
        if data is None or not _set_state(llm, data, tokens):
            self.discard(key)
            return False
        os.utime(self._meta(key))
        return True

    def save(self, llm: Llama, model_id: str, tokens: list[int]) -> int:
        """Save the context's state, which must hold exactly `tokens`; returns the bytes written."""
        if not self.enabled:
            return 0
        key = entry_key(model_id, llm.n_ctx(), tokens)
        data = _get_state(llm)
        meta = {
            "format": FORMAT,
            "model_id": model_id,
            "n_ctx": llm.n_ctx(),
            "n_tokens": len(tokens),
            "tokens": tokens_digest(tokens),
            "size": len(data),
            "crc32": zlib.crc32(data),
        }
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write(self._bin(key), data)
        atomic_write(self._meta(key), json.dumps(meta).encode())  # last: a .bin without it is ignored
        self.prune(keep=key, model_id=model_id)
        return len(data)

    def discard(self, key: str) -> None:
        self._meta(key).unlink(missing_ok=True)
        self._bin(key).unlink(missing_ok=True)

    def clear(self) -> int:
        """Delete every saved state (`wikic forget`: each holds the whole wiki it was made
        from); returns how many files went."""
        removed = 0
        for path in list(self.folder.iterdir()) if self.folder.is_dir() else []:
            if path.is_file() and (path.suffix in (".bin", ".json") or path.name.startswith(TMP_MARK)):
                path.unlink(missing_ok=True)
                removed += 1
        return removed

    def entries(self) -> list[Entry]:
        found = []
        for meta_path in self.folder.glob("*.json") if self.folder.is_dir() else []:
            meta = self._read_meta(meta_path.stem)
            try:
                size = self._bin(meta_path.stem).stat().st_size
                used = meta_path.stat().st_mtime
            except OSError:
                meta = None
            if meta is None:
                self.discard(meta_path.stem)
                continue
            found.append(Entry(meta_path.stem, size, used, str(meta.get("model_id"))))
        return found

    def prune(self, keep: str | None = None, model_id: str | None = None) -> None:
        """Drop stale entries (same model, other prefix), orphans, then the least recently used."""
        if not self.folder.is_dir():
            return
        for path in self.folder.iterdir():
            orphan = path.suffix == ".bin" and not self._meta(path.stem).exists()
            if orphan or path.name.startswith(TMP_MARK):
                path.unlink(missing_ok=True)
        live = []
        for e in self.entries():
            if model_id is not None and e.model_id == model_id and e.key != keep:
                self.discard(e.key)
            else:
                live.append(e)
        total = sum(e.size for e in live)
        for e in sorted(live, key=lambda e: e.used):
            if total <= self.max_bytes:
                break
            self.discard(e.key)
            total -= e.size

    def _read_meta(self, key: str) -> dict[str, Any] | None:
        try:
            meta = json.loads(self._meta(key).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            return None
        return meta if isinstance(meta, dict) else None

    def _read_checked(self, key: str, meta: dict[str, Any]) -> ctypes.Array[ctypes.c_uint8] | None:
        size = meta.get("size")
        try:
            if not isinstance(size, int) or self._bin(key).stat().st_size != size or size <= 0:
                return None
            buf = (ctypes.c_uint8 * size)()
            with open(self._bin(key), "rb") as fh:
                if fh.readinto(buf) != size:
                    return None
        except OSError:
            return None
        return buf if zlib.crc32(buf) == meta.get("crc32") else None


def _get_state(llm: Llama) -> bytes:
    import llama_cpp

    size = llama_cpp.llama_state_get_size(llm.ctx)
    buf = (ctypes.c_uint8 * size)()
    written = llama_cpp.llama_state_get_data(llm.ctx, buf, size)
    return bytes(memoryview(buf)[:written])


def _set_state(llm: Llama, data: ctypes.Array[ctypes.c_uint8], tokens: list[int]) -> bool:
    """Put the state back and tell llama-cpp-python which tokens it holds, so that
    `generate` reuses them as a matching prefix and evaluates only what follows."""
    import llama_cpp

    llm.reset()  # type: ignore[no-untyped-call]
    read = llama_cpp.llama_state_set_data(llm.ctx, data, len(data))
    if read != len(data):
        llm.reset()  # type: ignore[no-untyped-call]
        _clear_memory(llm)
        return False
    llm.input_ids[: len(tokens)] = tokens
    llm.n_tokens = len(tokens)
    llm._requires_eval = True  # the restored logits are not a live decode's (Llama.load_state does the same)
    return True


def _clear_memory(llm: Llama) -> None:
    import llama_cpp

    memory = llama_cpp.llama_get_memory(llm.ctx)
    if memory is not None:
        llama_cpp.llama_memory_clear(memory, True)


def keep_prefix(llm: Llama, n: int) -> None:
    """Forget every token after the first `n` (the question and answer), keeping the prefix's cells."""
    import llama_cpp

    memory = llama_cpp.llama_get_memory(llm.ctx)
    if memory is not None:
        llama_cpp.llama_memory_seq_rm(memory, -1, n, -1)
    llm.n_tokens = min(llm.n_tokens, n)
