"""The project's one stat fingerprint: a snapshot of sources/, wiki/ and the prompt
templates by stat, and the digests that the no-op check, the build's clean mark,
the lint summary's cache key and ask's staleness check compare.

Standard library only, and nothing heavier from wikic than `project`, `prompts`
and `hashing`: it runs on the no-op path, which must never import pydantic or jinja2.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from wikic import __version__, hashing
from wikic.project import Project
from wikic.prompts import PACKAGE_DIR, PROJECT_DIR

Stat = tuple[int, int]  # (size, mtime_ns)
KIND = "kind"  # the field of a walk's line that marks an entry other than a regular file
_KIND, _FILE = 0o170000, 0o100000  # stat.S_IFMT's mask, S_IFREG: no `stat` import on the no-op path
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)


class Tree:
    """One stat walk: every entry as a `name<TAB>size<TAB>mtime_ns[<TAB>-> target][<TAB>kind
    TYPE]` line (folders end in /; `kind`: not a regular file, its file type in octal), each
    file's stat by name (unless the walk was asked not to keep them: the no-op check only
    compares digests), and whether every entry could be stat'ed.
    A walk handed over as sorted lines of plain files (`lazy`: the no-op check's child's) makes
    its stats from them only when all are asked for (`stats`); one file's (`stat()`) is found
    in them by bisection: an edit asks for a few of 100,000.
    A plain class: the no-op build must not import `dataclasses`."""

    __slots__ = ("lines", "_stats", "complete", "_digest", "_asked")

    def __init__(
        self,
        lines: list[str] | None = None,
        stats: dict[str, Stat] | None = None,
        complete: bool = True,
        digested: str | None = None,  # digest() of these lines, made where they were walked
        lazy: bool = False,  # lines sorted, none a link's or other than a file's: stats from them
    ) -> None:
        self.lines = [] if lines is None else lines
        self._stats: dict[str, Stat] | None = None if lazy else {} if stats is None else stats
        self.complete = complete
        self._asked = 0  # stat()s answered by bisection: past BISECTED, the stats are made
        # digest() of the first so many lines: a walk only appends
        self._digest = (-1, "") if digested is None else (len(self.lines), digested)

    @property
    def stats(self) -> dict[str, Stat]:
        """Each file's stat by name (made from the lines at the first ask, where handed over so)."""
        if self._stats is None:
            self._stats = stats_of(self.lines) or {}  # (a lazy walk's lines are all plain)
        return self._stats

    @stats.setter
    def stats(self, stats: dict[str, Stat]) -> None:
        self._stats = stats

    @property
    def lazy(self) -> bool:
        """Its stats not made: the lines are sorted and plain (`stat()` bisects them)."""
        return self._stats is None

    def stat(self, name: str) -> Stat | None:
        """The file's stat (None: no file of that name, or none could be taken)."""
        self._asked += 1
        if self._stats is not None or self._asked > BISECTED:
            return self.stats.get(name)
        lines, key = self.lines, name + "\t"
        at = bisect.bisect_left(lines, key)
        while at < len(lines) and lines[at].startswith(key):  # a name with a tab may come first
            line = lines[at]
            if not line.endswith(_NO_STAT):
                head, size, mtime = line.rsplit("\t", 2)
                if head == name:
                    return (int(size), int(mtime))
            at += 1
        return None

    def digest(self) -> str:
        """Made once while no line is added (a build asks for wiki/'s up to four times, and the
        lint summary twice: 100,000 lines sorted each time)."""
        if self._digest[0] != len(self.lines):
            self._digest = (len(self.lines), digest(self.lines))
        return self._digest[1]


BISECTED = 1000  # a tree's stat()s by bisection before its stats are made (every record checked)
_NO_STAT = ("/", "\tunreadable", "\tmissing")  # a folder's line, an entry's without a stat


def plain(lines: list[str]) -> bool:
    """No line of a link or of an entry other than a file (their fields may hold tabs)."""
    text = "\n".join(lines)
    return "\t-> " not in text and f"\t{KIND} " not in text


