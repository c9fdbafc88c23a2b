"""What an edit's costs were cut with, held to what they replace: glibc asked to keep freed
memory for the build's next allocations (run.keep_heap); wiki/ as the no-op check's child
walked it, handed over as sorted lines whose stats are read by bisection (snapshot.Tree)."""

from __future__ import annotations

import platform
import resource
import sys
from pathlib import Path

import pytest

from wikic import snapshot
from wikic.build.run import keep_heap

LARGE = 64 << 20  # above the 32 MB up to which glibc's own threshold adapts


def _faults_of_a_large_buffer() -> int:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    buffer = bytearray(LARGE)  # zeroed: every page touched
    del buffer
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc", reason="glibc")
def test_a_large_buffer_freed_is_reused_without_page_faults() -> None:
    assert keep_heap()
    _faults_of_a_large_buffer()  # the heap grows to hold it once
    assert _faults_of_a_large_buffer() < LARGE // 4096 // 10  # then it is there: no page mapped anew


def _tree_of(tmp_path: Path) -> Path:
    """A wiki/ with names that sort next to each other, a tab in one, a folder, an empty file."""
    wiki = tmp_path / "wiki"
    (wiki / "sub").mkdir(parents=True)
    for name in ["a.md", "a.md~", "a\tb.md", "a\t1.md", "ab.md", "sub/a.md", "b.md", "c", "c\t0.md"]:
        (wiki / name).write_text(name * 3)
    (wiki / "empty.md").write_text("")
    return wiki


def test_a_walk_handed_over_as_sorted_lines_answers_each_stat_as_the_walk(tmp_path: Path) -> None:
    """Tree.stat() by bisection of the sorted lines (no stats made) is the walk's stat of every
    name, a name with a tab in it and names that start alike included; None for the others."""
    wiki = _tree_of(tmp_path)
    walked = snapshot.walk(wiki, "wiki")
    lazy = snapshot.Tree(sorted(walked.lines), None, True, lazy=True)
    assert lazy.lazy and snapshot.plain(lazy.lines)
    for name, stat in walked.stats.items():
        assert lazy.stat(name) == stat
    for name in ["wiki/a", "wiki/sub", "wiki/sub/", "wiki/a.m", "wiki/zz.md", "wiki/a\tb"]:
        assert lazy.stat(name) is None and walked.stat(name) is None
    assert lazy.lazy  # none of it made the stats
    assert lazy.stats == walked.stats and not lazy.lazy


def test_many_stats_asked_of_a_lazy_walk_make_its_stats_once(tmp_path: Path) -> None:
    wiki = _tree_of(tmp_path)
    walked = snapshot.walk(wiki, "wiki")
    lazy = snapshot.Tree(sorted(walked.lines), None, True, lazy=True)
    for _ in range(snapshot.BISECTED):
        assert lazy.stat("wiki/a.md") == walked.stats["wiki/a.md"]
    assert lazy.lazy
    assert lazy.stat("wiki/b.md") == walked.stats["wiki/b.md"] and not lazy.lazy


def test_a_lazy_walk_patched_is_the_walk_taken_again(tmp_path: Path) -> None:
    """restat() of a walk handed over as lines: its lines sorted again, each stat as a new walk's."""
    wiki = _tree_of(tmp_path)
    walked = snapshot.walk(wiki, "wiki")
    lazy = snapshot.Tree(sorted(walked.lines), None, True, lazy=True)
    (wiki / "a.md").write_text("longer than it was")
    (wiki / "b.md").unlink()
    (wiki / "new.md").write_text("new")
    touched = ["wiki/a.md", "wiki/b.md", "wiki/new.md"]
    patched = snapshot.restat(lazy, touched, tmp_path, ".wikic-tmp-")
    again = snapshot.walk(wiki, "wiki")
    assert patched is not None and patched.lazy
    assert patched.lines == sorted(again.lines) and patched.digest() == again.digest()
    for name in [*again.stats, *touched]:
        assert patched.stat(name) == again.stats.get(name)
    assert patched.stats == again.stats


def test_a_link_makes_the_walk_not_plain(tmp_path: Path) -> None:
    wiki = _tree_of(tmp_path)
    (wiki / "link.md").symlink_to(wiki / "a.md")
    assert not snapshot.plain(snapshot.walk(wiki, "wiki").lines)
