"""index.md patched by an edit assembled the quick way (quick.py), not made again from every
page's entry: the lines of the pages whose description changed made again where they are,
and the lines of pages new put in their place (by title, then slug, in their type's part)
and those of pages gone taken out, with the count of pages; a type's part made where its
first page comes (in the schema's order of types), and taken out where its last goes. Where
the index is not as assemble.render_index made it (a line not found once, a part whose type
it cannot tell), None: the full assembly makes it."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from wikic.build.assemble import index_head, index_line, type_heading
from wikic.state import Rendered
from wikic.wiki.page import PLAIN, seal

COUNT = re.compile(r"(\d+) pages\.\n")

Listing = tuple[str, str, str, str]  # a page's slug, title, type and description


@dataclass
class Listed:
    """The pages new and gone, as index.md lists them; `head`: its text before the count."""

    head: str
    added: list[Listing]
    gone: list[Listing]
    title: Callable[[str], str]  # slug -> title, of every page the index lists
    order: list[str]  # the types in the order their parts come (Assembly.type_order)

    def apply(self, index: str) -> str | None:
        """`index` (unsealed) with the pages new and gone listed and counted; None where it
        is not as render_index made it."""
        if not index.startswith(self.head) or not (m := COUNT.match(index, len(self.head))):
            return None
        count = int(m.group(1)) + len(self.added) - len(self.gone)
        lines = f"{self.head}{count} pages.\n{index[m.end() :]}".split("\n")
        start = self.head.count("\n") + 1  # the parts' headings come after the count
        # the pages new put in first (a part whose pages all go may get another), among the
        # lines of the pages gone too (their titles as they were)
        gone = {slug: title for slug, title, _, _ in self.gone}
        for slug, title, kind, description in sorted(self.added, key=lambda a: (a[1].casefold(), a[0])):
            if "\n" in description:
                return None
            part = self._part(lines, start, kind)
            if part is None:  # its type's first page: the part made where the type comes
                if (at := self._new_part(lines, start, kind)) is None:
                    return None
                lines[at:at] = [f"## {type_heading(kind)}", "", index_line(slug, title, description), ""]
                continue
            if not isinstance(part, tuple):  # its part there, empty: not render_index's
                return None
            first, end = part
            at = self._place(lines, first, end, (title.casefold(), slug), gone)
            lines.insert(at, index_line(slug, title, description))
        index = "\n".join(lines)
        for slug, title, _, description in self.gone:
            was = f"\n{index_line(slug, title, description)}\n"
            if index.count(was) != 1:
                return None
            index = index.replace(was, "\n")
        lines = index.split("\n")
        for kind in {kind for _, _, kind, _ in [*self.gone, *self.added]}:
            part = self._part(lines, start, kind)
            if part is False:  # its last page gone: the part too, with the blank lines it made
                at = lines.index(f"## {type_heading(kind)}", start)
                del lines[at : at + 3]
            elif part is None:
                return None
        return "\n".join(lines)

    def _part(self, lines: list[str], start: int, kind: str) -> tuple[int, int] | None | bool:
        """The lines of a type's part (first, end); None: no such part; False: empty."""
        try:
            at = lines.index(f"## {type_heading(kind)}", start)
        except ValueError:
            return None
        if at + 1 >= len(lines) or lines[at + 1] != "":
            return None
        end = first = at + 2
        while end < len(lines) and lines[end].startswith("- [["):
            end += 1
        if end < len(lines) and lines[end] != "":  # a line not of render_index's making
            return None
        return (first, end) if end > first else False

    def _new_part(self, lines: list[str], start: int, kind: str) -> int | None:
        """Where the part of a type that has none goes: before the first part of a type that
        comes after it (render_index: the schema's types in its order, then the others by
        name), else at the end; None where it comes among parts whose types it cannot tell."""
        kinds = [*self.order, *(a[2] for a in self.added), *(g[2] for g in self.gone)]
        headings = {type_heading(k): k for k in kinds}
        rank = self._rank(kind)
        for at in range(start, len(lines)):
            if lines[at].startswith("## "):
                there = headings.get(lines[at][3:])
                if there is None:  # a type the schema does not name: after every one it names
                    return at if kind in self.order else None
                if self._rank(there) > rank:
                    return at
        return len(lines)

    def _rank(self, kind: str) -> tuple[int, str]:
        return (0, f"{self.order.index(kind):09d}") if kind in self.order else (1, kind)

    def _place(
        self, lines: list[str], first: int, end: int, key: tuple[str, str], gone: dict[str, str]
    ) -> int:
        """Where a line of this key goes among lines[first:end] (sorted by title, then slug)."""
        lo, hi = first, end
        while lo < hi:
            mid = (lo + hi) // 2
            slug = lines[mid][4:].partition("|")[0].partition("]]")[0]
            title = gone[slug] if slug in gone else self.title(slug)
            if (title.casefold(), slug) < key:
                lo = mid + 1
            else:
                hi = mid
        return lo


def patched_index(
    read: Callable[[], str | None],
    titles: Callable[[str], str],
    previous: Mapping[str, Rendered],
    rendered: Mapping[str, Rendered],
    listed: Listed | None = None,
) -> tuple[str, bool] | bool | None:
    """index.md with the lines of the pages whose description changed made again (a page's
    line stays where it was: its title, type and slug did not change), and `listed`'s pages
    new and gone; with whether every description changed, old and new, is plain text (PLAIN:
    then, but for the lines of the pages new and gone, its links and blocks are as they were).
    None: unchanged; False: not as render_index made it, the index made in full."""
    new = {a[0] for a in listed.added} if listed is not None else set()
    lines = {
        slug: (previous[slug].description, now.description)
        for slug, now in rendered.items()
        if slug not in new and now.description != previous[slug].description
    }
    if not lines and listed is None:
        return None
    index = read()
    at = -1 if index is None else index.rfind("\n<!-- wikic:")
    if index is None or at < 0 or seal(index[:at]) != index:
        return False
    index = index[:at]
    for slug, (old, now) in sorted(lines.items()):
        title = titles(slug)
        was = f"\n{index_line(slug, title, old)}\n"
        if index.count(was) != 1:
            return False
        index = index.replace(was, f"\n{index_line(slug, title, now)}\n")
    plain = all(PLAIN.fullmatch(text) for pair in lines.values() for text in pair)
    if listed is not None:
        patched = listed.apply(index)
        if patched is None:
            return False
        index = patched
    return seal(index), plain


def listed(
    head_of: tuple[str, str],
    added: dict[str, tuple[str, str]],
    gone: list[Listing],
    titles: Callable[[str], str],
    order: list[str],
) -> Listed:
    """The Listed of the pages `added` (slug -> (type, description); titled by `titles`), in
    an index whose types' parts come in `order`."""
    title, scope = head_of
    new = [(slug, titles(slug), kind, description) for slug, (kind, description) in added.items()]
    return Listed(index_head(title, scope), new, gone, titles, order)
