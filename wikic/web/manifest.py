"""The static site's manifest: OUT/.wikic-site.json (the site's own files and their keys, what
the export saw) and OUT/.wikic-site/NN.json, the pages' facts and their HTML's key in PIECES
shards by a hash of the slug (the search index's pieces), so that one changed page rewrites
one shard, not the facts of the whole wiki; and OUT/.wikic-site/search-NN.json, the search
entries of each piece's pages, read only when that piece is written again."""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

MANIFEST = ".wikic-site.json"
SHARDS = ".wikic-site"
FORMAT = 2  # a site written by another format is rendered again in full (its files are known)
PIECES = 64
FACT_KEYS = {"stat", "hash", "title", "aliases", "type", "sources", "targets", "cites", "res"}


def piece(slug: str) -> int:
    return zlib.crc32(slug.encode()) % PIECES


def shard_path(i: int) -> str:
    return f"{SHARDS}/{i:02d}.json"


def entries_path(i: int) -> str:
    """The search entries of a piece's pages, kept apart: read only when the piece changes."""
    return f"{SHARDS}/search-{i:02d}.json"


def read_entries(path: Path) -> dict[str, Any]:
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(entries, dict):
        return {}
    return {k: v for k, v in entries.items() if isinstance(v, dict) and v.keys() >= {"u", "t", "a", "y", "x"}}


def read_manifest(out: Path, page_path: Callable[[str], str]) -> dict[str, Any]:
    """The last export's manifest, its files with the pages' HTML among them; the page facts
    only if every shard has the shape this code writes (else every page is read and rendered
    again: slower, never wrong)."""
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    data = data if isinstance(data, dict) else {}
    if data.get("format") != FORMAT:  # an older site: its files are still the ones to remove
        data = {"files": data}
    files = data.get("files")
    files = {k: v for k, v in files.items() if isinstance(v, dict)} if isinstance(files, dict) else {}
    pages: dict[str, dict[str, Any]] = {}
    for i in range(PIECES if "context" in data else 0):
        shard = _read_shard(out / shard_path(i))
        if shard is None:
            pages, data["context"] = {}, None
            break
        for slug, facts in shard.items():
            page = facts.pop("page", None)
            if isinstance(page, dict):
                files[page_path(slug)] = page
            pages[slug] = facts
    started = data.get("started_ns")
    return {**data, "files": files, "pages": pages, "started_ns": started if isinstance(started, int) else 0}


def _read_shard(path: Path) -> dict[str, dict[str, Any]] | None:
    try:
        shard = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(shard, dict) or not all(_well_formed(f) for f in shard.values()):
        return None
    return shard


def _well_formed(facts: object) -> bool:
    return isinstance(facts, dict) and facts.keys() >= FACT_KEYS and isinstance(facts["targets"], list)


def shards(
    facts: dict[str, dict[str, Any]],
    files: dict[str, dict[str, str]],
    page_path: Callable[[str], str],
    dirty: set[int],
    resolved: dict[str, Any],
    linted: dict[str, str],
) -> dict[str, bytes]:
    """The bytes of the shards in `dirty`: each page's facts with what its links resolved to,
    a digest of its findings, its HTML's key and hash."""
    members: dict[int, dict[str, Any]] = {i: {} for i in dirty}
    for slug, found in facts.items():
        i = piece(slug)
        if i in members:
            kept = {k: v for k, v in found.items() if k != "entry"}  # kept apart: entries_path
            page = files.get(page_path(slug))
            members[i][slug] = {**kept, "res": resolved[slug], "lint": linted.get(slug), "page": page}
    return {shard_path(i): dump(m) for i, m in members.items()}


def dump(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()
