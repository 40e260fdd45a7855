#!/usr/bin/env python3
"""The configuration files' man pages (sar-filterd.yaml(5), osmsar.conf(5)) list every key their
parsers accept, and no other. The accepted keys are read from the parsers' sources
(filterd/config.cc's table of setters, opensm-patch/osmsar_config.cc's `key == "..."` chain),
not from the samples the pages are made from. Usage: check_config_man.py PAGE.5.gz...
Exit 0 if all hold."""
import gzip
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def parser_keys(name):
    if name == "sar-filterd.yaml":
        src = open(os.path.join(ROOT, "filterd", "config.cc")).read()
        table = src[src.index("Setters("):src.index("const char* TriggerName")]
        return set(re.findall(r'^\s+\{"([a-z_0-9]+)",', table, re.M))
    if name == "osmsar.conf":
        src = open(os.path.join(ROOT, "opensm-patch", "osmsar_config.cc")).read()
        return set(re.findall(r'key == "([a-z_0-9]+)"', src))
    raise SystemExit(f"check_config_man: no parser known for {name}")


def page_keys(path):
    text = gzip.open(path).read().decode()
    keys = set()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line == ".TP" and i + 1 < len(lines):
            keys |= set(re.findall(r"\\fB([a-z_0-9\\-]+)\\fR", lines[i + 1]))
    return {k.replace("\\-", "-") for k in keys}


def main():
    pages = sys.argv[1:]
    check(len(pages) >= 1, f"{len(pages)} config page(s) given")
    for path in pages:
        name = os.path.basename(path)[: -len(".5.gz")]
        want, got = parser_keys(name), page_keys(path)
        check(len(want) >= 10, f"{name}: the parser accepts {len(want)} keys")
        check(got == want, f"{name}(5) lists the parser's keys (missing {sorted(want - got)}, "
                           f"extra {sorted(got - want)})")
    print("FAILED: " + "; ".join(failures) if failures else "all ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
