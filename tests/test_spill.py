"""wikic/spill.py: strings kept in a temporary file, not in memory, and read back as written."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from wikic.spill import Spill, Spilled


def test_spill_reads_back_every_string_in_the_order_written(tmp_path: Path) -> None:
    rng = random.Random(3)
    data = [bytes(rng.randrange(256) for _ in range(rng.randrange(0, 300))) for _ in range(200)]
    with Spill(tmp_path) as spill:
        for item in data:
            spill.add(item)
        assert len(spill) == len(data)
        assert list(spill) == data
    assert list(tmp_path.iterdir()) == [], "nothing left beside the state"


def test_spilled_reads_any_text_by_key_in_any_order_while_more_are_added(tmp_path: Path) -> None:
    rng = random.Random(5)
    texts = {
        f"sources/s{i:03}.md": "".join(rng.choice("ab\n\u00e9\u4e2d ") for _ in range(rng.randrange(0, 90)))
        for i in range(300)
    }
    with Spilled(tmp_path) as spilled:
        added: list[str] = []
        for key, text in texts.items():
            spilled.add(key, text)
            added.append(key)
            if rng.random() < 0.3:  # asked for before the file's buffer is flushed
                asked = rng.choice(added)
                assert spilled[asked] == texts[asked]
        keys = list(texts)
        rng.shuffle(keys)
        assert [spilled[k] for k in keys] == [texts[k] for k in keys]
        assert len(spilled) == len(texts) and list(spilled) == list(texts)
        with pytest.raises(KeyError):
            spilled["sources/none.md"]
    assert list(tmp_path.iterdir()) == []


def test_spilled_only_holds_the_keys_it_is_given(tmp_path: Path) -> None:
    with Spilled(tmp_path) as spilled:
        for key in "abcd":
            spilled.add(key, key * 3)
        named = {"b": None, "d": None}
        view = spilled.only(named)
        assert (list(view), len(view), dict(view)) == (["b", "d"], 2, {"b": "bbb", "d": "ddd"})
        assert "a" not in view and "b" in view
        with pytest.raises(KeyError):
            view["a"]


def test_spilled_keeps_bytes_as_they_are(tmp_path: Path) -> None:
    """A packed digest (marshal) is no text: put and raw keep its bytes."""
    packed = {"a": b"\xff\x00\xfe", "b": b"", "c": bytes(range(256)) * 9}
    with Spilled(tmp_path) as spilled:
        for key, data in packed.items():
            spilled.put(key, data)
        assert {key: spilled.raw(key) for key in reversed(packed)} == packed
        assert "c" in spilled and "d" not in spilled


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_reads_what_waits_in_the_buffer_and_the_file_stays_whole(tmp_path: Path) -> None:
    """A child reading a text this process has not flushed yet (wikic/forked.py) finds it, and
    the file this process goes on writing stays as its offsets say: the buffer is flushed
    before the fork, never by the child a second time."""
    with Spilled(tmp_path) as spilled:
        spilled.add("a", "first " * 10)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: what it reads, sent back
            try:
                os.write(write, spilled.raw("a"))
            finally:
                os._exit(0)
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            assert pipe.read() == ("first " * 10).encode()
        os.waitpid(pid, 0)
        spilled.add("b", "second " * 10)
        assert spilled["b"] == "second " * 10 and spilled["a"] == "first " * 10
