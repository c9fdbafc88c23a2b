"""A build lists its sources from the walk the no-op check just took (scan.listed): the same
files, stats and errors as a listing of its own (scan.list_sources), whatever sources/ holds."""

from __future__ import annotations

import os
from pathlib import Path

from wikic import snapshot
from wikic.config import SourcesConfig
from wikic.sources.scan import list_sources, listed


def _both(root: Path, cfg: SourcesConfig) -> tuple[object, object]:
    tree = snapshot.walk(root / "sources", "sources", keep_stats=False)
    walked = listed(root, cfg, tree.lines)
    own = list_sources(root, cfg)
    return walked, (own[0], [(e.path, e.reason) for e in own[1]])


def _as_compared(walked: object) -> object:
    assert walked is not None
    files, errors = walked  # type: ignore[misc]
    return files, [(e.path, e.reason) for e in errors]


def _tree(root: Path, outside: Path) -> None:
    src = root / "sources"
    hidden = [".hidden.md", ".folder/x.md", "b/.h/y.md"]
    for rel in ["a.md", "b/c.md", "b/d/e.txt", *hidden, "old.md~", "skip.log"]:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(f"# {rel}\n\nText of {rel}.\n")
    (outside / "far.md").write_text("# Far\n")
    (outside / "folder").mkdir()
    os.symlink(src / "a.md", src / "inside-link.md")
    os.symlink(outside / "far.md", src / "outside-link.md")
    os.symlink(outside / "folder", src / "folder-link")
    os.symlink(outside / "folder", src / "b" / "skipped-folder-link.log")
    os.mkfifo(src / "pipe.md")


def test_the_walk_lists_every_kind_of_entry_as_a_listing_of_its_own(tmp_path: Path) -> None:
    root, outside = tmp_path / "p", tmp_path / "outside"
    outside.mkdir()
    _tree(root, outside)
    cfg = SourcesConfig(include=["**/*.md", "**/*.txt"], exclude=["**/e.txt"])
    walked, own = _both(root, cfg)
    assert _as_compared(walked) == own
    files, errors = own  # type: ignore[misc]
    assert [f.path for f in files] == ["sources/a.md", "sources/b/c.md", "sources/inside-link.md"]
    assert {path for path, _ in errors} == {
        "sources/outside-link.md",
        "sources/folder-link",
        "sources/b/skipped-folder-link.log",
        "sources/pipe.md",
    }


def test_no_sources_folder_lists_nothing(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    walked, own = _both(tmp_path / "p", SourcesConfig())
    assert _as_compared(walked) == own == ([], [])


def test_a_broken_link_is_left_to_the_listing_that_says_why(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / "sources").mkdir(parents=True)
    os.symlink(tmp_path / "nowhere.md", root / "sources" / "dead.md")
    walked, own = _both(root, SourcesConfig())
    assert walked is None
    assert [path for path, _ in own[1]] == ["sources/dead.md"]  # type: ignore[index]


def test_globs_match_as_the_one_regular_expression_does() -> None:
    """Patterns that only say how a name ends are tested by endswith: the same answers as
    fnmatch's translation, for every kind of pattern and name."""
    from wikic.config import SourcesConfig
    from wikic.sources.scan import Globs, _pattern

    lists = [
        SourcesConfig().include,
        [],
        ["*.md"],
        ["**/*.md", "drafts/**", "*.tar.gz", "notes/*.txt", "[ab]*.csv", "**/x-y_z.*"],
        ["**/*.MD", "*.m?"],
    ]
    names = [
        "a.md",
        "d/a.md",
        "a.MD",
        "a.mdx",
        "a.md~",
        ".md",
        "md",
        "a.txt",
        "drafts/a.md",
        "drafts/b",
        "notes/a.txt",
        "notes/d/a.txt",
        "a.csv",
        "c.csv",
        "x-y_z.q",
        "d/x-y_z.q",
        "a\n.md",
        "a.md\n",
        "a.tar.gz",
        "d/a.tar.gz",
        "a.mo",
        "é/ü.md",
        "a.markdown",
        "a.pdf",
        "a.epub",
        "a.htm",
    ]
    for patterns in lists:
        regex, globs = _pattern(patterns), Globs(patterns)
        for name in names:
            assert globs.match(name) == (regex.match(name) is not None), (patterns, name)
