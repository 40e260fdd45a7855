#!/usr/bin/env python3
"""The man pages (docs/man/, made by help2man at build time) say every option the programs'
--help lists: for each page, every `--long` and `-x` option in `<program> --help` (and, for
sar-route, in every `sar-route <subcommand> --help`) appears in the page's text. Also checks the
page's NAME line, that it is a gzip'd troff page and that it names neither the build nor the
source directory (issue 34: sar-route's subcommand usages showed the build tree's path). Exit 0
if all hold."""
import argparse
import gzip
import os
import re
import subprocess
import sys

sys.path.insert(0, __file__.rsplit("/", 3)[0] + "/docs/man")
from make_man import subcommands  # noqa: E402  (one reading of CLI11's subcommand list)

OPTION = re.compile(r"(?<![\w/.-])(--[a-z0-9][a-z0-9-]*|-[a-zA-Z])(?![\w-])")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def help_text(argv):
    return subprocess.run(argv + ["--help"], capture_output=True, text=True, timeout=60).stdout


def page_text(path):
    troff = gzip.open(path, "rt").read()
    # troff escapes: \- is a minus, \(hy / \(en dashes, \fB..\fR fonts, \& zero-width.
    text = troff.replace("\\-", "-").replace("\\(hy", "-").replace("\\&", "").replace("\\e", "\\")
    return troff, re.sub(r"\\f[BIRP]", "", text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pairs", nargs="+", metavar="BINARY=PAGE")
    args = ap.parse_args()
    for pair in args.pairs:
        binary, page = pair.split("=", 1)
        name = binary.rsplit("/", 1)[-1]
        troff, text = page_text(page)
        check(troff.startswith(".\\\"") or ".TH" in troff, f"{page}: a troff page")
        check(re.search(rf"^\.TH {re.escape(name.upper())}", troff, re.M | re.I) is not None,
              f"{page}: .TH names {name}")
        source_dir = os.path.abspath(__file__).rsplit("/", 3)[0]
        leaked = [d for d in (os.path.dirname(os.path.abspath(binary)), source_dir) if d in text]
        check(not leaked, f"{page}: no build path in the page ({' '.join(leaked) or 'none'})")
        helps = [("", help_text([binary]))]
        helps += [(s, help_text([binary, s])) for s in subcommands(helps[0][1])]
        for sub, h in helps:
            opts = sorted(set(OPTION.findall(h)))
            missing = [o for o in opts if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])",
                                                         text)]
            check(opts and not missing,
                  f"{name}{' ' + sub if sub else ''}: {len(opts)} options of --help in the page"
                  + (f"; missing {missing}" if missing else ""))
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
