#!/usr/bin/env python3
"""libsar's layers, checked on the include graph of router/src and router/include.

Every `#include "..."` of a libsar file names another libsar file (system and gtest headers are
not followed). Two rules, and the script exits 1 when either is broken:

1. Folders are layers. A file may include files of its own layer and of the layers below it,
   never of a layer above ("a backward dependency"). From the bottom up:

     base       status.h/.cc, big_array.h, work_pool.h/.cc (router/src and router/include/sar)
     model      the fabric, LIDs, LFTs, jobs, node classes
     io         file formats read and written (topology, dumps, job files, ...)
     analysis   the destination sweep and the analyses on it (trace, deadlock, metrics, ...)
     engines    the routing engines
     fors       FORS schedules and their tables
     migration  the migration coordinator and its wire format
     pass       the routing pass (router/src/pass: one file per stage)
     study      study, replay, job mixes
     report     the HTML reports (their own library, sarreport)
     c          the C API (sar/c.h, c.cc)

2. Within a folder, components do not form a cycle. A component is a header and the source of
   the same name (include/sar/analysis/trace.h + src/analysis/trace.cc); a header with no source
   (sweep_visitors.h, stages.h) is a component of its own. So trace.cc including analysis.h,
   whose AnalyseRouting calls back into trace.cc, is a cycle even though both are in analysis/.

Tests (*_test.cc, *_test_util.h, test_util.h, test_fabrics.h) stand above every layer: they
include what they test and are not checked.

Usage: include_layers.py [--root DIR] [--verbose]   (DIR: the repository; default: this one)
"""

import argparse
import os
import re
import sys

LAYERS = ["base", "model", "io", "analysis", "engines", "fors", "migration", "pass", "study",
          "report", "c"]
# Files directly in router/src or router/include/sar (no folder): their layer by name.
# env: the Env wraps io's file operations (sar/io/file_util.h), so it sits at io's level.
ROOT_FILES = {"status": "base", "big_array": "base", "work_pool": "base", "env": "io", "c": "c"}
TEST_FILE = re.compile(r"(_test\.cc|_test_util\.h|^test_util\.h|^test_fabrics\.h)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCE = re.compile(r"\.(h|cc|c)$")


class Error(Exception):
    pass


def libsar_files(root):
    """Paths (relative to root) of libsar's headers and sources, tests left out."""
    out = []
    for top in ("router/src", "router/include"):
        for d, _, names in os.walk(os.path.join(root, top)):
            for n in names:
                if SOURCE.search(n) and not TEST_FILE.search(n):
                    out.append(os.path.relpath(os.path.join(d, n), root))
    return sorted(out)


def folder_and_stem(path):
    """('analysis', 'trace') for router/src/analysis/trace.cc and .../sar/analysis/trace.h."""
    parts = path.split("/")
    rest = parts[3:] if parts[1] == "include" else parts[2:]  # drop router/include/sar, router/src
    stem = re.sub(SOURCE, "", rest[-1])
    return ("/".join(rest[:-1]), stem)


def layer_of(path):
    folder, stem = folder_and_stem(path)
    if folder == "":
        if stem not in ROOT_FILES:
            raise Error(f"{path}: a file in no folder and not in ROOT_FILES: give it a layer")
        return ROOT_FILES[stem]
    top = folder.split("/")[0]
    if top not in LAYERS:
        raise Error(f"{path}: folder {top}/ is not a layer: add it to LAYERS (and the docstring)")
    return top


def resolve(root, including, name):
    """The libsar file an include names, or None (a system, gtest or missing header)."""
    for base in ("router/include", "router/src", os.path.dirname(including)):
        p = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, p)):
            return p
    return None


def include_graph(root, files):
    """{file: [included libsar files]}, tests left out on both ends."""
    wanted = set(files)
    graph = {}
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        targets = [resolve(root, f, name) for name in INCLUDE.findall(text)]
        graph[f] = sorted({t for t in targets if t in wanted and t != f})
    return graph


def backward_dependencies(graph):
    rank = {name: i for i, name in enumerate(LAYERS)}
    out = []
    for f, targets in graph.items():
        for t in targets:
            if rank[layer_of(t)] > rank[layer_of(f)]:
                out.append((f, t))
    return out


def component_cycles(graph):
    """Cycles between the components of one folder: a list of (folder, [stems], [edges])."""
    comp_edges = {}  # (folder, stem) -> {(folder, stem): (file, target)}
    for f, targets in graph.items():
        a = folder_and_stem(f)
        comp_edges.setdefault(a, {})
        for t in targets:
            b = folder_and_stem(t)
            if b[0] == a[0] and b != a:
                comp_edges[a].setdefault(b, (f, t))
    # Tarjan's strongly connected components, iteratively.
    index, low, on_stack, stack, sccs = {}, {}, set(), [], []
    counter = 0
    for start in sorted(comp_edges):
        if start in index:
            continue
        work = [(start, iter(sorted(comp_edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(comp_edges.get(w, {})))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                scc = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    scc.append(w)
                    if w == v:
                        break
                if len(scc) > 1:
                    sccs.append(sorted(scc))
    out = []
    for scc in sorted(sccs):
        members = set(scc)
        edges = sorted(e for a in scc for b, e in comp_edges.get(a, {}).items() if b in members)
        out.append((scc[0][0], [s for _, s in scc], edges))
    return out


def check(root, verbose=False, out=sys.stdout):
    """Prints the findings; returns the number of broken rules' instances (0 = clean)."""
    files = libsar_files(root)
    if not files:
        raise Error(f"{root}: no router/src or router/include files")
    graph = include_graph(root, files)
    backward = backward_dependencies(graph)
    cycles = component_cycles(graph)
    edges = sum(len(t) for t in graph.values())
    print(f"{len(files)} files, {edges} includes between them; layers (bottom up): "
          f"{' < '.join(LAYERS)}", file=out)
    if verbose:
        for f in files:
            print(f"  {layer_of(f):9} {f}", file=out)
    for f, t in backward:
        print(f"backward: {f} ({layer_of(f)}) includes {t} ({layer_of(t)})", file=out)
    for folder, stems, cycle_edges in cycles:
        print(f"cycle in {folder}/: {' <-> '.join(stems)}", file=out)
        for f, t in cycle_edges:
            print(f"  {f} includes {t}", file=out)
    print(f"backward dependencies: {len(backward)}; component cycles: {len(cycles)}", file=out)
    return len(backward) + len(cycles)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")),
                        help="the repository (default: the one holding this script)")
    parser.add_argument("--verbose", action="store_true", help="list every file's layer")
    args = parser.parse_args()
    try:
        return 1 if check(args.root, args.verbose) else 0
    except Error as e:
        print(f"include_layers.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
