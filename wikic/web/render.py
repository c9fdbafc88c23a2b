"""A page body to safe HTML: markdown-it-py with raw HTML off, [[wikilinks]] as links
(a missing target shown as missing), citations as links to the cited source lines, and
only http(s), mailto and the viewer's own links kept as hrefs."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from wikic.wiki.blocks import PLAIN_START  # a line that can only be paragraph text
from wikic.wiki.page import COMMENT, WIKILINK

# A citation as assemble writes it, relative to wiki/: ../sources/x.md#L3-L4, or for a PDF
# ../sources/x.pdf#page=2&L3-L4 (the viewer shows the extracted lines, so the page is not needed)
CITE_HREF = re.compile(r"\.\./(sources/[^#?]+)#(?:page=\d+&)?L(\d+)(?:-L(\d+))?")
SAFE_SCHEME = re.compile(r"(https?:|mailto:)", re.I)
PAGE_HREF = re.compile(r"(?:\./)?([A-Za-z0-9][A-Za-z0-9._-]*)\.md(#[A-Za-z0-9_-]*)?")


@dataclass
class Links:
    """How a rendered page reaches the others: `page(target)` resolves a link target to
    (href, title) or None; `source(path, start, end)` gives a citation's href or None."""

    page: Callable[[str], tuple[str, str] | None]
    source: Callable[[str, int, int], str | None]


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    if not state.src.startswith("[[", state.pos):
        return False
    m = WIKILINK.match(state.src, state.pos)
    if m is None:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.meta = {"target": m.group(1).strip(), "label": (m.group(3) or "").strip()}
    state.pos = m.end()
    return True


def _render_wikilink(_renderer: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    meta = tokens[idx].meta
    return _wikilink_html(env["links"], meta["target"], meta["label"])


def _wikilink_html(links: Links, target: str, label: str) -> str:
    label = label or target
    found = links.page(target) if target else None
    if found is None:
        return f'<span class="missing" title="no page named {escapeHtml(target)}">{escapeHtml(label)}</span>'
    href, title = found
    return (
        f'<a class="wikilink" href="{escapeHtml(href)}" title="{escapeHtml(title)}">{escapeHtml(label)}</a>'
    )


def _render_link_open(
    _renderer: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]
) -> str:
    token = tokens[idx]
    href = str(token.attrGet("href") or "")
    links: Links = env["links"]
    cite = CITE_HREF.fullmatch(href)
    page = PAGE_HREF.fullmatch(href)
    if cite:
        start = int(cite.group(2))
        end = int(cite.group(3) or start)
        to = links.source(unquote(cite.group(1)), start, end)
        return f'<a class="cite" href="{escapeHtml(to)}">' if to else '<a class="cite missing">'
    if page:
        found = links.page(page.group(1))
        return f'<a class="wikilink" href="{escapeHtml(found[0])}">' if found else '<a class="missing">'
    if SAFE_SCHEME.match(href):
        return f'<a class="external" href="{escapeHtml(href)}" rel="noopener noreferrer">'
    return '<a class="missing">'  # any other scheme or path: shown, never followed


