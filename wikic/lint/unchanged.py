"""`wikic lint` with nothing changed since the last: the findings it kept then, as the no-op
build answers with nothing to do. They are kept with the build's clean mark (Meta.CLEAN:
wikic's version, schema.yaml, the templates and sources/ by stat, wiki/ by stat, as a clean
build left them), and given back while the project still walks to that mark: the pages, the
sources, the rules and the build's records are then those the findings were made from. Every
build that changes anything drops them first (pipeline.py), a forgotten source's with the
rest. They are kept only where no entry walked changed within RACY_NS of the walk: a write in
the same clock tick, of the same size, would leave the stat as it was."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from wikic import snapshot
from wikic.backends import model_id
from wikic.lint.entries import RACY_NS, VERSION, Linted
from wikic.lint.facts import finding_json, json_finding
from wikic.lint.runner import LintResult, cached_result, counted_lint
from wikic.project import Project
from wikic.state import Meta, State

if TYPE_CHECKING:
    from wikic.config import Schema


def lint_kept(project: Project, state: State, schema: Schema, only: dict[str, str]) -> LintResult:
    """`wikic lint`'s deterministic rules (`only`: these, at these levels), from the findings
    kept at this clean mark, else from the lint cache (and kept, where the mark is clean)."""
    taken = time.time_ns()
    inputs = snapshot.inputs(project)  # walked before anything is read
    wiki = snapshot.wiki(project)
    built = snapshot.build_inputs(project, model_id(schema.model, project.root), inputs)
    mark = snapshot.clean_mark(project, built, wiki)
    clean = state.get_meta(Meta.CLEAN) == mark
    done = _loaded(state.get_meta(Meta.LINT_KEPT), mark) if clean else None
    if done is None:
        done = counted_lint(project, state, schema, wiki, taken)
        if clean and _settled(inputs, taken) and _settled(wiki, taken):
            state.set_meta(Meta.LINT_KEPT, _dumped(mark, done))
    return cached_result(done, schema, only)


def _settled(walked: snapshot.Tree, taken_ns: int) -> bool:
    """Every file walked last changed RACY_NS or more before the walk; False also where an
    entry is other than a folder or a file (a link, a pipe, unreadable or missing)."""
    for line in walked.lines:
        if "\t" not in line or line.endswith("\tmissing"):
            continue  # wikic's version, schema.yaml's digest, a folder, no prompts/ folder
        try:
            mtime = int(line.rsplit("\t", 2)[-1])
        except ValueError:
            return False
        if mtime >= taken_ns - RACY_NS:
            return False
    return True


def _dumped(mark: str, done: Linted) -> str:
    return json.dumps(
        {
            "v": VERSION,
            "mark": mark,
            "findings": [finding_json(f) for f in done.findings],
            "disabled": {rel: sorted(rules) for rel, rules in done.disabled.items()},
            "pages": done.pages,
        },
        ensure_ascii=False,
    )


def _loaded(raw: str | None, mark: str) -> Linted | None:
    """The findings kept at this mark (none read again), or None."""
    try:
        data: dict[str, Any] = json.loads(raw or "{}")
        if data.get("v") != VERSION or data.get("mark") != mark:
            return None
        findings = [json_finding(f) for f in data["findings"]]
        disabled = {rel: set(rules) for rel, rules in data["disabled"].items()}
        return Linted(findings, disabled, int(data["pages"]), 0)
    except (ValueError, KeyError, TypeError, AttributeError):  # damaged: lint as if none were kept
        return None
