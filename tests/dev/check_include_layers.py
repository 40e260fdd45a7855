#!/usr/bin/env python3
"""scripts/dev/include_layers.py finds what it is for, on small made-up trees: a lower layer that
includes a higher one, two components of one folder that include each other (the analyses'
old shape: trace.cc including analysis.h, whose AnalyseRouting calls back into trace.cc), and a
folder that is no layer; and passes a tree that keeps the rules."""

import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "dev",
                      "include_layers.py")


def make_tree(root, files):
    for path, includes in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write("".join(f'#include "{i}"\n' for i in includes))
            f.write("#include <vector>\n#include \"gtest/gtest.h\"\n")


def run(files):
    with tempfile.TemporaryDirectory() as root:
        make_tree(root, files)
        p = subprocess.run([sys.executable, SCRIPT, "--root", root], capture_output=True,
                           text=True, timeout=60)
        return p.returncode, p.stdout + p.stderr


# The analyses after the change: each below the sweep, AnalyseRouting on top.
CLEAN = {
    "router/include/sar/status.h": [],
    "router/include/sar/model/fabric.h": ["sar/status.h"],
    "router/include/sar/analysis/trace.h": ["sar/model/fabric.h"],
    "router/src/analysis/destination_sweep.h": ["sar/model/fabric.h"],
    "router/src/analysis/trace.cc": ["sar/analysis/trace.h", "analysis/destination_sweep.h"],
    "router/include/sar/analysis/analysis.h": ["sar/analysis/trace.h"],
    "router/src/analysis/analysis.cc": ["sar/analysis/analysis.h",
                                        "analysis/destination_sweep.h"],
    "router/include/sar/pass/routing_pass.h": ["sar/analysis/analysis.h"],
    # Tests include anything: not checked.
    "router/src/model/fabric_test.cc": ["sar/pass/routing_pass.h"],
}


def main():
    failures = []

    def expect(name, files, rc, *texts):
        got_rc, out = run(files)
        missing = [t for t in texts if t not in out]
        if got_rc != rc or missing:
            failures.append(f"{name}: exit {got_rc} (want {rc}), missing {missing}:\n{out}")

    expect("clean tree", CLEAN, 0, "backward dependencies: 0; component cycles: 0")

    backward = dict(CLEAN)
    backward["router/src/model/fabric.cc"] = ["sar/model/fabric.h", "sar/pass/routing_pass.h"]
    expect("model includes pass", backward, 1,
           "backward: router/src/model/fabric.cc (model) includes "
           "router/include/sar/pass/routing_pass.h (pass)", "backward dependencies: 1;")

    cycle = dict(CLEAN)
    cycle["router/src/analysis/trace.cc"] = CLEAN["router/src/analysis/trace.cc"] + [
        "sar/analysis/analysis.h"]
    expect("trace.cc calls back up", cycle, 1, "cycle in analysis/: analysis <-> trace",
           "router/src/analysis/trace.cc includes router/include/sar/analysis/analysis.h",
           "component cycles: 1")

    unknown = dict(CLEAN)
    unknown["router/src/gui/window.cc"] = ["sar/model/fabric.h"]
    expect("folder not a layer", unknown, 2, "gui/ is not a layer")

    for f in failures:
        print("FAIL", f)
    print(f"{4 - len(failures)} of 4 cases pass")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
