#!/usr/bin/env python3
"""The shipped monitoring files work: config/prometheus/sar-rules.yml passes `promtool check
rules`, and its alerts fire (and stay quiet) as tests/install/sar-rules.test.yml says, under
`promtool test rules`; config/grafana/sar.json is a dashboard Grafana can import (unique panel
ids, a Prometheus query in every panel, panels inside the 24-column grid). That both name only
metrics that exist is checked where they are made: sar-filterd's in filterd/daemon_metrics_test.cc
(against the daemon's own formatter), the OpenSM plugin's in integration.osmsar_plugin (against
the textfile the real plugin writes). promtool comes unpacked from Debian's prometheus package by
scripts/install-deps.sh (SAR_TOOLS_DIR), or from PATH. Exit 0 if all hold."""
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def promtool():
    tools = os.environ.get("SAR_TOOLS_DIR", "/var/cache/sar-tools")
    unpacked = os.path.join(tools, "root", "usr", "bin", "promtool")
    return unpacked if os.access(unpacked, os.X_OK) else shutil.which("promtool")


def main():
    tool = promtool()
    check(tool is not None, "promtool found (scripts/install-deps.sh unpacks it)")
    if tool:
        for argv in (["check", "rules", "config/prometheus/sar-rules.yml"],
                     ["test", "rules", "tests/install/sar-rules.test.yml"]):
            r = subprocess.run([tool, *argv], cwd=ROOT, capture_output=True, text=True, timeout=60)
            check(r.returncode == 0 and "SUCCESS" in r.stdout,
                  f"promtool {' '.join(argv)}" + ("" if r.returncode == 0 else
                                                  f":\n{r.stdout[-3000:]}{r.stderr[-2000:]}"))

    with open(os.path.join(ROOT, "config", "grafana", "sar.json")) as f:
        dash = json.load(f)
    panels = dash.get("panels", [])
    check(bool(dash.get("title")) and bool(dash.get("uid")), "dashboard has a title and a uid")
    ids = [p.get("id") for p in panels]
    check(len(ids) == len(set(ids)) and None not in ids, f"{len(ids)} panels, unique ids")
    for p in panels:
        g = p.get("gridPos", {})
        check(0 <= g.get("x", -1) and g.get("x", 0) + g.get("w", 99) <= 24 and g.get("h", 0) > 0,
              f"panel {p.get('title')!r} inside the grid ({g})")
        if p.get("type") == "row":
            continue
        exprs = [t.get("expr", "") for t in p.get("targets", [])]
        check(exprs and all("sar_filterd_" in e or "sar_osmsar_" in e for e in exprs),
              f"panel {p.get('title')!r}: every query reads a sar metric ({len(exprs)})")
        check(p.get("datasource", {}).get("uid") == "${datasource}",
              f"panel {p.get('title')!r}: the dashboard's datasource variable")
    print("FAILED: " + "; ".join(failures) if failures else "all ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
