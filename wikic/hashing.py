"""Every hash wikic computes: sha256 in hex, cut to a named length per use.

The lengths are part of what earlier runs stored (action keys and file hashes in
state.db, seals in committed wiki pages, saved answers' cited hashes, the prefix
cache's file names): changing one makes a second build after an upgrade redo work,
or a committed wiki fail its seals. Same bytes in, same digest out. Stdlib only:
the no-op build imports this.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

FULL = 64  # action keys, lint's model cache keys, the no-op check's digests
CONTENT = 20  # file bytes and source text as state.db records them; page seals
FINGERPRINT = 16  # settings, templates and other inputs folded into one short value
PREFIX_TOKENS = 32  # a prefix's token list, inside a prefix cache entry's name
PREFIX_ENTRY = 24  # a prefix cache entry's file name


CHUNK = 1 << 20  # characters of a long text encoded at a time


def digest(data: bytes | str, length: int = FULL, end: int | None = None) -> str:
    """sha256 of `data` (text as UTF-8, lone surrogates from file names kept), `length` hex
    digits; with `end`, of data[:end]. A long text is encoded a piece at a time, not copied
    whole (index.md, the names lint keeps: 20 MB each at 100,000 pages)."""
    if not isinstance(data, str):
        return hashlib.sha256(data if end is None else memoryview(data)[:end]).hexdigest()[:length]
    end = len(data) if end is None else end
    if end <= CHUNK:
        return hashlib.sha256(data[:end].encode("utf-8", "surrogateescape")).hexdigest()[:length]
    h = hashlib.sha256()
    for at in range(0, end, CHUNK):
        h.update(data[at : min(at + CHUNK, end)].encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:length]


def pieces_digest(pieces: list[str], length: int = FULL) -> str:
    """digest("".join(pieces), length), the text never joined."""
    h = hashlib.sha256()
    for piece in pieces:
        h.update(piece.encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:length]


def bytes_hash(data: bytes) -> str:
    """A file's bytes, as state.db records them."""
    return digest(data, CONTENT)


def file_hash(path: str | os.PathLike[str]) -> str:
    """bytes_hash of a file's bytes, read a piece at a time, never held whole."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()[:CONTENT]


def text_hash(text: str) -> str:
    """A source's normalised text, as state.db records it."""
    return digest(text, CONTENT)


def json_digest(data: Any, length: int = FULL) -> str:
    """JSON-able data, keys sorted, so equal data hashes equal whatever its order."""
    return digest(json.dumps(data, sort_keys=True, ensure_ascii=False, default=str), length)


def fingerprint(data: Any) -> str:
    """A short stable hash of JSON-able data."""
    return json_digest(data, FINGERPRINT)


def quick_fingerprint(data: Any) -> str:
    """A short hash of data made of str, int, float, bool, None, lists, tuples and dicts, by
    repr (several times cheaper than JSON with sorted keys): for the keys of what a build
    keeps to skip work it can redo without the model (plan, assemble). Equal data built in
    another order hashes apart, which costs a miss, never a wrong hit."""
    return digest(repr(data), FINGERPRINT)
