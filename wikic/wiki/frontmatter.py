"""Front matter, the YAML block at the top of a page: read by one set of rules
(for the build, lint and ask alike) and written back.

Front matter as wikic writes it (plain keys, plain scalars that start with a
letter or single-quoted ones on one line, lists of such) reads the same without
a YAML parser, which makes lint of a large wiki several times faster; anything
else goes to PyYAML.
tests/test_lint_reader.py holds the shortcut to PyYAML's answers.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

SIMPLE_KEY = re.compile(r"([A-Za-z_][\w-]*):(?: (.*))?")
SIMPLE_VALUE = re.compile(r"[A-Za-z][\w .,/()'+&-]*")
NOT_STRINGS = frozenset(["yes", "no", "true", "false", "on", "off", "null"])
NOT_A_MAPPING = "the front matter is not a mapping of keys (title:, type:, ...)"
NOT_CLOSED = "the front matter is not closed by a line of ---"


class FrontMatter(NamedTuple):
    """A page's text split at its front matter; `error` (with its file line) when unusable."""

    meta: dict[str, Any]
    error: str | None
    present: bool  # the text starts with a front matter block, usable or not
    body: str
    body_line: int  # line number in the file where the body starts


def _plain(value: str) -> bool:
    return (
        bool(SIMPLE_VALUE.fullmatch(value))
        and value.casefold() not in NOT_STRINGS
        and ": " not in value
        and " #" not in value
        and value == value.rstrip()
    )


def _scalar(value: str) -> str | None:
    """The string a plain or single-quoted scalar on one line stands for (a title with a colon
    is written quoted: 'Note 0: Gossip Routing'); None when PyYAML must read it."""
    if _plain(value):
        return value
    if len(value) < 2 or value[0] != "'" or value[-1] != "'":
        return None
    inner = value[1:-1]
    # only doubled quotes inside ('' is '), and only characters YAML takes as they are
    if "'" in inner.replace("''", "") or not inner.isprintable():
        return None
    return inner.replace("''", "'")


def simple_yaml(text: str) -> dict[str, Any] | None:
    """The mapping, when the text is in the simple subset; None means: ask PyYAML."""
    meta: dict[str, Any] = {}
    items: list[str] | None = None
    for line in text.split("\n"):
        if line.startswith("- ") and items is not None:
            item = _scalar(line[2:])
            if item is None:
                return None
            items.append(item)
            continue
        m = SIMPLE_KEY.fullmatch(line)
        if m is None or m.group(1) in meta:
            return None
        value = m.group(2)
        if value is None:
            items = meta[m.group(1)] = []
        elif (scalar := _scalar(value)) is not None:
            meta[m.group(1)], items = scalar, None
        else:
            return None
    return {k: (v if v != [] else None) for k, v in meta.items()}


def split_front_matter(text: str) -> FrontMatter:
    """The one front-matter parser. Line ends are normalised to \\n first; the block is
    closed by the first line of `---` (a `---` further down is the body's); empty front
    matter is {}; invalid YAML or a non-mapping is an error, and the body still follows it."""
    text = text.replace("\r\n", "\n") if "\r" in text else text
    if not text.startswith("---\n"):
        return FrontMatter({}, None, False, text, 1)
    if text.startswith("---\n---\n"):
        return FrontMatter({}, None, True, text[8:], 3)
    end = text.find("\n---\n", 3)
    if end == -1:
        if not text.endswith("\n---"):
            return FrontMatter({}, NOT_CLOSED, True, text, 1)
        end = len(text) - 4
    body_start = min(end + 5, len(text))
    body_line = text.count("\n", 0, body_start) + 1 if body_start < len(text) else text.count("\n") + 1
    body = text[body_start:]
    meta = simple_yaml(text[4:end])
    if meta is None:
        return _parsed(text[4:end], body, body_line)
    return FrontMatter(meta, None, True, body, body_line)


def _yaml() -> Any:
    import yaml  # here: 15 ms, which front matter in the simple subset never needs

    return yaml