def _render_image(_renderer: Any, tokens: list[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    """An image is shown as its alt text: the viewer is offline and serves only pages and sources."""
    token = tokens[idx]
    alt = "".join(child.content for child in token.children or [])
    return f'<span class="image">[{escapeHtml(alt or "image")}]</span>'


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.add_render_rule("wikilink", _render_wikilink)
    md.add_render_rule("link_open", _render_link_open)
    md.add_render_rule("image", _render_image)
    return md


_MD = _markdown()


def render_body(body: str, links: Links) -> str:
    """The page's Markdown (no front matter) as HTML; comments (the seal, lint switches) dropped."""
    text = COMMENT.sub("", body)
    env = {"links": links}
    quick = _render_simple(text, env)
    if quick is not None:
        return quick
    html: str = _MD.render(text, env)
    return html


HEADING = re.compile(r"(#{1,6}) +(\S.*)")


def _render_simple(text: str, env: dict[str, Any]) -> str | None:
    """The plain subset wikic writes (ATX headings, one-line `- ` items in tight lists, plain
    paragraphs) rendered a line at a time, inline parsing only: markdown-it's list rule is
    slow on a 10,000-line index.md. Byte for byte what markdown-it gives (tests hold them to
    it); None for anything else, which markdown-it renders."""
    if "\t" in text or "\r" in text or "\0" in text:
        return None
    out: list[str] = []
    para: list[str] = []
    items: list[str] = []
    blank_after_item = False

    def inline(line: str, env: dict[str, Any]) -> str:
        return _fast_inline(line, env.get("links")) or _MD.renderInline(line, env)

    def flush() -> None:
        if para:
            out.append(f"<p>{inline(chr(10).join(para).strip(), env)}</p>\n")  # trimmed, as markdown-it
            para.clear()
        if items:
            out.append("<ul>\n" + "".join(f"<li>{inline(i.strip(), env)}</li>\n" for i in items) + "</ul>\n")
            items.clear()

    for line in text.split("\n"):
        if not line.strip(" "):
            if para:  # (a paragraph and a list are never open together)
                flush()
            blank_after_item = bool(items)  # an item next would make the list loose
            continue
        if line.startswith("- "):
            if para or blank_after_item or not PLAIN_START.match(line[2:]):
                return None  # a loose list, an item after a paragraph line, or more than plain text
            items.append(line[2:])
            continue
        if items:
            if not blank_after_item:
                return None  # a lazy continuation of the item
            flush()
        blank_after_item = False
        heading = HEADING.fullmatch(line)
        if heading and not heading.group(2).rstrip().endswith("#"):
            flush()
            level = len(heading.group(1))
            out.append(f"<h{level}>{inline(heading.group(2).strip(), env)}</h{level}>\n")
        elif PLAIN_START.match(line):
            para.append(line)
        else:
            return None
    flush()
    return "".join(out)


# The inline subset wikic writes, rendered without markdown-it's inline parser (two thirds of
# an export's time): [[wikilinks]], citations, **bold** with a word at each end, and text in
# between that holds nothing inline Markdown acts on. Anything else goes to markdown-it.
INLINE = re.compile(
    WIKILINK.pattern
    + r"|\[([A-Za-z0-9.:-](?:[A-Za-z0-9.: -]*[A-Za-z0-9.:-])?)\]"
    + r"\((\.\./sources/[A-Za-z0-9._/-]+#L\d+(?:-L\d+)?)\)"
    + r"|\*\*([A-Za-z0-9](?:[^*_\[\]\\`<>&!\n]*[A-Za-z0-9])?)\*\*(?![*A-Za-z0-9])"
)
SPECIAL = re.compile(r"[\\`*_\[\]!<&\n]")


def _fast_inline(line: str, links: Links | None) -> str | None:
    if links is None or "\n" in line:
        return None
    out: list[str] = []
    at = 0
    for m in INLINE.finditer(line):
        gap = line[at : m.start()]
        if SPECIAL.search(gap) or (m.group(6) and line[m.start() - 1 : m.start()] in ("*", "_")):
            return None
        out.append(escapeHtml(gap))
        if m.group(0).startswith("[["):
            out.append(_wikilink_html(links, m.group(1).strip(), (m.group(3) or "").strip()))
        elif m.group(4) is not None:
            cite = CITE_HREF.fullmatch(m.group(5))
            assert cite is not None  # the pattern above is one
            start = int(cite.group(2))
            to = links.source(unquote(cite.group(1)), start, int(cite.group(3) or start))
            head = f'<a class="cite" href="{escapeHtml(to)}">' if to else '<a class="cite missing">'
            out.append(head + escapeHtml(m.group(4)) + "</a>")
        else:
            out.append("<strong>" + escapeHtml(m.group(6)) + "</strong>")
        at = m.end()
    if SPECIAL.search(line, at):
        return None
    out.append(escapeHtml(line[at:]))
    return "".join(out)


def strip_title(body: str) -> str:
    """The body without its first `# Title` line: the viewer shows the title itself."""
    lines = body.lstrip("\n").split("\n", 1)
    if lines and lines[0].startswith("# "):
        return lines[1] if len(lines) > 1 else ""
    return body
