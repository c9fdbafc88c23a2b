"""What assemble looks up of the plan's pages, the sources and the state, found as it is
asked for (an edit's assembly asks about a few pages, never all of them), and the wiki's
names as an assembly went by them, kept for the next (build/quick.py)."""

from __future__ import annotations

import bisect
import json
import marshal
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar

from wikic.build.keptplan import Pages
from wikic.build.plan import Claim, PagePlan

if TYPE_CHECKING:
    from wikic.build.intake import Read
    from wikic.state import State

NAMES_VERSION = 3  # of the kept names: bump when what they hold changes (3: the fingerprint a sum)
V = TypeVar("V")


class SourceSlugs(Mapping[str, str]):
    """source path -> the slug of its source page ("source:<path>", plan.py)."""

    def __init__(self, pages: Mapping[str, PagePlan]) -> None:
        self.pages = pages
        self.paths: list[str] | None = None  # the plan's sources' paths, for title()

    def __getitem__(self, path: str) -> str:
        pid = f"source:{path}"
        if isinstance(self.pages, Pages) and self.pages.slugs:  # a patched plan: no page decoded for it
            return self.pages.slugs[pid]
        page = self.pages.get(pid)
        if page is None or page.type != "source":
            raise KeyError(path)
        return page.slug

    def get(self, path: str, default: Any = None) -> Any:  # asked for each source a topic page lists
        if isinstance(self.pages, Pages) and self.pages.slugs:
            return self.pages.slugs.get(f"source:{path}", default)
        try:
            return self[path]
        except KeyError:
            return default

    def title(self, path: str) -> str:
        """The title of the source's page (as the linker has it: the plan's)."""
        pages = self.pages
        if isinstance(pages, Pages):
            # found by bisection of their paths: a topic page lists thousands of sources (a
            # list of paths is a third of a dict of every title; bisecting the sources by a
            # key function, twice this list for three such pages)
            if self.paths is None:
                self.paths = [src.path for src in pages.sources]
            at = bisect.bisect_left(self.paths, path)
            if at < len(self.paths) and self.paths[at] == path:
                return pages.sources[at].title
            title = pages.title(path)  # not in path order there (those read anew come first)
            if title is not None:
                return title
        return pages[f"source:{path}"].title

    def __iter__(self) -> Iterator[str]:
        return (p.sources[0] for p in self.pages.values() if p.type == "source")

    def __len__(self) -> int:
        return sum(1 for _ in self)


class TopicSlugs(Mapping[str, str]):
    """topic page id -> its slug (every planned page that is not a source's)."""

    def __init__(self, pages: Mapping[str, PagePlan]) -> None:
        self.pages = pages

    def __getitem__(self, pid: str) -> str:
        page = self.pages.get(pid)
        if page is None or page.type == "source":
            raise KeyError(pid)
        return page.slug

    def __iter__(self) -> Iterator[str]:
        return (pid for pid, p in self.pages.items() if p.type != "source")

    def __len__(self) -> int:
        return sum(1 for _ in self)


class Cites(Mapping[tuple[str, str], list[list[int]]]):
    """(topic page id, source) -> the source's line ranges among the topic's notes, grouped
    once per topic when first asked (scanning each topic's notes per source is quadratic)."""

    def __init__(self, pages: Mapping[str, PagePlan]) -> None:
        self.pages = pages
        self.grouped: dict[str, dict[str, list[Claim]]] = {}

    def get(self, key: tuple[str, str], default: Any = None) -> Any:  # the one way it is asked
        tid, source = key
        grouped = self.grouped.get(tid)
        if grouped is None:
            self.grouped[tid] = grouped = self._group(tid)
        claims = grouped.get(source)
        return default if claims is None else [[c.start, c.end] for c in claims]

    def _group(self, tid: str) -> dict[str, list[Claim]]:
        """The topic's notes by source: the notes themselves (a list made for each of 60,000
        notes costs more than all the rest)."""
        page = self.pages.get(tid)
        grouped: dict[str, list[Claim]] = {}
        if page is None or page.type == "source":
            return grouped
        found = grouped.get
        for c in page.claims:
            claims = found(c.source)
            if claims is None:
                grouped[c.source] = [c]
            else:
                claims.append(c)
        return grouped

    def __getitem__(self, key: tuple[str, str]) -> list[list[int]]:
        found: list[list[int]] | None = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __iter__(self) -> Iterator[tuple[str, str]]:
        raise TypeError("Cites is looked up, never listed")

    def __len__(self) -> int:
        raise TypeError("Cites is looked up, never listed")


