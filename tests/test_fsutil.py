"""Atomic writes of many files: all written and synced before the first rename."""

from __future__ import annotations

import ctypes
import errno
import os
from pathlib import Path

import pytest

from wikic import fsutil
from wikic.fsutil import SYNC_ALL, TMP_MARK, atomic_write_many, remove_stale_temps, temp_path
from wikic.snapshot import walk

needs_syncfs = pytest.mark.skipif(fsutil._syncfs is None, reason="no syncfs(2) here")


@pytest.mark.parametrize("count", [40, SYNC_ALL + 10])
def test_many_files_are_renamed_in_order_after_all_are_written(tmp_path: Path, count: int) -> None:
    files = [(tmp_path / f"p{i}.md", f"page {i}".encode()) for i in range(count)]
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


@needs_syncfs
def test_many_files_are_synced_by_one_call_a_few_by_an_fsync_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_syncfs, real_fsync = fsutil._syncfs, os.fsync
    calls: list[str] = []

    def syncfs(fd: int) -> int:
        # everything is written before the one sync, and nothing renamed yet
        assert len(list(tmp_path.rglob(f"{TMP_MARK}*"))) == SYNC_ALL + 1
        calls.append("syncfs")
        assert real_syncfs is not None
        return real_syncfs(fd)

    def fsync(fd: int) -> None:
        calls.append("fsync")
        real_fsync(fd)

    monkeypatch.setattr(fsutil, "_syncfs", syncfs)
    monkeypatch.setattr(os, "fsync", fsync)
    (tmp_path / "sub").mkdir()
    many = [(tmp_path / ("sub" if i % 2 else "") / f"p{i}.md", b"x") for i in range(SYNC_ALL + 1)]
    atomic_write_many(many)
    assert calls == ["syncfs"]  # two folders, one file system
    calls.clear()
    atomic_write_many([(tmp_path / f"q{i}.md", b"y") for i in range(SYNC_ALL - 1)])
    assert calls == ["fsync"] * (SYNC_ALL - 1)


@needs_syncfs
def test_a_failed_sync_changes_no_file_and_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def syncfs(fd: int) -> int:
        ctypes.set_errno(errno.EIO)
        return -1

    monkeypatch.setattr(fsutil, "_syncfs", syncfs)
    files = [(tmp_path / f"p{i}.md", b"new") for i in range(SYNC_ALL)]
    for path, _ in files:
        path.write_bytes(b"old")
    with pytest.raises(OSError) as raised:
        atomic_write_many(files)
    assert raised.value.errno == errno.EIO
    assert {path.read_bytes() for path, _ in files} == {b"old"}
    assert not list(tmp_path.glob(f"{TMP_MARK}*"))


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
