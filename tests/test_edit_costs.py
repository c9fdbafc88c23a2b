"""What an edit's costs were cut with, held to what they replace: glibc asked to keep freed
memory for the build's next allocations (run.keep_heap)."""

from __future__ import annotations

import platform
import resource
import sys

import pytest

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
