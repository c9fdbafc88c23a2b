"""The merge of names and terms a build keeps (build/merge.py): patched by each edit's changed
sources, it finds what a merge of every source from nothing finds, edit after edit."""

from __future__ import annotations

import marshal
import random

import pytest

from wikic.build.candidates import source_names
from wikic.build.merge import Merge, Packed, candidates, merge_for
from wikic.build.mergekeys import Listed, changes, packed
from wikic.hashing import text_hash

NAMES = [
    "Alice Moreau",
    "Bazel",
    "PostgreSQL",
    "Evan Martin",
    "Martin",
    "New York City",
    "Kiwi Labs",
    "Ninja",
]
PHRASES = ["load tests", "early cutoff", "build graph", "content hashing", "studio album", "sleep paralysis"]
WORDS = [
    "the",
    "team",
    "ran",
    "slow",
    "fast",
    "album",
    "graph",
    "tests",
    "cluster",
    "night",
    "notes",
    "build",
]


def _line(rng: random.Random) -> str:
    """A sentence that names things, writes terms, marks some, opens with a name or not."""
    parts = [rng.choice(WORDS) for _ in range(rng.randint(2, 6))]
    for _ in range(rng.randint(0, 2)):
        parts.insert(rng.randint(0, len(parts)), rng.choice(NAMES))
    for _ in range(rng.randint(0, 2)):
        phrase = rng.choice(PHRASES)
        parts.insert(rng.randint(0, len(parts)), f"**{phrase}**" if rng.random() < 0.2 else phrase)
    text = " ".join(parts)
    return text[0].upper() + text[1:] + "." if rng.random() < 0.5 else text + "."


def _source(rng: random.Random) -> list[str]:
    lines = [rng.choice(["# ", ""]) + rng.choice([*NAMES, "Notes", "Early cutoff", "Retro"]), ""]
    for _ in range(rng.randint(1, 6)):
        lines.append(f"## {rng.choice(PHRASES).capitalize()}" if rng.random() < 0.15 else _line(rng))
    return lines


def _as_found(found: list) -> list:  # type: ignore[type-arg]
    return [(c.name, c.lines, c.kind) for c in found]


@pytest.mark.parametrize("seed", range(6))
def test_a_kept_merge_patched_by_each_edit_finds_what_a_fresh_merge_finds(seed: int) -> None:
    rng = random.Random(seed)
    sources = {f"s{i:02d}.md": _source(rng) for i in range(12)}
    kept: bytes | None = None
    since: bytes | None = None  # what changed since `kept`
    last: dict[str, tuple[str, str]] = {}  # what the last plan merged: path -> (key, packed)
    patched = bases = 0
    for _ in range(40):
        edit = rng.random()
        path = rng.choice(sorted(sources))
        if edit < 0.6:
            sources[path] = _source(rng)
        elif edit < 0.75:
            sources[f"s{rng.randint(0, 30):02d}.md"] = _source(rng)
        elif edit < 0.9 and len(sources) > 3:
            del sources[path]
        else:  # two sources changed at once
            sources[path] = _source(rng)
            sources[rng.choice(sorted(sources))] = _source(rng)
        lines = {p: sources[p] for p in sorted(sources)}
        packed = {p: source_names(text) for p, text in lines.items()}
        keys = {p: text_hash("\n".join(text)) for p, text in lines.items()}
        merge = merge_for(kept, keys, Packed(packed), last.get, since)
        patched += merge.patched
        assert _as_found(merge.candidates(lines, Packed(packed), 2)) == _as_found(candidates(lines))
        base, since = merge.kept()
        kept, bases = base or kept, bases + (since is None)
        assert kept is not None and _state(Merge.loads(kept, since)) == _state(merge)
        last = {p: (keys[p], packed[p]) for p in lines}
    assert patched >= 30  # the kept merge was patched, not merged again, on most edits
    assert bases > 1 and 40 - bases >= 3  # kept whole at times, else only what changed since


def _state(merge: Merge | None) -> list[object]:
    assert merge is not None
    marks = {key: marshal.loads(v) if isinstance(v, bytes) else v for key, v in merge.marks.items()}
    return [dict(merge.keys), merge.counts, marks, merge.where, merge.uses, merge.inside, merge.first]


@pytest.mark.parametrize("seed", range(40))
def test_kept_keys_as_lists_find_the_changes_a_dict_finds(seed: int) -> None:
    rng = random.Random(seed)
    base = {f"s{i:03d}.md": f"k{rng.randint(0, 3)}" for i in range(rng.randint(0, 90))}
    listed, old = Listed(*packed(base)), dict(base)
    for _ in range(rng.randint(0, 40)):  # changed since the base: as Merge.loads lays them over
        path = f"s{rng.randint(0, 120):03d}.md"
        if rng.random() < 0.3:
            assert listed.pop(path, None) == old.pop(path, None)
        else:
            listed[path] = old[path] = f"k{rng.randint(0, 3)}"
    assert dict(listed) == old
    ordered = {path: listed[path] for path in listed}  # the base's paths, then those added since
    assert [path for path in ordered if path in base] == [path for path in base if path in old]
    assert [path for path in ordered if path not in base] == [path for path in old if path not in base]
    new = dict(old) if rng.random() < 0.5 else dict(base)  # the base's paths, in its order, or not
    for path in rng.sample(sorted(new), min(len(new), rng.randint(0, 5))):
        new[path] = f"k{rng.randint(0, 4)}"
    if rng.random() < 0.2:
        new[f"s{rng.randint(0, 130):03d}.md"] = "k9"
    assert changes(listed, new) == changes(ordered, new)
    assert changes(old, new)[0] == [p for p, k in new.items() if old.get(p) != k]
    assert changes(old, new)[1] == [p for p in old if p not in new]


def test_a_kept_merge_that_is_not_what_the_last_plan_merged_is_merged_again() -> None:
    lines = {
        "a.md": ["# A", "", "Bazel and Ninja ran the load tests."],
        "b.md": ["B", "", "Bazel ran load tests."],
    }
    packed = {p: source_names(text) for p, text in lines.items()}
    keys = {p: text_hash("\n".join(text)) for p, text in lines.items()}
    kept = merge_for(None, keys, Packed(packed), lambda p: None).dumps()
    lines["a.md"] = ["# A", "", "Ninja ran the load tests with Bazel."]
    packed["a.md"] = source_names(lines["a.md"])
    new = {**keys, "a.md": text_hash("\n".join(lines["a.md"]))}
    other = merge_for(kept, new, Packed(packed), lambda p: ("not the merged key", packed[p]))
    assert not other.patched  # the older facts are not those it merged: from nothing
    assert _as_found(other.candidates(lines, Packed(packed), 2)) == _as_found(candidates(lines))
    assert Merge.loads(b"not a merge") is None and Merge.loads(b"") is None
