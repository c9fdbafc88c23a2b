"""`wikic lint`: which rules run and at which level, inline suppressions,
running the rules over the wiki, and printing findings as text or JSON.

Deterministic rules live in rules.py and citations.py, model-based ones
(only with --llm) in model.py, mechanical fixes in fix.py.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from wikic.backends import Backend
from wikic.errors import ConfigError, UsageError
from wikic.lint import citations, rules
from wikic.lint.context import Context, Finding
from wikic.project import Project
from wikic.settings import load_schema
from wikic.state import State
from wikic.wiki.read import PageStats, Wiki, gc_paused, read_wiki

if TYPE_CHECKING:
    from wikic.config import Schema
    from wikic.lint.entries import Linted
    from wikic.snapshot import Tree

RULES: dict[str, tuple[str, rules.RuleFn]] = {**rules.RULES, **citations.RULES}
LLM_RULES: dict[str, str] = {"contradiction": "warning", "unsupported-claim": "warning"}
RULE_IDS = [*RULES, *LLM_RULES]
BackendFactory = Callable[["Schema"], Backend]


@dataclass
class LintOptions:
    rules: list[str] = field(default_factory=list)  # --rule: only these (empty: all that are on)
    llm: bool = False  # also the model-based rules


@dataclass
class LintResult:
    findings: list[Finding]
    pages: int
    levels: dict[str, str]  # the rules that ran -> their level
    model_calls: int = 0
    notes: list[str] = field(default_factory=list)  # what could not be checked, and why
    checked: int | None = None  # pages looked at again, the rest's findings cached (None: all read)

    def counts(self) -> dict[str, int]:
        counted = Counter(f.level for f in self.findings)
        return {"error": counted["error"], "warning": counted["warning"]}

    @property
    def failed(self) -> bool:
        return any(f.level == "error" for f in self.findings)


def _unknown(ids: list[str]) -> list[str]:
    from rapidfuzz import process

    out = []
    for rule in ids:
        if rule not in RULE_IDS:
            near = process.extractOne(rule, RULE_IDS)
            out.append(f"{rule!r}" + (f" (did you mean {near[0]!r}?)" if near and near[1] >= 70 else ""))
    return out


def rule_levels(schema: Schema, opts: LintOptions) -> dict[str, str]:
    """The rules to run and their levels: schema.yaml lint.rules over the defaults, then --rule and --llm."""
    bad = _unknown(list(schema.lint.rules))
    if bad:
        raise ConfigError(
            "schema.yaml lint.rules names unknown rules:", [*bad, "known rules: " + ", ".join(RULE_IDS)]
        )
    bad = _unknown(opts.rules)
    if bad:
        raise UsageError(f"unknown rule {', '.join(bad)}; known rules: {', '.join(RULE_IDS)}")
    model_only = [r for r in opts.rules if r in LLM_RULES]
    if model_only and not opts.llm:
        raise UsageError(f"{', '.join(model_only)} uses the model: add --llm")
    defaults = {rule: level for rule, (level, _) in RULES.items()} | LLM_RULES
    levels = {rule: schema.lint.rules.get(rule, level) for rule, level in defaults.items()}
    if opts.rules:  # asking for a rule by name runs it even where schema.yaml turns it off
        return {r: levels[r] if levels[r] != "off" else defaults[r] for r in dict.fromkeys(opts.rules)}
    return {r: lvl for r, lvl in levels.items() if lvl != "off" and (opts.llm or r not in LLM_RULES)}


def _suppressed(finding: Finding, disabled: Callable[[str], set[str]]) -> bool:
    for path in (finding.path, *finding.also):
        off = disabled(path)
        if finding.rule in off or "all" in off:
            return True
    return False


def lint(
    project: Project,
    opts: LintOptions | None = None,
    schema: Schema | None = None,
    backend_factory: BackendFactory | None = None,
) -> LintResult:
    """Run the rules on the project's wiki; findings sorted by file and line."""
    opts = opts or LintOptions()
    schema = schema or load_schema(project.schema_path)
    levels = rule_levels(schema, opts)
    with gc_paused():  # the deterministic part makes many objects and no garbage cycles
        wiki = read_wiki(project.root, project.wiki_dir)
        ctx = Context.load(project, schema, wiki)
        found: list[Finding] = []
        for rule, (_, check) in RULES.items():
            if rule in levels:
                found.extend(check(ctx))
    calls, notes = 0, []
    wanted = [r for r in LLM_RULES if r in levels]
    if wanted:
        from wikic.lint.model import model_findings

        more, calls, unusable = model_findings(ctx, wanted, backend_factory)
        found.extend(more)
        if unusable:
            notes.append(
                f"{plural(unusable, 'model check')} skipped: the model's answer stayed unusable "
                "after repair (cached; a different model or prompt tries again)"
            )
    return _result(found, _switches(wiki), len(wiki.pages), levels, calls, notes)


def _switches(wiki: Wiki) -> Callable[[str], set[str]]:
    """A page's inline lint switches, by path (index.md's parsed only if a finding asks)."""
    pages = {p.rel: p for p in wiki.pages.values()}
    if wiki.index is not None:
        pages[wiki.index.rel] = wiki.index
    return lambda rel: pages[rel].disabled if rel in pages else set()


def _result(
    found: list[Finding],
    disabled: Callable[[str], set[str]],
    pages: int,
    levels: dict[str, str],
    calls: int,
    notes: list[str],
) -> LintResult:
    """Findings with their levels, less the suppressed ones, sorted by file and line."""
    kept = [replace(f, level=levels[f.rule]) for f in found if not _suppressed(f, disabled)]
    kept.sort(key=lambda f: (f.path, f.line, f.rule, f.message))
    return LintResult(kept, pages, levels, calls, notes)


