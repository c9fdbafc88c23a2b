"""Rendering a page to HTML: wikilinks, citations, escaping (fast, no server)."""

from __future__ import annotations

from pathlib import Path

from wikic.web.render import _MD, Links, render_body, strip_title
from wikic.wiki.page import COMMENT, split_page

ROOT = Path(__file__).resolve().parents[1]


def links() -> Links:
    pages = {"ninja": ("p/ninja.html", "Ninja"), "make": ("p/make.html", "Make")}
    return Links(
        lambda target: pages.get(target.casefold()),
        lambda path, start, end: (
            f"s/{path.removeprefix('sources/')}.html#L{start}-L{end}" if path == "sources/ninja.md" else None
        ),
    )


def test_wikilinks_resolve_or_show_as_missing() -> None:
    html = render_body("See [[Ninja]], [[make|the make tool]] and [[Nowhere]].", links())
    assert '<a class="wikilink" href="p/ninja.html" title="Ninja">Ninja</a>' in html
    assert '<a class="wikilink" href="p/make.html" title="Make">the make tool</a>' in html
    assert '<span class="missing" title="no page named Nowhere">Nowhere</span>' in html


def test_citations_link_to_the_cited_lines() -> None:
    html = render_body("Ninja is small. [ninja.md:3-4](../sources/ninja.md#L3-L4)", links())
    assert '<a class="cite" href="s/ninja.md.html#L3-L4">ninja.md:3-4</a>' in html


def test_a_citation_of_an_unknown_source_is_not_a_link() -> None:
    html = render_body("Gone. [gone.md:3](../sources/gone.md#L3)", links())
    assert '<a class="cite missing">gone.md:3</a>' in html


def test_raw_html_is_escaped_never_passed_through() -> None:
    html = render_body('<script>alert(1)</script>\n\n<div onclick="x()">hi</div> <b>b</b>', links())
    assert "<script" not in html and "<div" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_dangerous_link_schemes_are_never_hrefs() -> None:
    text = "[a](javascript:alert(1)) [b](JaVaScRiPt:alert(1)) [c](data:text/html,x) [d](vbscript:x) [e](file:///etc/passwd)"
    html = render_body(text, links())
    assert "href" not in html


def test_safe_links_are_kept() -> None:
    html = render_body("[site](https://example.org/a?b=1) [mail](mailto:a@b.c) [page](make.md)", links())
    assert 'href="https://example.org/a?b=1" rel="noopener noreferrer"' in html
    assert 'href="mailto:a@b.c"' in html
    assert '<a class="wikilink" href="p/make.html">page</a>' in html


def test_wikilink_labels_and_targets_are_escaped() -> None:
    html = render_body('[[<img src=x onerror=alert(1)>]] [[ninja|<b>"x"</b>]]', links())
    assert "<img" not in html and "<b>" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "&lt;b&gt;&quot;x&quot;&lt;/b&gt;" in html


def test_images_show_their_alt_text_and_load_nothing() -> None:
    html = render_body("![a <diagram>](https://example.org/x.png)", links())
    assert "<img" not in html and '<span class="image">[a &lt;diagram&gt;]</span>' in html


def test_comments_and_code_are_not_links() -> None:
    html = render_body("`[[Ninja]]`\n\n<!-- wikic:0123456789abcdef0123 -->\n", links())
    assert "wikilink" not in html and "wikic:" not in html
    assert "<code>[[Ninja]]</code>" in html


LINK_BODIES = [
    "See [[Ninja]] and [[make|Make]].\n",
    "```\n[[Ninja]]\n```\n\nBut [[Make]].\n",
    "Inline `[[Ninja]]` is code; [[Make]] is not.\n",
    "Para.\n\n    [[Ninja]] indented: code\n\n- item [[Make]]\n    continued [[Gn]]\n",
    "~~~\n[[Ninja]]\n~~~\n",
    "<div>\n[[Ninja]]\n</div>\n\nText <!-- [[Make]] --> and [[Gn]].\n\n<!-- [[Other]] -->\n",
    "Tab\tand [[Ninja]].\n\n<!-- wikic:0123456789abcdef0123 -->\n",
]


def test_link_targets_are_lints_none_inside_code_or_html() -> None:
    """The viewer's link graph (backlinks, the graph, the site's facts) is lint's."""
    for body in LINK_BODIES:
        page = split_page("---\ntitle: T\n---\n\n" + body, "wiki/t.md")
        assert page.link_targets() == sorted({link.target for link in page.links}), body
    fenced = split_page(LINK_BODIES[1], "wiki/t.md")
    assert fenced.link_targets() == ["Make"]


def test_strip_title_drops_the_first_heading_only() -> None:
    assert strip_title("# Title\n\nText\n\n# Other") == "\nText\n\n# Other"
    assert strip_title("Text only") == "Text only"


SAMPLES = [
    "# T\n\nA line [[Ninja]].\nIts next line.\n\n## Sources\n\n"
    "- [[make|Make]]: [ninja.md:3](../sources/ninja.md#L3)\n- two\n",
    "- a\n\n- b\n",  # a loose list
    "- a\nlazy\n",  # a lazy continuation
    "## Closed ##\n",
    "Para\n- not an item after a paragraph line\n",
    "- - -\n",
    "Title\n===\n",
    "1. one\n2. two\n",
    "    code\n",
    "> quote\n",
    "- item  \n",
    "- item \n- two   \n\nText \nmore  \nlast  \n",
    "## Heading  \n",
    "plain  \nhard break\n",
    "* star\n",
    "#nospace\n",
    "- [[ninja]] — desc\n- **bold** and `code`\n\nafter\n",
    # the inline subset rendered without markdown-it, and its edges
    "A **b** c **d**. (**e**) f**g** **h**i **j*** **k** **l**_m_ [[a|b]] [[x#y|z]] [[]]\n",
    "See [tools.md:5](../sources/tools.md#L5) and [x](../sources/a-b/c.md#L1-L3).\n",
    "[ a ](../sources/a.md#L1) [a_b](../sources/a.md#L1) ![a](../sources/a.md#L1) [a](../sources/a.md)\n",
    "x & y < z > \"q\" 'r' \\*s\\* `t` <http://u.v> ~~w~~ **a**b**c** ***x*** **a *b* c**\n",
    "**[[faiss|FAISS]]** and **a [[b]] c** and [[<b>]] and **&amp;**\n",
    "- **Ninja** — a [[ninja]] item [n.md:1](../sources/n.md#L1)\n- plain: text, here; (and) ok?\n",
]


def test_the_fast_path_renders_what_markdown_it_renders() -> None:
    """markdown-it's list rule is slow on a big index.md, so plain bodies take a faster path."""
    bodies = [split_page(p.read_text()).body for p in sorted((ROOT / "wiki").glob("*.md"))]
    for text in [*SAMPLES, *bodies]:
        clean = COMMENT.sub("", text)
        assert render_body(text, links()) == _MD.render(clean, {"links": links()}), text
