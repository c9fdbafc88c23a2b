"""Atomic writes of many files: all written and synced before the first rename."""

from __future__ import annotations

from pathlib import Path

import pytest

from wikic.fsutil import TMP_MARK, atomic_write_many, remove_stale_temps, temp_path
from wikic.snapshot import walk


def test_many_files_are_renamed_in_order_after_all_are_written(tmp_path: Path) -> None:
    files = [(tmp_path / f"p{i}.md", f"page {i}".encode()) for i in range(40)]
    (tmp_path / "p3.md").write_text("old")
    seen: list[str] = []

    def renamed(path: Path, data: bytes) -> None:
        # when the first file is renamed, every other one is already on disk, waiting
        if not seen:
            assert len(list(tmp_path.glob(f"{TMP_MARK}*"))) == len(files) - 1
        assert path.read_bytes() == data
        seen.append(path.name)

    atomic_write_many(files, renamed)
    assert seen == [path.name for path, _ in files]
    assert [p.read_bytes() for p, _ in files] == [data for _, data in files]
    assert not list(tmp_path.glob(f"{TMP_MARK}*"))


def test_a_failed_write_changes_no_file_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    files = [(tmp_path / f"p{i}.md", b"new") for i in range(20)]
    for path, _ in files:
        path.write_bytes(b"old")
    temp_path(files[12][0]).mkdir()  # the 13th temporary file cannot be written
    with pytest.raises(IsADirectoryError):
        atomic_write_many(files)
    assert {path.read_bytes() for path, _ in files} == {b"old"}
    assert [p.name for p in tmp_path.glob(f"{TMP_MARK}*")] == [temp_path(files[12][0]).name]


def test_stale_temporary_files_are_found_in_the_walk_just_taken(tmp_path: Path) -> None:
    wiki = tmp_path / "wiki"
    (wiki / "sub").mkdir(parents=True)
    stale = [wiki / f"{TMP_MARK}a.md", wiki / "sub" / f"{TMP_MARK}b.md"]
    kept = [wiki / "page.md", wiki / f"page{TMP_MARK}c.md", wiki / "sub" / "other.md"]
    for path in stale + kept:
        path.write_text("x")
    (wiki / "link.md").symlink_to(stale[0])  # a link to a temporary file is not one
    tree = walk(wiki, "wiki")
    assert sum(TMP_MARK in line for line in tree.lines) == 4
    remove_stale_temps(wiki, tree.lines)
    assert not any(path.exists() for path in stale)
    assert all(path.exists() for path in kept) and (wiki / "link.md").is_symlink()