def digest(lines: Iterable[str]) -> str:
    """One hash of lines, in any order."""
    return hashing.digest("\n".join(sorted(lines)))


def walk(folder: Path, rel: str, tree: Tree | None = None, keep_stats: bool = True) -> Tree:
    """Every entry below `folder`, named `rel/...`. A file reached through a link is stat'ed
    as the build reads it (the file it points at) and the link's target is part of its line;
    an entry that cannot be stat'ed is a line of its own and leaves the tree incomplete."""
    tree = tree if tree is not None else Tree()
    _scan(str(folder), rel, tree, tree.stats if keep_stats else None)
    return tree


def _scan(folder: str, rel: str, tree: Tree, stats: dict[str, Stat] | None) -> None:
    try:
        fd = os.open(folder, _DIRECTORY)
    except FileNotFoundError:
        tree.lines.append(f"{rel}\tmissing")
        return
    except OSError:
        tree.lines.append(f"{rel}\tunreadable")
        tree.complete = False
        return
    try:  # listed by descriptor, so that each stat resolves one name, not the whole path again
        with os.scandir(fd) as it:
            _entries(it, folder, rel, tree, stats)
    except OSError:
        tree.lines.append(f"{rel}\tunreadable")
        tree.complete = False
    finally:
        os.close(fd)


def _entries(
    it: Iterable[os.DirEntry[str]], folder: str, rel: str, tree: Tree, stats: dict[str, Stat] | None
) -> None:
    lines, prefix = tree.lines, rel + "/"
    for entry in it:  # a hot loop (200,000 entries at 100,000 sources): as little as possible in it
        try:
            if entry.is_dir(follow_symlinks=False):
                name = prefix + entry.name
                lines.append(name + "/")
                _scan(os.path.join(folder, entry.name), name, tree, stats)
                continue
            st = entry.stat()
            link = "\t-> " + os.path.realpath(os.path.join(folder, entry.name)) if entry.is_symlink() else ""
        except OSError:  # a link to nothing, or gone since the listing
            lines.append(f"{prefix}{entry.name}\tunreadable")
            tree.complete = False
            continue
        if st.st_mode & _KIND != _FILE:  # a folder behind a link, a pipe, a device: said so
            link += f"\t{KIND} {st.st_mode & _KIND:o}"
        if stats is None:  # the no-op check: one string per file, nothing else
            lines.append(f"{prefix}{entry.name}\t{st.st_size}\t{st.st_mtime_ns}{link}")
            continue
        name = prefix + entry.name
        lines.append(f"{name}\t{st.st_size}\t{st.st_mtime_ns}{link}")
        stats[name] = (st.st_size, st.st_mtime_ns)


def stats_of(lines: Iterable[str]) -> dict[str, Stat] | None:
    """The stats a walk keeps (keep_stats) read back from its lines; None where a line cannot be
    read back without doubt (a link's, or a pipe's or device's: their fields may hold tabs)."""
    stats: dict[str, Stat] = {}
    odd = ("\t-> ", f"\t{KIND} ")
    for line in lines:
        if line.endswith(_NO_STAT):  # a folder, or no stat
            continue
        if odd[0] in line or odd[1] in line:
            return None
        name, size, mtime = line.rsplit("\t", 2)  # a file's line ends in its size and mtime
        stats[name] = (int(size), int(mtime))
    return stats


