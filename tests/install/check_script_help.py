#!/usr/bin/env python3
"""The scripts' --help answers at once on a fresh clone: nothing installed, nothing built.
Issue 38: `scripts/demo.sh --help` installed packages and compiled before printing (3-7 s, and
minutes on a fresh clone). The scripts are copied into an empty tree (no build/), run with a PATH
whose apt-get, dpkg-query, cmake, make and sudo are stand-ins that record that they were called;
the help must name its options and none of the stand-ins may run. Exit 0 if all hold."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TRAPPED = ("apt-get", "dpkg-query", "cmake", "make", "sudo", "ninja")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def main():
    with tempfile.TemporaryDirectory(prefix="sar-help-") as tmp:
        tree = os.path.join(tmp, "clone")
        shutil.copytree(os.path.join(ROOT, "scripts"), os.path.join(tree, "scripts"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        shims = os.path.join(tmp, "bin")
        os.mkdir(shims)
        calls = os.path.join(tmp, "calls")
        for tool in TRAPPED:
            path = os.path.join(shims, tool)
            with open(path, "w") as f:
                f.write(f"#!/bin/sh\necho {tool} >> '{calls}'\nexit 1\n")
            os.chmod(path, 0o755)
        env = dict(os.environ, PATH=shims + os.pathsep + os.environ.get("PATH", ""))
        cases = [
            (["scripts/demo.sh", "--help"], ["--fabric", "--migration", "--seed"]),
            (["scripts/demo.sh", "engines", "--help"], ["--engines", "--fabric"]),
            (["scripts/demo.sh", "--short", "-h"], ["--fabric"]),
            (["scripts/test.sh", "--help"], ["--quick"]),
        ]
        for argv, words in cases:
            if os.path.exists(calls):
                os.unlink(calls)
            start = time.monotonic()
            r = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, timeout=60)
            took = time.monotonic() - start
            name = " ".join(argv)
            check(r.returncode == 0, f"{name}: exit 0 (got {r.returncode}; {r.stderr.strip()[-200:]})")
            missing = [w for w in words if w not in r.stdout]
            check(not missing, f"{name}: help names {' '.join(words)} (missing: {missing or 'none'})")
            ran = open(calls).read().split() if os.path.exists(calls) else []
            check(not ran, f"{name}: installs and builds nothing (ran: {' '.join(ran) or 'none'})")
            check(not os.path.exists(os.path.join(tree, "build")), f"{name}: no build/ created")
            print(f"     {name}: {took:.2f} s")
    print("FAILED: " + "; ".join(failures) if failures else "all ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
