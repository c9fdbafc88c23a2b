"""The rules across pages (links, orphans, missing and duplicate pages, the index, hand edits)
as the lint cache keeps them: each one's findings by what they come from (a page's broken
links, a topic key's missing page), the inbound link counts, and the wiki's names, so that an
edit of pages that keeps every name brings them up to date from those pages alone."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wikic.lint import citations, rules, topics
from wikic.lint.context import Finding
from wikic.lint.facts import finding_json, json_finding
from wikic.lint.names import Head, Names
from wikic.wiki.page import Page

if TYPE_CHECKING:
    from wikic.config import LintConfig

ACROSS = ("broken-link", "orphan-page", "missing-page", "duplicate-page", "index-drift", "hand-edit")
Where = dict[str, dict[str, tuple[int, dict[str, int]]]]  # topic key -> path -> (first line, terms)
Orphanable = Iterable[tuple[str, str, bool]]  # (slug, path, whether it can be an orphan)
Edit = tuple[Page | None, Page | None]  # a page before and after an edit (None: new, or gone)


def edited(old: Page | None, new: Page | None) -> Page:
    """The page of an edit: as it is, or as it was where it went."""
    page = new if new is not None else old
    assert page is not None, "an edit of no page"
    return page


@dataclass
class Across:
    """The findings across pages that do not come out of a pass over every page each time."""

    broken: dict[str, list[Finding]]  # page path -> its broken links
    missing: dict[str, Finding]  # topic key -> the missing page it names
    duplicate: list[Finding]
    index: list[Finding]  # index-drift
    inbound: dict[str, int]  # slug -> how many other pages link to it

    def to_json(self) -> dict[str, Any]:
        return {
            "broken": {rel: [finding_json(f) for f in fs] for rel, fs in self.broken.items()},
            "missing": {key: finding_json(f) for key, f in self.missing.items()},
            "duplicate": [finding_json(f) for f in self.duplicate],
            "index": [finding_json(f) for f in self.index],
            "inbound": self.inbound,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Across:
        return cls(
            {rel: [json_finding(f) for f in fs] for rel, fs in data["broken"].items()},
            {key: json_finding(f) for key, f in data["missing"].items()},
            [json_finding(f) for f in data["duplicate"]],
            [json_finding(f) for f in data["index"]],
            data["inbound"],
        )

    def findings(
        self,
        levels: Mapping[str, str],
        pages: Orphanable,
        files: Mapping[str, str],
        on_disk: dict[str, str],
        root: Path,
    ) -> list[Finding]:
        """Every finding across pages: the kept ones, orphans from the inbound counts, hand
        edits from what wikic wrote (`files`) and the pages' hashes (`on_disk`)."""
        out = [f for fs in self.broken.values() for f in fs]
        out += [*self.missing.values(), *self.duplicate, *self.index]
        if "orphan-page" in levels:
            out += rules.orphans(pages, self.inbound)
        if "hand-edit" in levels:
            out += citations.hand_edits(files, on_disk, root)
        return out


def compute(
    names: Names,
    heads: Sequence[Head],
    pages: Iterable[Page],
    settings: LintConfig,
    levels: Mapping[str, str],
) -> tuple[Across, dict[str, topics.Mentions], dict[str, int]]:
    """The rules across pages over every page, read once each as `pages` yields them (in the
    wiki's order, with `heads` theirs and `names` the wiki's names), index.md's apart
    (rules.index_findings); with each page's mentions (for missing-page) and the topic keys
    of the pages' names, each with how many pages have it."""
    seek, count = "missing-page" in levels, "orphan-page" in levels
    keyed = topics.key_counts(heads) if seek else {}
    have = keyed.keys()
    mentions: dict[str, topics.Mentions] = {}
    where: Where = defaultdict(dict)
    inbound = dict.fromkeys(names.pages, 0) if count else {}

    def visit() -> Iterator[Page]:
        """Each page as broken_links asks for it, its mentions and outlinks taken on the way."""
        for page in pages:
            if seek and (found := topics.page_mentions(page, names, have)):
                mentions[page.rel] = found
                for key, at in found.items():
                    where[key][page.rel] = at
            if count:
                for target in names.outlinks(page):
                    if target != page.slug:
                        inbound[target] += 1
            yield page

    broken: dict[str, list[Finding]] = {}
    if "broken-link" in levels:
        for f in rules.broken_links(names, visit()):
            broken.setdefault(f.path, []).append(f)
    else:
        for _ in visit():
            pass
    missing: dict[str, Finding] = {}
    for key, at_key in where.items():
        if finding := topics.missing_finding(key, at_key, settings.missing_page_threshold):
            missing[key] = finding
    found = Across(broken, missing, [], [], inbound)
    if "duplicate-page" in levels:
        found.duplicate = list(topics.duplicates(heads, settings.duplicate_threshold))
    return found, mentions, keyed


@dataclass
class Patch:
    """An edit of pages, to bring an Across up to date with: one that kept every page's names,
    or (`before`: the names and topic keys as they were) one that added pages (lint/came.py)."""

    names: Names
    have: set[str]
    levels: Mapping[str, str]
    threshold: int  # lint.missing_page_threshold
    mentioned: Callable[[Iterable[str]], Where]  # the stored mentions of these topic keys
    before: tuple[Names, set[str]] | None = None

    def apply(self, across: Across, edits: Sequence[Edit]) -> dict[str, topics.Mentions]:
        """`edits`: (before, after) of each page whose facts changed, or whose links the names
        added or gone can resolve otherwise (before None: a page new; after None: a page gone);
        returns the pages' new mentions (none, of a page gone)."""
        names, levels = self.names, self.levels
        old_names, old_have = self.before or (names, self.have)
        for old, new in edits:
            rel = edited(old, new).rel
            if "broken-link" in levels:
                across.broken.pop(rel, None)
                if new is not None and (broken := list(rules.broken_links(names, [new]))):
                    across.broken[rel] = broken
            if "orphan-page" in levels:
                for slug in old_names.outlinks(old) - {old.slug} if old is not None else ():
                    across.inbound[slug] -= 1
                for slug in names.outlinks(new) - {new.slug} if new is not None else ():
                    across.inbound[slug] += 1
        for old, new in edits:
            if new is None and old is not None:
                across.inbound.pop(old.slug, None)
        if "missing-page" not in levels:
            return {}
        now = {
            edited(old, new).rel: topics.page_mentions(new, names, self.have) if new is not None else {}
            for old, new in edits
        }
        grown = self.have - old_have  # the keys of pages new: no page mentions them as missing
        touched = grown | {
            key
            for old, new in edits
            for key in [
                *(topics.page_mentions(old, old_names, old_have) if old else ()),
                *now[edited(old, new).rel],
            ]
        }
        where = self.mentioned(sorted(touched))
        for key in touched:
            at = where.setdefault(key, {})
            for rel, said in now.items():
                at.pop(rel, None)
                if key in said:
                    at[rel] = said[key]
            across.missing.pop(key, None)
            if key not in grown and (finding := topics.missing_finding(key, at, self.threshold)):
                across.missing[key] = finding
        return now
