"""The hash helper gives the digests the former call sites computed: they are stored
(state.db, seals in committed pages, saved answers, prefix cache names)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from wikic.backends.base import Request
from wikic.backends.prefix_cache import entry_key, tokens_digest
from wikic.build.actions import action_key
from wikic.hashing import CHUNK, bytes_hash, digest, file_hash, fingerprint, pieces_digest, text_hash
from wikic.wiki.page import SEAL, seal, seal_at, sealed_intact, sealed_pieces

REPO = Path(__file__).resolve().parent.parent
TEXTS = ["", "plain", "unicode: naïve café — 日本語 🙂", "two\nlines\r\n"]


def test_content_hashes_match_the_former_formulas() -> None:
    for text in TEXTS:
        raw = text.encode("utf-8")
        assert bytes_hash(raw) == hashlib.sha256(raw).hexdigest()[:20]
        assert text_hash(text) == hashlib.sha256(raw).hexdigest()[:20]
        sealed = seal(text)
        m = SEAL.search(sealed)
        assert m is not None and m.group(1) == hashlib.sha256(raw).hexdigest()[:20]


def test_keys_match_the_former_formulas() -> None:
    data = {"b": [1, "é"], "a": None}
    raw = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    assert fingerprint(data) == hashlib.sha256(raw.encode()).hexdigest()[:16]
    request = Request(messages=[{"role": "user", "content": "naïve"}], max_tokens=7)
    payload = {
        "stage": "digest",
        "version": 1,
        "model": "scripted:x",
        "messages": request.messages,
        "schema": None,
        "max_tokens": 7,
        "temperature": 0.0,
    }
    from wikic.build.actions import STAGE_VERSION

    payload["version"] = STAGE_VERSION["digest"]
    raw = json.dumps(payload, sort_keys=True, ensure_ascii=False)
    assert action_key("digest", request, "scripted:x") == hashlib.sha256(raw.encode("utf-8")).hexdigest()
    tokens = [1, 22, 333]
    assert tokens_digest(tokens) == hashlib.sha256(json.dumps(tokens).encode()).hexdigest()[:32]
    entry = json.dumps([1, "llama:m.gguf:9", 512, tokens_digest(tokens)])
    assert entry_key("llama:m.gguf:9", 512, tokens) == hashlib.sha256(entry.encode()).hexdigest()[:24]


def test_the_committed_sample_wiki_still_verifies() -> None:
    pages = sorted((REPO / "wiki").glob("*.md"))
    assert pages
    for path in pages:
        text = path.read_text(encoding="utf-8")
        if SEAL.search(text):
            assert sealed_intact(text), path.name


def test_a_long_text_hashes_as_its_whole_utf8_encoding() -> None:
    """digest() encodes a long text a piece at a time: the same hash as the whole text's bytes,
    with multi-byte characters and a file name's lone surrogates on the pieces' edges."""
    for text in [
        "a" * (CHUNK - 1) + "\u00e9\u4e2d" + "b" * CHUNK,
        ("x\udcff" * (CHUNK // 2 + 3)) + "\U0001f600",
        "\u4e2d" * (2 * CHUNK + 1),
    ]:
        whole = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
        assert digest(text) == whole
        assert digest(text, 20) == whole[:20]


def test_a_texts_start_hashes_as_that_start_and_a_seal_is_found_where_it_is() -> None:
    """digest(text, end=n) is digest(text[:n]) (short, long, bytes, on a piece's edge);
    seal_at finds where a sealed text's seal starts, and -1 for a text edited or unsealed."""
    long = "\u4e2d" * (CHUNK + 5) + "tail"
    for text, ends in [("short text", [0, 3, 10]), (long, [0, CHUNK, CHUNK + 1, len(long) - 2, len(long)])]:
        for end in ends:
            assert digest(text, 20, end=end) == digest(text[:end], 20)
            assert digest(text.encode(), end=end) == digest(text.encode()[:end])
    for text in [*TEXTS, long]:
        sealed = seal(text)
        assert seal_at(sealed) == len(text) and sealed_intact(sealed)
        assert seal_at(sealed.replace("\n<!--", "x\n<!--")) == -1
        assert seal_at(text) == -1


def test_pieces_are_hashed_and_sealed_as_their_text_is() -> None:
    """index.md is sealed from its pieces, never joined twice: the same seal as its text's."""
    for count in (0, 1, 2, 7, 100):
        pieces = ["".join(f"- [[page-{n}|Café {n}]]\n" for n in range(k, k + 3)) for k in range(count)]
        text = "".join(pieces)
        assert pieces_digest(pieces) == digest(text), count
        assert sealed_pieces(pieces) == seal(text), count
        assert sealed_intact(sealed_pieces(pieces))


def test_a_file_is_hashed_as_its_bytes_are(tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    for data in (b"", b"plain", "naïve 日本語\n".encode() * (CHUNK // 8)):
        path.write_bytes(data)
        assert file_hash(path) == bytes_hash(data)
