"""`wikic lint --fix`: the mechanical fixes (relink a near-miss link, drop a link
to nothing, rebuild index.md), applied atomically, never to a page edited by
hand unless forced, with the recorded hash of pages wikic owns kept current so
that the next build does not take a fix for a hand edit. Call under the project lock."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from wikic.build.assemble import foreign_entry, render_index
from wikic.config import Schema
from wikic.fsutil import atomic_write
from wikic.hashing import bytes_hash
from wikic.lint.context import Finding
from wikic.project import Project
from wikic.state import FileRecord, State
from wikic.wiki.read import INDEX, page_files

CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)")


@dataclass
class FixReport:
    changed: list[str] = field(default_factory=list)  # what was done, one line each
    skipped: list[str] = field(default_factory=list)  # what was not, and why


def _replace_outside_code(line: str, old: str, new: str) -> str:
    out, pos = [], 0
    for m in CODE_SPAN.finditer(line):
        out.append(line[pos : m.start()].replace(old, new))
        out.append(m.group(0))
        pos = m.end()
    out.append(line[pos:].replace(old, new))
    return "".join(out)


class _Writer:
    """Writes fixed files, refusing hand-edited ones unless forced, recording those wikic owns."""

    def __init__(self, project: Project, state: State | None, force: bool, report: FixReport) -> None:
        self.project, self.state, self.force, self.report = project, state, force, report
        self.records = state.files() if state else {}

    def hand_edited(self, rel: str, data: bytes | None) -> str | None:
        if data is None:
            return None  # a missing file is no one's edit
        rec = self.records.get(rel)
        if self.state is None:
            return "there is no build state to tell wikic's edits from yours"
        if rec is None:
            return "wikic did not write it"
        if bytes_hash(data) != rec.hash:
            return "it was edited by hand"
        return None

    def write(self, rel: str, before: bytes | None, after: bytes) -> bool:
        why = self.hand_edited(rel, before)
        if why and not self.force:
            self.report.skipped.append(f"{rel}: not fixed, {why} (use --force)")
            return False
        path = self.project.root / rel
        atomic_write(path, after)
        if why is None and self.state is not None:  # keep a hand edit a hand edit: record only our own
            st = path.stat()
            self.state.set_file(FileRecord(rel, bytes_hash(after), st.st_size, st.st_mtime_ns))
        return True


def _fix_links(writer: _Writer, rel: str, edits: list[Finding]) -> None:
    path = writer.project.root / rel
    before = path.read_bytes()
    lines = before.decode("utf-8").split("\n")
    done = []
    for f in sorted(edits, key=lambda f: f.line):
        assert f.edit is not None
        old, new = f.edit
        i = f.line - 1
        if 0 <= i < len(lines) and old in lines[i]:
            lines[i] = _replace_outside_code(lines[i], old, new)
            done.append(
                f"{rel}:{f.line}: {old} -> {new}"
                if new.startswith("[[")
                else f"{rel}:{f.line}: dropped {old}, kept its text {new!r}"
            )
    after = "\n".join(lines).encode("utf-8")
    if after != before and writer.write(rel, before, after):
        writer.report.changed.extend(done)


def index_text(project: Project, schema: Schema) -> str:
    """index.md as the build writes it, from the pages now in wiki/."""
    entries = []
    for path in page_files(project.wiki_dir):
        if path.name in (INDEX, "log.md"):
            continue
        try:
            entries.append(foreign_entry(path.stem, path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    types = schema.index_order()
    return render_index(schema.title, schema.scope, entries, types)


def _fix_index(writer: _Writer, schema: Schema) -> None:
    rel, path = f"wiki/{INDEX}", writer.project.wiki_dir / INDEX
    before = path.read_bytes() if path.exists() else None
    after = index_text(writer.project, schema).encode("utf-8")
    if after != before and writer.write(rel, before, after):
        writer.report.changed.append(f"{rel}: {'rebuilt' if before is not None else 'written'}")


def apply_fixes(project: Project, schema: Schema, findings: list[Finding], force: bool = False) -> FixReport:
    """Apply every mechanical fix the findings carry; report what changed and what was refused."""
    report = FixReport()
    state = State.open(project.state_path) if project.state_path.exists() else None
    try:
        writer = _Writer(project, state, force, report)
        by_page: dict[str, list[Finding]] = defaultdict(list)
        for f in findings:
            if f.edit is not None:
                by_page[f.path].append(f)
        for rel, edits in sorted(by_page.items()):
            _fix_links(writer, rel, edits)
        if any(f.rule == "index-drift" for f in findings):
            _fix_index(writer, schema)
    finally:
        if state is not None:
            state.close()
    return report