def __getattr__(name: str) -> Any:
    """LOADER: the loader PyYAML reads front matter with (libyaml's, where it was built with it)."""
    if name == "LOADER":
        yaml = _yaml()
        return getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _parsed(block: str, body: str, body_line: int) -> FrontMatter:
    """Front matter outside the simple subset, as PyYAML reads it."""
    yaml = _yaml()
    try:
        meta = yaml.load(block, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 2}: " if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        return FrontMatter({}, f"{where}invalid YAML in the front matter: {problem}", True, body, body_line)
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        return FrontMatter({}, NOT_A_MAPPING, True, body, body_line)
    return FrontMatter(meta, None, True, body, body_line)


def _writes_plain(value: Any) -> bool:
    """Text that libyaml's emitter writes byte for byte as PyYAML's own: printable and in the
    Basic Multilingual Plane (they escape other characters differently); or lists of it."""
    if isinstance(value, str):
        return value.isprintable() and (not value or max(value) < "\U00010000")
    return isinstance(value, list) and all(_writes_plain(v) for v in value)


WIDE = 900  # a line longer than this may be folded by the emitter (width=1000): left to it


def _emitted(value: str, room: int) -> str | None:
    """How the emitter writes a one-line string in block context, where this is certain: plain
    when it reads back as that string (the simple subset above), single-quoted when ": " rules
    plain out (and only characters it writes as they are: printable, in the BMP); else None."""
    if not value or len(value) > room or not value.isprintable() or max(value) >= "\U00010000":
        return None
    if _plain(value):
        return value
    if ": " in value and value == value.strip():
        return "'" + value.replace("'", "''") + "'"
    return None


# Items _emitted writes as they are, checked in one match over the list's lines: paths like
# sources/a.md (ASCII letters, digits and _.-/, a letter first and a slash in each, so never a
# YAML boolean or null): a topic page lists thousands
PLAIN_PATHS = re.compile(r"(?:[A-Za-z][\w.-]*/[\w./-]*\n)+", re.ASCII)


def _emitted_items(items: list[str]) -> str | None:
    """The list's lines ("- item") as _emitted writes its items; None where one is not certain."""
    lines = "\n".join(items) + "\n"
    if lines.count("\n") == len(items) and PLAIN_PATHS.fullmatch(lines) and max(map(len, items)) <= WIDE:
        return "- " + "\n- ".join(items) + "\n"  # no item holds a newline: one line each
    out = []
    for item in items:
        shown = _emitted(item, WIDE)
        if shown is None:
            return None
        out.append(f"- {shown}\n")
    return "".join(out)


def _quick_front_matter(meta: dict[str, Any]) -> str | None:
    """The front matter as yaml.dump writes it, for string values and lists of strings in the
    subset _emitted knows; None for anything else (PyYAML writes it). Titles, types and sources
    are in it: 10,000 pages' front matter without the (Python) representer."""
    out = ["---\n"]
    for key, value in meta.items():
        if not isinstance(key, str) or not SIMPLE_KEY.fullmatch(f"{key}:") or not _plain(key):
            return None
        if isinstance(value, str):
            shown = _emitted(value, WIDE - len(key))
            if shown is None:
                return None
            out.append(f"{key}: {shown}\n")
        elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            items = _emitted_items(value)
            if items is None:
                return None
            out.append(f"{key}:\n{items}")
        else:
            return None
    return "".join(out) + "---\n" if meta else None


def render_front_matter(meta: dict[str, Any]) -> str:
    quick = _quick_front_matter(meta)
    if quick is not None:
        return quick
    yaml = _yaml()
    cdumper = getattr(yaml, "CSafeDumper", None)  # libyaml's emitter, when PyYAML was built with it
    fast = cdumper is not None and all(_writes_plain(k) and _writes_plain(v) for k, v in meta.items())
    dumper = cdumper if fast else yaml.SafeDumper  # the same bytes; C is ~20x faster
    dumped = yaml.dump(meta, Dumper=dumper, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{dumped}---\n"