def lint_project(project: Project, opts: LintOptions) -> LintResult:
    """`wikic lint`: the deterministic rules from the lint cache once the project is built
    (the same findings as `lint`, at the cost of what changed since the last lint), kept for
    the next unless a build holds the project; with --llm, or before any build, `lint`."""
    from wikic.errors import LockError
    from wikic.lock import ProjectLock

    schema = load_schema(project.schema_path)
    levels = rule_levels(schema, opts)
    every = rule_levels(schema, LintOptions())  # the levels the cache is kept for (the build's)
    if any(r not in every for r in levels) or not project.state_path.is_file():
        return lint(project, opts, schema)
    try:
        with ProjectLock(project.lock_path, wait=False), open_state(project) as state:
            from wikic.lint.unchanged import lint_kept

            return lint_kept(project, state, schema, levels)
    except LockError:
        pass  # a build is running: read what it stored so far, store nothing
    peeked = State.peek(project.state_path)
    if peeked is None:  # another wikic's state format: lint reads around it
        return lint(project, opts, schema)
    with peeked as state:
        return lint_cached(project, state, schema, store=False, only=levels)


def lint_cached(
    project: Project,
    state: State,
    schema: Schema | None = None,
    fresh: bool = False,
    store: bool = True,
    wiki_stats: PageStats | None = None,
    only: dict[str, str] | None = None,
    keep_counts: bool = False,
) -> LintResult:
    """The deterministic lint, rechecking only what changed since the last (cache.py):
    the same result as `lint(project)`. `store` (the caller holds the project lock): keep
    what was checked for the next; else only read the cache (`wikic serve`). `wiki_stats`:
    wiki/ by stat, when the caller has just taken it; `only`: these rules at these levels
    (of those schema.yaml turns on); `keep_counts` (`wikic lint`, `wikic site`): its counts
    kept too, as a build's summary keeps them (lint/totals.py), so that the next build patches
    them."""
    schema = schema or load_schema(project.schema_path)
    if keep_counts and store and not fresh:
        from wikic import snapshot

        # wiki/ walked before the lint reads it (not by the caller's stats, which may be older)
        taken = time.time_ns()
        done = counted_lint(project, state, schema, snapshot.wiki(project), taken)
    else:
        from wikic.lint.cache import cached_findings

        levels = rule_levels(schema, LintOptions())
        with gc_paused():
            done = cached_findings(project, schema, levels, state, fresh, store, wiki_stats)
    return cached_result(done, schema, only)


def counted_lint(project: Project, state: State, schema: Schema, walked: Tree, taken_ns: int) -> Linted:
    """The cached lint with its counts kept (`lint_cached`'s keep_counts), over wiki/ as
    `walked` from `taken_ns` found it: its stats are the lint's, and a page changed since is
    one the next build and lint find changed."""
    from wikic.lint import totals

    return totals.linted(project, state, schema, walked, PageStats.of_walk(walked, taken_ns))


def cached_result(done: Linted, schema: Schema, only: dict[str, str] | None) -> LintResult:
    """A cached lint's findings as `lint` gives them: levels, suppressions, `only` these rules."""
    levels = rule_levels(schema, LintOptions())
    found = done.findings if only is None else [f for f in done.findings if f.rule in only]
    result = _result(found, done.switches, done.pages, only or levels, 0, [])
    result.checked = done.checked
    return result


# --- output -------------------------------------------------------------------------
def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary_line(result: LintResult) -> str:
    counts = result.counts()
    if not result.findings:
        return f"no problems found in {plural(result.pages, 'page')}"
    files = len({f.path for f in result.findings})
    return (
        f"{plural(counts['error'], 'error')}, {plural(counts['warning'], 'warning')} "
        f"in {plural(files, 'file')} ({plural(result.pages, 'page')} checked)"
    )


def format_text(result: LintResult) -> str:
    """`path:line: level rule-id message`, grouped by file, then a summary line."""
    lines: list[str] = []
    current = None
    for f in result.findings:
        if current is not None and f.path != current:
            lines.append("")
        current = f.path
        lines.append(f"{f.path}:{f.line}: {f.level} {f.rule} {f.message}")
    if lines:
        lines.append("")
    lines.append(summary_line(result))
    return "\n".join(lines)


def format_json(result: LintResult) -> str:
    return json.dumps([f.to_json() for f in result.findings], indent=2, ensure_ascii=False)


# --- the one-line summary at the end of `wikic build` --------------------------------
def build_summary(project: Project, fresh: bool = False) -> dict[str, int]:
    """Counts by level of a deterministic lint, at the cost of what the build changed;
    `fresh` (build --force) checks every page again instead of trusting the stat checks."""
    with open_state(project) as state:
        return lint_cached(project, state, fresh=fresh).counts()


def open_state(project: Project) -> State:
    """state.db without a quick_check (0.1-0.3 s at 10,000 sources) where it has the lint
    cache's tables: the build checked it a moment ago, and lint rewrites only what it keeps."""
    peeked = State.peek(project.state_path)
    if peeked is not None and peeked.has_lint_tables():
        return peeked
    if peeked is not None:
        peeked.close()
    return State.open(project.state_path)


def counts_line(counts: dict[str, int]) -> str:
    if not counts["error"] and not counts["warning"]:
        return "lint: no problems"
    return (
        f"lint: {plural(counts['error'], 'error')}, {plural(counts['warning'], 'warning')} "
        "(`wikic lint` for details)"
    )
