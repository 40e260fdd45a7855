#!/usr/bin/env python3
"""The configuration keys the docs document are the ones the parsers accept.

- docs/opensm-plugin.md's table of `osmsar.conf` keys lists every key the plugin's parser accepts
  and no other;
- every key in the first column of docs/operations.md's sar-filterd settings table
  ("## Configuration") is one sar-filterd's parser accepts.
The accepted keys are read from the parsers' sources (filterd/config.cc's table of setters,
opensm-patch/osmsar_config.cc's `key == "..."` chain), as tests/install/check_config_man.py
reads them for the man pages. Usage: check_doc_config_keys.py REPO. Exit 0 if all hold.
"""
import os
import re
import sys

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def parser_keys(repo):
    src = open(os.path.join(repo, "filterd", "config.cc")).read()
    table = src[src.index("Setters("):src.index("const char* TriggerName")]
    filterd = set(re.findall(r'^\s+\{"([a-z_0-9]+)",', table, re.M))
    src = open(os.path.join(repo, "opensm-patch", "osmsar_config.cc")).read()
    osmsar = set(re.findall(r'key == "([a-z_0-9]+)"', src))
    return filterd, osmsar


def table_after(text, marker):
    """First-column keys of the first Markdown table after `marker`: (line, [keys])."""
    start = text.index(marker)
    lines = text[start:].split("\n")
    first_line = text[:start].count("\n") + 1
    rows, in_table = [], False
    for i, line in enumerate(lines):
        if line.startswith("|"):
            in_table = True
            cell = line.split("|")[1]
            keys = re.findall(r"`([a-z_0-9]+)`", cell)
            if keys:
                rows.append((first_line + i, keys))
        elif in_table:
            break
    return rows


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    repo = sys.argv[1]
    filterd, osmsar = parser_keys(repo)
    check(len(filterd) >= 20 and len(osmsar) >= 15,
          f"parsers read: {len(filterd)} sar-filterd keys, {len(osmsar)} osmsar.conf keys")

    plugin = open(os.path.join(repo, "docs", "opensm-plugin.md"), encoding="utf-8").read()
    rows = table_after(plugin, "`osmsar.conf` keys")
    documented = {k for _, keys in rows for k in keys}
    check(documented == osmsar,
          f"docs/opensm-plugin.md:{rows[0][0] if rows else '?'}: the osmsar.conf table lists the "
          f"parser's keys (missing {sorted(osmsar - documented)}, "
          f"not accepted {sorted(documented - osmsar)})")

    ops = open(os.path.join(repo, "docs", "operations.md"), encoding="utf-8").read()
    rows = table_after(ops, "## Configuration")
    check(len(rows) >= 10, f"docs/operations.md: {len(rows)} rows of sar-filterd settings")
    for line, keys in rows:
        bad = [k for k in keys if k not in filterd]
        check(not bad, f"docs/operations.md:{line}: sar-filterd keys {keys} accepted"
                       + (f" (unknown: {bad})" if bad else ""))
    print("FAILED: " + "; ".join(failures) if failures else "all ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
