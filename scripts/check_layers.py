#!/usr/bin/env python3
"""Checks that the components link only downwards, as docs/architecture.md draws them.

    scripts/check_layers.py [--root DIR]

The map's layer diagram (the first ``` block after "DEPS list") puts each component of
src/ on a row; a component may depend only on components in rows below its own. The
edges are read from each src/<component>/CMakeLists.txt: the DEPS of
`trainwatch_component(<name> ...)` and any `target_link_libraries(trainwatch_<name> ...)`.
Exits 1 naming each edge the diagram does not allow, each component the diagram lacks and
each row name with no component, so the drawing and the build cannot drift apart.
"""
import argparse
import pathlib
import re
import sys

# The diagram's left column (component names); what follows it describes the row.
NAME_COLUMN = 38
COMPONENT = re.compile(r"trainwatch_component\(\s*(\w+)(.*?)\)", re.S)
EXTRA_LINKS = re.compile(r"target_link_libraries\(\s*trainwatch_(\w+)(.*?)\)", re.S)
DEP = re.compile(r"trainwatch::(\w+)")


def diagram_rows(doc_text):
    """[{names}] from the top row down; a continued name column joins the row above."""
    lines = doc_text.splitlines()
    start = next(i for i, line in enumerate(lines) if "DEPS list" in line)
    begin = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
    rows = []
    for line in lines[begin + 1:]:
        if line.startswith("```"):
            break
        names = line[:NAME_COLUMN].split()
        if not names:
            continue  # the row's description goes on
        if line[0].isspace() and rows:
            rows[-1].update(names)
        else:
            rows.append(set(names))
    return rows


def component_edges(src):
    """{component: {components it links}} from every CMakeLists.txt under src/."""
    edges = {}
    for cmake in sorted(src.glob("*/CMakeLists.txt")):
        text = re.sub(r"#.*", "", cmake.read_text())
        for name, body in COMPONENT.findall(text):
            edges.setdefault(name, set()).update(DEP.findall(body))
        for name, body in EXTRA_LINKS.findall(text):
            if name in edges:  # trainwatch_shared is the reporter's .so, no component
                edges[name].update(DEP.findall(body))
        if cmake.parent.name == "cli":  # the executable: the top row, linking what it runs
            edges.setdefault("cli", set()).update(DEP.findall(text))
    return edges


def problems(root):
    doc = root / "docs" / "architecture.md"
    rows = diagram_rows(doc.read_text())
    level = {name: len(rows) - i for i, row in enumerate(rows) for name in row}
    edges = component_edges(root / "src")
    found = []
    for name in sorted(set(level) - set(edges)):
        found.append(f"{doc}: the diagram names `{name}`, which is no component of src/")
    for name, deps in sorted(edges.items()):
        if name not in level:
            found.append(f"src/{name}/CMakeLists.txt: component `{name}` is missing from the diagram in {doc}")
            continue
        for dep in sorted(deps):
            if dep == name or dep not in level:
                continue  # itself, or a target that is no component (trainwatch::shared)
            if level[dep] >= level[name]:
                where = "in its own row" if level[dep] == level[name] else "in a row above it"
                found.append(f"src/{name}/CMakeLists.txt: `{name}` depends on `{dep}`, {where} in {doc}")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=pathlib.Path(__file__).resolve().parent.parent, type=pathlib.Path)
    args = parser.parse_args()
    found = problems(args.root)
    for p in found:
        print(p, file=sys.stderr)
    if found:
        print(f"{len(found)} dependency edge(s) the layer diagram does not allow", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
