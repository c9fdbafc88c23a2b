"""What a build did, as the JSON report of ../shared/DESIGN.md (its progress lines: progress.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wikic.build.progress import Progress  # its home; imported from here by most callers

if TYPE_CHECKING:  # not at run time: a no-op build never imports the actions' machinery
    from wikic import snapshot
    from wikic.build.actions import Action
    from wikic.config import Price

__all__ = ["Progress", "Report", "price_report"]


@dataclass
class Report:
    sources: int = 0
    pages: int = 0
    ran: int = 0
    cached: int = 0
    up_to_date: int = 0
    failed: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    batch_prompt_tokens: int = 0  # of the tokens above, those answered through a Batch API
    batch_completion_tokens: int = 0
    batches: list[dict[str, Any]] = field(default_factory=list)  # submitted, waiting, collected
    cost: float | None = None  # dollars spent, from model.price (None: no price in schema.yaml)
    waiting: int = 0  # actions waiting on a submitted batch: the build stopped before the next stage
    estimate: dict[str, dict[str, Any]] = field(default_factory=dict)  # --dry-run: by stage
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    explain: list[dict[str, str]] = field(default_factory=list)
    would_run: list[dict[str, Any]] = field(default_factory=list)
    page_text: dict[str, Any] = field(default_factory=dict)  # notes kept/total, pages by mode (compose.py)
    seconds: float = 0.0
    dry_run: bool = False
    nothing_to_do: bool = False  # the stat check found every input and output as the last build left them
    lint: dict[str, int] | None = None  # the lint summary after the build: counts by level
    lint_line: str = ""  # ... as one line to print
    wiki: snapshot.Tree | None = None  # wiki/ as a clean build left it (walked once, for both marks)
    found: snapshot.Tree | None = None  # wiki/ as the build found it (the lint summary compares it)
    reread: list[str] = field(default_factory=list)  # sources whose record this build changed or dropped
    # index.md rewritten only where descriptions changed, none old or new with a character that
    # could make, hide or end a link (build/indexpatch.py): lint's index findings are as they were
    index_same_links: bool = False
    # ...and with the lines of the pages new put in (lint/came.py checks those lines alone)
    index_listed: bool = False
    # the pages in wiki/ changed by hand since the last build left wiki/ with the digest
    # `hand_left` (build/handmade.py): rel -> "new", "changed" or "gone"
    hand: dict[str, str] | None = None
    hand_left: str = ""
    hand_files: bool = False  # ...and the files not pages (attachments): their names read again

    @property
    def ok(self) -> bool:
        return not self.errors

    def error(self, where: str, message: str) -> None:
        self.errors.append({"where": where, "message": message})

    def count(self, action: Action) -> None:
        """Account for one settled action: up to date, cached, ran (with its usage) or failed."""
        if action.status == "up_to_date":
            self.up_to_date += 1
        elif action.status == "cached":
            self.cached += 1
        elif action.status == "ran":
            self.ran += 1
            self.calls += action.usage.get("calls", 1)  # repair tries included
            self.prompt_tokens += action.usage.get("prompt_tokens", 0)
            self.completion_tokens += action.usage.get("completion_tokens", 0)
            self.cached_tokens += action.usage.get("cached_tokens", 0)
            self.batch_prompt_tokens += action.usage.get("batch_prompt_tokens", 0)
            self.batch_completion_tokens += action.usage.get("batch_completion_tokens", 0)
            from wikic.build.actions import is_fallback  # loaded already: it ran the action

            if is_fallback(action.output):
                self.warnings.append(f"{action.label}: {action.output['fallback']}")
        else:
            self.failed += 1
            self.error(action.label, action.error)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "sources": self.sources,
            "pages": self.pages,
            "actions": {
                "ran": self.ran,
                "cached": self.cached,
                "up_to_date": self.up_to_date,
                "failed": self.failed,
            },
            "llm": {
                "calls": self.calls,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "cached_tokens": self.cached_tokens,
            },
            "written": self.written,
            "removed": self.removed,
            "conflicts": self.conflicts,
            "errors": self.errors,
            "warnings": self.warnings,
            "seconds": round(self.seconds, 3),
            "nothing_to_do": self.nothing_to_do,
        }
        if self.batch_prompt_tokens or self.batch_completion_tokens:  # of "llm", those through a batch
            data["batch_tokens"] = {
                "prompt_tokens": self.batch_prompt_tokens,
                "completion_tokens": self.batch_completion_tokens,
            }
        if self.cost is not None:
            data["cost"] = round(self.cost, 6)
        if self.batches or self.waiting:
            data["batches"] = self.batches
            data["waiting"] = self.waiting
        if self.lint is not None:
            data["lint"] = self.lint
        data.update(self.page_text)
        if self.explain:
            data["explain"] = self.explain
        if self.dry_run:
            data["dry_run"] = True
            data["would_run"] = self.would_run
            data["estimate"] = self.estimate
        return data

    def summary(self) -> str:
        if self.dry_run:
            tokens = sum(int(w.get("estimated_tokens", 0)) for w in self.would_run)
            lines = [f"dry run: {len(self.would_run)} model call(s) would run, about {tokens:,} tokens"]
            for stage, est in self.estimate.items():
                lines.append(
                    f"  {stage}: {est['calls']} call(s), ~{est['prompt_tokens']:,} prompt tokens, "
                    f"at most {est['completion_tokens']:,} completion tokens" + _cost_words(est)
                )
            return "\n".join(lines)
        if self.waiting:
            shown = "; ".join(_batch_words(b) for b in self.batches)
            return (
                f"waiting on the Batch API ({shown}): {self.waiting} action(s) not answered yet; "
                "`wikic build` collects the answers when they are ready (`--wait` waits for them)"
            )
        if not (
            self.ran
            or self.cached
            or self.failed
            or self.written
            or self.removed
            or self.conflicts
            or self.errors
        ):
            return f"wikic: no work to do ({self.pages} pages up to date, {self.seconds:.2f}s)"
        parts = [f"{self.ran} ran", f"{self.cached} cached", f"{self.up_to_date} up to date"]
        if self.failed:
            parts.append(f"{self.failed} failed")
        text = (
            f"built {self.pages} pages from {self.sources} sources: "
            + ", ".join(parts)
            + f"; {len(self.written)} written, {len(self.removed)} removed"
        )
        if self.conflicts:
            text += f", {len(self.conflicts)} conflict(s) kept"
        spent = f", ${self.cost:.4f}" if self.cost is not None else ""
        return text + f" ({self.calls} model calls{spent}, {self.seconds:.1f}s)"


def _cost_words(est: dict[str, Any]) -> str:
    if est.get("cost") is None:
        return " (no model.price in schema.yaml: no cost)"
    batched = f", ~${est['batch_cost']:.4f} batched" if est.get("batch_cost") is not None else ""
    return f", ~${est['cost']:.4f} live{batched}"


def _batch_words(b: dict[str, Any]) -> str:
    done = f", {b['done']}/{b['total']} done" if b.get("total") else ""
    return f"{b['stage']} batch {b['batch']} {b['status']}{done}"


def price_report(report: Report, price: Price | None) -> None:
    """Dollars from model.price: spent (the report's tokens), or for --dry-run estimated per
    stage, live and batched. Without a price (or a batch price) there is no figure: never a guess."""
    if report.dry_run:
        for item in report.would_run:
            est = report.estimate.setdefault(
                item["stage"], {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
            )
            est["calls"] += 1
            est["prompt_tokens"] += item["prompt_tokens"]
            est["completion_tokens"] += item["completion_tokens"]
        for est in report.estimate.values():
            est["cost"] = _dollars(price, est["prompt_tokens"], est["completion_tokens"], 0, 0)
            est["batch_cost"] = _dollars(price, 0, 0, est["prompt_tokens"], est["completion_tokens"])
        return
    live_prompt = report.prompt_tokens - report.batch_prompt_tokens
    live_completion = report.completion_tokens - report.batch_completion_tokens
    report.cost = _dollars(
        price, live_prompt, live_completion, report.batch_prompt_tokens, report.batch_completion_tokens
    )


def _dollars(
    price: Price | None, prompt: int, completion: int, b_prompt: int, b_completion: int
) -> float | None:
    if price is None:
        return None
    total = prompt * price.input + completion * price.output
    if b_prompt or b_completion:
        if price.batch_input is None or price.batch_output is None:
            return None
        total += b_prompt * price.batch_input + b_completion * price.batch_output
    return total / 1_000_000