def restat(before: Tree, touched: Iterable[str], root: Path, dropped: str) -> Tree | None:
    """`before` (a walk) with the entries named in `touched` stat'ed again and those whose
    name starts with `dropped` left out: what a walk finds when nothing else changed since,
    for a stat per entry touched instead of one per entry. None where `before` cannot be
    patched (a folder missing, an entry unreadable): walk again. An entry someone else
    changed meanwhile keeps its old line, so a digest of this tree differs from the next
    walk's: at worst a build that finds nothing to do, never a skipped one."""
    # each of 100,000 lines looked at in Python only where their text holds what is looked for
    text = "\n".join(before.lines)
    missing = "\tmissing" in text and any(line.endswith("\tmissing") for line in before.lines)
    if not before.complete or missing:
        return None
    gone = set(touched)

    def kept(name: str) -> bool:
        return name not in gone and not name.rsplit("/", 1)[-1].startswith(dropped)

    lazy = before.lazy  # its stats not made: the new tree's made from its lines too, when asked
    if dropped in text or any("\t" in name for name in gone):
        tree = Tree([line for line in before.lines if kept(line.split("\t", 1)[0])], lazy=lazy)
        if not lazy:
            tree.stats = {name: stat for name, stat in before.stats.items() if kept(name)}
    else:  # no temporary file: only the entries touched go
        heads = tuple(f"{name}\t" for name in gone)
        tree = Tree(
            [line for line in before.lines if not line.startswith(heads)] if heads else list(before.lines),
            lazy=lazy,
        )
        if not lazy:
            tree.stats = dict(before.stats)
            for name in gone:
                tree.stats.pop(name, None)
    for name in sorted(gone):
        try:
            st = os.stat(os.path.join(str(root), name))  # as walk stats it: through a link
        except FileNotFoundError:
            continue
        except OSError:
            return None
        tree.lines.append(f"{name}\t{st.st_size}\t{st.st_mtime_ns}")
        if not lazy:
            tree.stats[name] = (st.st_size, st.st_mtime_ns)
    if lazy:
        tree.lines.sort()  # in order again, for stat()'s bisection: a few lines out of place
    return tree


def inputs(project: Project) -> Tree:
    """What a build reads besides the model: wikic's version, schema.yaml's bytes, the
    shipped and the project's templates, and every file under sources/ (not only those
    schema.yaml includes). Raises OSError when schema.yaml cannot be read."""
    schema = hashing.digest(project.schema_path.read_bytes())
    tree = Tree(lines=[f"version {__version__}", f"schema {schema}"])
    package = str(PACKAGE_DIR)
    for name in os.listdir(package):  # the package folder also holds its Python
        if name.endswith(".j2"):
            st = os.stat(path := os.path.join(package, name))
            tree.lines.append(f"{path}\t{st.st_size}\t{st.st_mtime_ns}")
    walk(project.root / PROJECT_DIR, PROJECT_DIR, tree, keep_stats=False)  # only its digest is read
    walk(project.sources_dir, "sources", tree, keep_stats=False)
    return tree


def wiki(project: Project, keep_stats: bool = True) -> Tree:
    """Every name and stat under wiki/: a new or edited hand-made page must be seen."""
    return walk(project.wiki_dir, "wiki", keep_stats=keep_stats)


def build_inputs(project: Project, model_id: str, taken: Tree | None = None) -> str:
    """The build's input mark, taken before it reads anything (or `taken`: the inputs just
    walked by the no-op check), so that an edit made while it runs is seen by the next one."""
    return digest([(taken or inputs(project)).digest(), f"model {model_id}"])


def clean_mark(project: Project, build_mark: str, walked: Tree | None = None) -> str:
    """What the build records after a clean build, and what ask compares with: the inputs
    as the build found them, and wiki/ as it is now (or as `walked` just now)."""
    return digest([build_mark, "wiki " + (walked or wiki(project)).digest()])


def outputs_intact(
    root: Path, records: Iterable[tuple[str, int, int]], seen: Callable[[str], Stat | None] | None = None
) -> bool:
    """True when every file wikic wrote (path, size, mtime_ns) is still exactly as it left it.
    `seen` (a walk's stat of a file, by the same relative names: Tree.stat) spares a stat call
    per file."""
    base = str(root)
    for rel, size, mtime_ns in records:
        stat = seen(rel) if seen is not None else None
        if stat is None:
            try:
                st = os.stat(os.path.join(base, rel))  # not pathlib: 10,000 of these in a no-op
            except OSError:
                return False
            stat = (st.st_size, st.st_mtime_ns)
        if stat != (size, mtime_ns):
            return False
    return True
