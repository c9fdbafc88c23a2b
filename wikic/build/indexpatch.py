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
from wikic.wiki.page import PLAIN, seal, seal_at

COUNT = re.compile(r"(\d+) pages\.\n")

Listing = tuple[str, str, str, str]  # a page's slug, title, type and description
Edit = tuple[int, int, str]  # the text from one offset to another, and what takes its place


@dataclass
class Listed:
    """The pages new and gone, as index.md lists them; `head`: its text before the count."""

    head: str
    added: list[Listing]
    gone: list[Listing]
    title: Callable[[str], str]  # slug -> title, of every page the index lists
    order: list[str]  # the types in the order their parts come (Assembly.type_order)

    def apply(self, index: str, given: list[Edit] | None = None) -> str | None:
        """`index` (unsealed) with the pages new and gone listed and counted, and `given` (the
        lines of descriptions changed) put in; None where it is not as render_index made it.
        Where the pages come into parts there already and leave none empty, their places
        found by bisection in the text and one string made of it (a list of 100,000 lines
        split and joined twice took 0.2 s); else a line at a time (_by_lines)."""
        if not index.startswith(self.head) or not (m := COUNT.match(index, len(self.head))):
            return None
        given = given or []
        count = int(m.group(1)) + len(self.added) - len(self.gone)
        edits = [*given, (m.start(1), m.end(1), str(count))]
        parts: dict[str, tuple[int, int]] = {}
        left: dict[str, int] = {}  # the lines each part keeps
        for kind in {a[2] for a in self.added} | {g[2] for g in self.gone}:
            if (part := _part_in(index, m.end() - 1, kind)) is None:  # a part to make, or odd
                return self._by_lines(index, given)
            parts[kind], left[kind] = part, index.count("\n", *part)
        gone = {slug: title for slug, title, _, _ in self.gone}
        for slug, title, kind, description in self.gone:  # found where it sorts (a page moved, as
            # listed again: its line taken out where the same is put in)
            line = index_line(slug, title, description)
            at = self._place_in(index, *parts[kind], (title.casefold(), slug), gone)
            if not index.startswith(f"{line}\n", at):
                return None
            edits.append((at, at + len(line) + 1, ""))
            left[kind] -= 1
        for slug, title, kind, description in sorted(self.added, key=lambda a: (a[1].casefold(), a[0])):
            if "\n" in description:
                return None
            at = self._place_in(index, *parts[kind], (title.casefold(), slug), gone)
            edits.append((at, at, index_line(slug, title, description) + "\n"))
            left[kind] += 1
        if not all(left.values()):  # a part's last page gone: taken out a line at a time
            return self._by_lines(index, given)
        return _spliced(index, edits)

    def _place_in(self, index: str, first: int, end: int, key: tuple[str, str], gone: dict[str, str]) -> int:
        """_place over the text: where a line of this key goes among the lines index[first:end]
        (an offset, the start of a line), sorted by title, then slug."""
        lo, hi = first, end
        while lo < hi:
            mid = index.rfind("\n", lo, (lo + hi) // 2) + 1 or lo  # the start of the middle line
            after = index.index("\n", mid) + 1
            slug = index[mid + 4 : after].partition("|")[0].partition("]]")[0]
            title = gone[slug] if slug in gone else self.title(slug)
            if (title.casefold(), slug) < key:
                lo = after
            else:
                hi = mid
        return lo

    def _by_lines(self, text: str, given: list[Edit]) -> str | None:
        """apply(), a line at a time: where a type's part is made or taken out."""
        index = _spliced(text, given) if given else text
        if index is None or not (m := COUNT.match(index, len(self.head))):
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


def _part_in(index: str, start: int, kind: str) -> tuple[int, int] | None:
    """Where a type's part lists its pages in `index` (the offsets of its first line and after
    its last), its heading the first after `start`; None where it has none, it is empty, or a
    line in it is not a page's as render_index writes them."""
    heading = f"\n## {type_heading(kind)}\n"
    at = index.find(heading, start)
    if at < 0 or index[at + len(heading) : at + len(heading) + 1] != "\n":
        return None
    first = at + len(heading) + 1
    end = index.find("\n\n", first) + 1 or len(index)
    lines = index.count("\n", first, end)
    if not lines or index[end - 1 : end] != "\n" or index.count("\n- [[", first - 1, end) != lines:
        return None
    return first, end


def _spliced(text: str, edits: list[Edit]) -> str | None:
    """`text` with each edit made, in one string; None where two of them overlap. Lines put in
    at one offset come in the order given."""
    out: list[str] = []
    at = 0
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1])):
        if start < at:
            return None
        out += (text[at:start], new)
        at = end
    out.append(text[at:])
    return "".join(out)


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
    if index is None or (at := seal_at(index)) < 0:
        return False
    index = index[:at]
    given: list[Edit] = []
    for slug, (old, now) in sorted(lines.items()):
        title = titles(slug)
        was = index_line(slug, title, old)
        if (at := index.find(f"\n{was}\n")) < 0:  # a line of each page: the index is wikic's (sealed)
            return False
        given.append((at + 1, at + 1 + len(was), index_line(slug, title, now)))
    plain = all(PLAIN.fullmatch(text) for pair in lines.values() for text in pair)
    patched = listed.apply(index, given) if listed is not None else _spliced(index, given)
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
