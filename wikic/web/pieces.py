"""The static site's search index in PIECES pieces by a hash of the slug (each a script that
adds its entries: it loads from file:// too), so that one changed page rewrites one piece; and
each piece's entries kept beside the manifest's shards, read only when the piece is written."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from wikic.hashing import bytes_hash
from wikic.web.manifest import PIECES, entries_path, piece, read_entries
from wikic.web.views import search_entry, search_piece
from wikic.wiki.read import read_page

if TYPE_CHECKING:
    from wikic.web.site import Output, Site


def piece_path(i: int) -> str:
    return f"data/search-{i:02d}.js"


def search_outputs(site: Site) -> list[Output]:
    """The search index in PIECES pieces by a hash of the slug: a page read again (its entry may
    have changed) or gone makes its piece render again; the other pieces keep their key."""
    members: list[list[str]] = [[] for _ in range(PIECES)]
    for slug in site.facts:
        members[piece(slug)].append(slug)
    gone = {rel[2:-5] for rel in site.files if rel.startswith("p/") and rel.endswith(".html")} - set(
        site.facts
    )
    dirty = {piece(slug) for slug in (set(site.facts) - site.stubs) | gone}
    dirty |= {i for i in range(PIECES) if entries_path(i) not in site.present}  # made again: kept again
    outs: list[Output] = []
    for i, slugs in enumerate(members):
        before = site.files.get(piece_path(i))
        if before is not None and i not in dirty:
            outs.append((piece_path(i), before["key"], _piece_maker(site, i, slugs)))
            continue
        data = _piece_maker(site, i, slugs)()
        outs.append((piece_path(i), bytes_hash(data), _made(data)))
    return outs


def _made(data: bytes) -> Callable[[], bytes]:
    return lambda: data


def _piece_maker(site: Site, i: int, slugs: list[str]) -> Callable[[], bytes]:
    def make() -> bytes:
        entries = site.pieces[i] = _piece_entries(site, i, slugs)
        return search_piece(sorted(entries.values(), key=_entry_order)).encode()

    return make


def _piece_entries(site: Site, i: int, slugs: list[str]) -> dict[str, dict[str, Any]]:
    """The piece's entries: a page read now has its own; the others were kept beside the
    shards when the piece was last written (read only now: they are most of the facts' bytes),
    or, if not, their pages are read again."""
    kept: dict[str, Any] | None = None
    found: dict[str, dict[str, Any]] = {}
    for slug in slugs:
        entry = site.facts[slug].get("entry")
        if entry is None:
            kept = read_entries(site.out / entries_path(i)) if kept is None else kept
            entry = kept.get(slug)
        if entry is None:
            page = site.model.wiki.pages[slug]
            entry = search_entry(read_page(site.model.project.wiki_dir / f"{slug}.md", page.rel))
        found[slug] = entry
    return found


def _entry_order(entry: dict[str, Any]) -> tuple[bool, str, str, str]:
    return (entry["y"] == "source", entry["y"], entry["t"].casefold(), entry["u"])