class Rows(Mapping[str, V]):
    """A table of state.db as a mapping: each key read when first asked for (`fetch` of a few
    keys), or all of them where it is listed (`every`): an edit asks about a few pages."""

    def __init__(self, fetch: Callable[[list[str]], dict[str, V]], every: Callable[[], dict[str, V]]) -> None:
        self.fetch, self.every = fetch, every
        self.found: dict[str, V | None] = {}
        self.whole: dict[str, V] | None = None

    def __getitem__(self, key: str) -> V:
        if self.whole is not None:
            return self.whole[key]
        if key not in self.found:
            self.found[key] = self.fetch([key]).get(key)
        value = self.found[key]
        if value is None:
            raise KeyError(key)
        return value

    def load(self, keys: Iterable[str]) -> None:
        """These keys read at once, as the next asked for."""
        keys = [k for k in keys if k not in self.found]
        found = self.fetch(keys)
        self.found.update({k: found.get(k) for k in keys})

    def __iter__(self) -> Iterator[str]:
        if self.whole is None:
            self.whole = self.every()
        return iter(self.whole)

    def __len__(self) -> int:
        return sum(1 for _ in self)


Entry = tuple[str, str, list[str], str]  # a page's title, type, aliases and id ("": not the build's)


@dataclass
class Names:
    """The wiki's names as an assembly went by them: `fingerprint` (Linker.fingerprint), each
    page's entry (slug -> Entry), the linker's names (name -> slug) and `heads` (Linker.heads).
    An edit whose pages keep their entries resolves and links with them (quick.py), read from
    state.db as they are asked for; only the fingerprint and the heads are kept whole."""

    fingerprint: str
    heads: set[str]
    entries: Mapping[str, Entry]
    names: Mapping[str, str]

    def dumps(self) -> bytes:
        return marshal.dumps([NAMES_VERSION, self.fingerprint, sorted(self.heads)])

    def titles(self) -> Mapping[str, str]:
        return _Titles(self.entries)

    @classmethod
    def loads(
        cls, blob: bytes | None, entries: Mapping[str, Entry], names: Mapping[str, str]
    ) -> Names | None:
        if not blob:
            return None
        try:
            kept: Any = marshal.loads(blob)
        except (EOFError, ValueError, TypeError):
            return None
        if not isinstance(kept, list) or len(kept) != 3 or kept[0] != NAMES_VERSION:
            return None
        return cls(kept[1], set(kept[2]), entries, names)


class _Titles(Mapping[str, str]):
    """slug -> title, from the entries."""

    def __init__(self, entries: Mapping[str, Entry]) -> None:
        self.entries = entries

    def __getitem__(self, slug: str) -> str:
        return self.entries[slug][0]

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)


class Sources(Mapping[str, "Read"]):
    """The sources read, by path, found by bisection (the sources come in path order, but those
    read anew come first: where one is not found so, all of them by path, once): an edit asks
    for a few hundred of 100,000."""

    def __init__(self, sources: list[Read]) -> None:
        self.sources = sources
        self.whole: dict[str, Read] | None = None

    def __getitem__(self, path: str) -> Read:
        if self.whole is None:
            at = bisect.bisect_left(self.sources, path, key=attrgetter("path"))  # no list of every path
            if at < len(self.sources) and self.sources[at].path == path:
                return self.sources[at]
            self.whole = {s.path: s for s in self.sources}
        return self.whole[path]

    def __iter__(self) -> Iterator[str]:
        return (s.path for s in self.sources)

    def __len__(self) -> int:
        return len(self.sources)


class LineCounts(Mapping[str, int]):
    """source path -> how many lines it has (Assembly.line_counts), looked up as asked."""

    def __init__(self, sources: Sources) -> None:
        self.sources = sources

    def __getitem__(self, path: str) -> int:
        return self.sources[path].lines

    def __iter__(self) -> Iterator[str]:
        return iter(self.sources)

    def __len__(self) -> int:
        return len(self.sources)


class Prose(Mapping[str, dict[str, Any]]):
    """Each topic page's composed text: this build's, else as the last build composed it
    (a page the edit leaves as it was, whose backlinks changed)."""

    def __init__(self, composed: dict[str, dict[str, Any]], state: State) -> None:
        self.composed, self.state = composed, state

    def __getitem__(self, pid: str) -> dict[str, Any]:
        if pid not in self.composed:
            row = self.state.composed_of([pid]).get(pid)
            if row is None:
                raise KeyError(pid)
            self.composed[pid] = json.loads(row[1])
        return self.composed[pid]

    def __iter__(self) -> Iterator[str]:
        return iter(self.composed)

    def __len__(self) -> int:
        return len(self.composed)
