"""The dependency graph as data, as `ninja -t graph` gives it: sources, the build's actions
(from state.db, when there is one), pages, and the edges between them (a source is the input
of its digest; a digest and a page's write produce pages; pages link to pages). Printed as
JSON (`nodes` and `edges`), Graphviz dot, or GraphML for Gephi."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from wikic.state import State
from wikic.web.model import Model

FORMATS = ("json", "dot", "graphml")


@dataclass
class Graph:
    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"nodes": self.nodes, "edges": self.edges}


def dependency_graph(model: Model) -> Graph:
    wiki, graph = model.wiki, Graph()
    sources = sorted(set(model.sources) | {s for p in wiki.pages.values() for s in p.sources})
    for path in sources:
        graph.nodes.append({"id": path, "kind": "source", "label": path, "exists": path in model.sources})
    for page in sorted(wiki.pages.values(), key=lambda p: p.rel):
        graph.nodes.append({"id": page.rel, "kind": "page", "label": page.title, "type": page.type})
    actions = _actions(model)
    for action_id, stage, _ in actions:
        graph.nodes.append({"id": action_id, "kind": "action", "label": action_id, "stage": stage})
    graph.edges += _action_edges(model, actions)
    for page in sorted(wiki.pages.values(), key=lambda p: p.rel):
        for target in sorted(model.outbound[page.slug]):
            if target != page.slug:
                graph.edges.append({"from": page.rel, "to": wiki.pages[target].rel, "kind": "link"})
    return graph


def _actions(model: Model) -> list[tuple[str, str, str]]:
    """(id, stage, subject) of every action the last build recorded; none without a state."""
    state = State.peek(model.project.state_path)  # read only: never creates or migrates it
    if state is None:
        return []
    try:
        records = state.actions()
        slugs = state.slugs()
    finally:
        state.close()
    found = []
    for rec in sorted(records.values(), key=lambda r: r.id):
        subject = rec.subject if rec.stage == "digest" else slugs.get(rec.subject, rec.subject)
        found.append((rec.id, rec.stage, subject))
    return found


def _action_edges(model: Model, actions: list[tuple[str, str, str]]) -> list[dict[str, str]]:
    wiki, edges = model.wiki, []
    digested: set[str] = set()
    for action_id, stage, subject in actions:
        if stage == "digest":
            digested.add(subject)
            edges.append({"from": subject, "to": action_id, "kind": "input"})
            for slug in sorted(set(model.fed.get(subject, []))):
                edges.append({"from": action_id, "to": wiki.pages[slug].rel, "kind": "output"})
        elif subject in wiki.pages:
            edges.append({"from": action_id, "to": wiki.pages[subject].rel, "kind": "output"})
    for source in sorted(model.fed):  # sources with no recorded digest feed their pages directly
        if source not in digested:
            for slug in sorted(set(model.fed[source])):
                edges.append({"from": source, "to": wiki.pages[slug].rel, "kind": "input"})
    return edges


def to_dot(graph: Graph) -> str:
    shapes = {"source": "note", "action": "box", "page": "ellipse"}
    lines = ["digraph wikic {", "  rankdir=LR;"]
    for node in graph.nodes:
        label = json.dumps(node["label"], ensure_ascii=False)
        lines.append(
            f"  {json.dumps(node['id'], ensure_ascii=False)} [label={label}, shape={shapes[node['kind']]}];"
        )
    for edge in graph.edges:
        style = ", style=dashed" if edge["kind"] == "link" else ""
        a, b = json.dumps(edge["from"], ensure_ascii=False), json.dumps(edge["to"], ensure_ascii=False)
        lines.append(f'  {a} -> {b} [label="{edge["kind"]}"{style}];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_graphml(graph: Graph) -> str:
    keys = ("kind", "label", "type", "stage")
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">',
        *[f'  <key id="{k}" for="node" attr.name="{k}" attr.type="string"/>' for k in keys],
        '  <key id="edgekind" for="edge" attr.name="kind" attr.type="string"/>',
        '  <graph id="wikic" edgedefault="directed">',
    ]
    for node in graph.nodes:
        data = "".join(f'<data key="{k}">{escape(str(node[k]))}</data>' for k in keys if node.get(k))
        out.append(f"    <node id={quoteattr(node['id'])}>{data}</node>")
    for i, edge in enumerate(graph.edges):
        out.append(
            f'    <edge id="e{i}" source={quoteattr(edge["from"])} target={quoteattr(edge["to"])}>'
            f'<data key="edgekind">{edge["kind"]}</data></edge>'
        )
    out += ["  </graph>", "</graphml>"]
    return "\n".join(out) + "\n"


def render(graph: Graph, fmt: str) -> str:
    if fmt == "dot":
        return to_dot(graph)
    if fmt == "graphml":
        return to_graphml(graph)
    return to_json_lines(graph)


def to_json_lines(graph: Graph) -> str:
    """The JSON with a node or an edge per line: as readable to a person or a line tool as
    indented JSON, and made by json's C encoder (indent= takes its pure-Python one)."""
    encode = json.JSONEncoder(ensure_ascii=False).encode  # one encoder: dumps() makes one per call
    parts = []
    for key, items in graph.to_json().items():
        rows = ",\n".join(["    " + text for text in map(encode, items)])
        parts.append(f"  {json.dumps(key)}: [\n{rows}\n  ]" if items else f"  {json.dumps(key)}: []")
    return "{\n" + ",\n".join(parts) + "\n}\n"
