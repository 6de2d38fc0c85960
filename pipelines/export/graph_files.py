"""GraphML and GEXF files of the entity graph, for Gephi, networkx, igraph, yEd and Cytoscape: a directed graph with
the index's edge rows as they are (one per direction: `rank` is dst's place among src's neighbours)."""

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

from acervo.pipelines.export.graph import Entity, Graph

GRAPHML = "http://graphml.graphdrawing.org/xmlns"
GEXF = "http://www.gexf.net/1.2draft"
NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")  # characters XML 1.0 cannot hold
NodeField = tuple[str, str, Callable[[Entity], object]]  # attribute name, type, its value for an entity


def node_fields(graph: Graph) -> list[NodeField]:
    """The node attributes: label, mentions, degree, short answer and its chunk, the community at each level."""
    fields: list[NodeField] = [("label", "string", lambda e: e.label), ("n_chunks", "int", lambda e: e.n_chunks),
                               ("degree", "int", lambda e: e.degree), ("answer", "string", lambda e: e.answer),
                               ("evidence_ref", "string", lambda e: e.evidence_ref)]
    return fields + [(f"community_{level}", "string", lambda e, level=level: e.communities.get(level, ""))
                     for level in range(graph.levels)]


def graphml(graph: Graph, path: Path) -> None:
    """Write `graph` as GraphML: node ids are entity ids; attributes as node_fields, edges' weight and rank."""
    root = ET.Element("graphml", xmlns=GRAPHML)
    fields = node_fields(graph)
    for n, (name, kind, _) in enumerate(fields):
        ET.SubElement(root, "key", {"id": f"v{n}", "for": "node", "attr.name": name, "attr.type": kind})
    for n, name in enumerate(("weight", "rank")):
        ET.SubElement(root, "key", {"id": f"e{n}", "for": "edge", "attr.name": name, "attr.type": "int"})
    body = ET.SubElement(root, "graph", id="acervo", edgedefault="directed")
    for entity in graph.entities.values():
        node = ET.SubElement(body, "node", id=_xml(entity.entity_id))
        for n, (_, _, value) in enumerate(fields):
            ET.SubElement(node, "data", key=f"v{n}").text = _xml(value(entity))
    for src, dst, weight, rank in graph.edges:
        edge = ET.SubElement(body, "edge", source=_xml(src), target=_xml(dst))
        ET.SubElement(edge, "data", key="e0").text = str(weight)
        ET.SubElement(edge, "data", key="e1").text = str(rank)
    _write(root, path)


def gexf(graph: Graph, path: Path) -> None:
    """Write `graph` as GEXF 1.2: the label as each node's label, the edge weight as GEXF's own, the rest as
    attributes (the label again among them, so that every reader finds it)."""
    types = {"string": "string", "int": "integer"}
    root = ET.Element("gexf", xmlns=GEXF, version="1.2")
    body = ET.SubElement(root, "graph", mode="static", defaultedgetype="directed")
    fields = node_fields(graph)
    nodes_kinds = ET.SubElement(body, "attributes", {"class": "node"})
    for n, (name, kind, _) in enumerate(fields):
        ET.SubElement(nodes_kinds, "attribute", id=str(n), title=name, type=types[kind])
    edges_kinds = ET.SubElement(body, "attributes", {"class": "edge"})
    ET.SubElement(edges_kinds, "attribute", id="0", title="rank", type="integer")
    nodes = ET.SubElement(body, "nodes")
    for entity in graph.entities.values():
        node = ET.SubElement(nodes, "node", id=_xml(entity.entity_id), label=_xml(entity.label))
        values = ET.SubElement(node, "attvalues")
        for n, (_, _, value) in enumerate(fields):
            ET.SubElement(values, "attvalue", {"for": str(n), "value": _xml(value(entity))})
    edges = ET.SubElement(body, "edges")
    for n, (src, dst, weight, rank) in enumerate(graph.edges):
        edge = ET.SubElement(edges, "edge", id=str(n), source=_xml(src), target=_xml(dst), weight=str(weight))
        ET.SubElement(ET.SubElement(edge, "attvalues"), "attvalue", {"for": "0", "value": str(rank)})
    _write(root, path)


def _xml(value: object) -> str:
    """`value` as XML text: a character XML 1.0 cannot hold (a C0 control but tab and line ends) as U+FFFD."""
    return NOT_XML.sub("\ufffd", str(value))


def _write(root: ET.Element, path: Path) -> None:
    """Write the document `root` as UTF-8 XML, indented."""
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
