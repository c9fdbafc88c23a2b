"""index.md as the build makes it, kept while the one in wiki/ is edited by hand: publish
keeps the person's and every build says so, until it is as the build writes it or --force
(or deleted: the build's is written again).
An edit assembled the quick way patches this text (indexpatch.py), not wiki/'s, which is
not the build's; where none is kept (the first build that finds wiki/'s edited), the index
the last build wrote, made again from what it kept of every page and checked against the
record of what it wrote; where that is not it either, or the one kept is not the one the last
build kept (Meta.INDEX_OWN holds its hash, and its file's size and mtime as written, so that
a build that makes it the same does not write it again: a build killed between writing it and
saving, a file changed since), the full assembly makes index.md."""

from __future__ import annotations

import json
from pathlib import Path

from wikic.build.assemble import index_pieces
from wikic.build.linker import PageEntry
from wikic.fsutil import atomic_write
from wikic.hashing import bytes_hash
from wikic.state import Meta, State
from wikic.wiki.page import sealed_pieces

NAME = "index-own.md"  # in the state folder (.wikic/)


def keep(folder: Path, state: State, text: str | None) -> None:
    """What the next build patches: `text`, index.md as this build made it, where it kept
    wiki/'s as edited by hand; None: nothing (wiki/'s is the build's)."""
    path = folder / NAME
    if text is None:
        if state.get_meta(Meta.INDEX_OWN) is not None:
            state.delete_meta(Meta.INDEX_OWN)
            path.unlink(missing_ok=True)
        return
    data = text.encode("utf-8")
    digest = bytes_hash(data)
    if state.get_meta(Meta.INDEX_OWN) == f"{digest} {_stat(path)}":
        return  # as the last build kept it, and its file as written then: not written again
    atomic_write(path, data)
    state.set_meta(Meta.INDEX_OWN, f"{digest} {_stat(path)}")


def _stat(path: Path) -> str:
    """The kept file's size and mtime, as Meta.INDEX_OWN has them beside its hash."""
    try:
        st = path.stat()
    except OSError:
        return "-"
    return f"{st.st_size} {st.st_mtime_ns}"


def kept(folder: Path, state: State) -> str | None:
    """index.md as the last build made it, where it kept wiki/'s as edited by hand; None:
    none kept, or not the one that build kept."""
    want = (state.get_meta(Meta.INDEX_OWN) or "").partition(" ")[0]
    if not want:
        return None
    try:
        data = (folder / NAME).read_bytes()
    except OSError:
        return None
    if bytes_hash(data) != want:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def made_again(state: State, title: str, scope: str, order: list[str]) -> str | None:
    """index.md as the last build wrote it, made again from what it kept: every page's entry,
    and the descriptions of its own pages and of the others (Meta.FOREIGN_LEFT); None where
    that is not, byte for byte, what the record of what wikic wrote says it wrote."""
    wrote = state.files_of(["wiki/index.md"]).get("wiki/index.md")
    others = state.get_meta(Meta.FOREIGN_LEFT)
    if wrote is None or others is None:
        return None
    try:
        described = {slug: kept[1] for slug, kept in json.loads(others).items()}
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None
    described |= state.assembled_descriptions()
    entries = [
        PageEntry(slug, e[0], e[1], e[2], described.get(slug, "")) for slug, e in state.kept_entries().items()
    ]
    text = sealed_pieces(index_pieces(title, scope, entries, order))
    return text if bytes_hash(text.encode("utf-8")) == wrote.hash else None
