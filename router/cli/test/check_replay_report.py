#!/usr/bin/env python3
"""sar-route replay end to end: the real binary on a slice of the KTH SP2 log, its CSV, JSON and
HTML report checked against each other and against the fabric.

The report must be well-formed XML (parsed here with xml.etree), and its SVG must draw what the
data says: one polyline per engine and chart with two points per event, one heat-map cell per
(leaf, spine) cable pair in each of the two maps, white exactly where both directions carry no
load, and one table row per engine. Then `compare --html` on a job mix of the same fabric with two
cables cut: one heat map per engine with a grey cell per cut cable, one table row per engine.
Usage: check_replay_report.py SAR_ROUTE SOURCE_DIR WORKDIR"""
import csv
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
XHTML = "{http://www.w3.org/1999/xhtml}"


def main():
    sar_route, src, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    topo = os.path.join(work, "ft.topo")
    subprocess.run([sar_route, "gen", "-f", "ft2:4,6", "-o", topo], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    html = os.path.join(work, "r.html")
    out_csv = os.path.join(work, "r.csv")
    engines = ["sar", "dfsssp", "minhop"]
    run = subprocess.run(
        [sar_route, "replay", "-t", topo, "--swf", os.path.join(src, "tests/data/kth-sp2-slice.swf"),
         "-e", ",".join(engines), "--days", "1", "--json", "--html", html, "--csv", out_csv,
         "--progress", "off", "--threads", "1"],
        check=True, capture_output=True, text=True)
    summary = json.loads(run.stdout)
    assert run.stderr == "", "quiet without a terminal: " + run.stderr
    events = summary["events"]
    assert events > 5, summary
    assert summary["scale"] == 0.24, summary  # 24 hosts / 100 nodes
    rows = list(csv.DictReader(open(out_csv)))
    assert len(rows) == events * len(engines), (len(rows), events)
    for e, s in zip(engines, summary["engines"]):
        assert s["engine"] == e
        mine = [r for r in rows if r["engine"] == e]
        assert max(int(r["effective_efi_max"]) for r in mine) == s["effective_efi_max_max"]
        assert sum(int(r["rerouted"]) for r in mine) == s["reroutes"]
    assert summary["engines"][1]["reroutes"] == 1  # dfsssp ignores jobs: routed once
    # Per-job throughput: the CSV's per-event figures add up to the JSON's, against dfsssp (the
    # default baseline), which is never slower than itself.
    assert summary["flow_baseline"] == "dfsssp", summary
    for e, s in zip(engines, summary["engines"]):
        mine = [r for r in rows if r["engine"] == e]
        for r in mine:  # an event without multi-leaf jobs has no job to time
            busy = int(r["multi_leaf_jobs"]) > 0
            assert (float(r["job_time_max"]) >= float(r["job_time_median"]) > 0) == busy, r
        assert abs(max(float(r["job_time_max"]) for r in mine) - s["job_time_max"]) <= \
            1e-5 * s["job_time_max"], (e, s)
        assert sum(int(r["jobs_slower"]) for r in mine) == s["jobs_slower"], (e, s)
        assert sum(int(r["jobs_faster"]) for r in mine) == s["jobs_faster"], (e, s)
        if e == "dfsssp":
            assert s["jobs_slower"] == 0 and s["jobs_faster"] == 0, s

    root = ET.parse(html).getroot()  # raises on anything not well-formed
    charts = [s for s in root.iter(SVG + "svg") if s.get("class") == "chart"]
    assert len(charts) == 6, len(charts)  # 3 of what jobs feel, 3 of the fabric
    for chart in charts:
        lines = [p for p in chart.iter(SVG + "polyline") if p.get("class") == "series"]
        assert [p.get("data-engine") for p in lines] == engines
        for p in lines:
            assert len(p.get("points").split()) == 2 * events
    maps = [s for s in root.iter(SVG + "svg") if s.get("class") == "heatmap"]
    assert len(maps) == 2, len(maps)
    for m in maps:
        cells = [r for r in m.iter(SVG + "rect") if r.get("class") == "cell"]
        assert len(cells) == 6 * 4, len(cells)  # 6 leaves x 4 spines, one cable each
        assert not [r for r in m.iter(SVG + "rect") if r.get("class") == "nocable"]
        for c in cells:
            up, down = map(int, re.search(r"up (\d+), down (\d+)", c.find(SVG + "title").text).groups())
            assert (c.get("fill") == "#ffffff") == (up == 0 and down == 0), (c.get("fill"), up, down)
    table = next(root.iter(XHTML + "table"))
    assert len(table.findall(XHTML + "tr")) == 1 + len(engines)
    # Host lists as recorded: the filterd trace and sacct forms give the same events (hand
    # count: b spans leaves 0-1 from t 10 to 50, c leaves 0-2 from 20 to 30).
    trace = os.path.join(work, "t.trace")
    with open(trace, "w") as f:
        f.write("0 100 a h[00000-00001]\n10 50 b h00001,h00004\n20 30 c h00000,h00004,h00008\n")
    sacct = os.path.join(work, "s.txt")
    with open(sacct, "w") as f:
        f.write("JobID|Start|End|NodeList\n"
                "1|2024-01-01T00:00:00|2024-01-01T00:01:40|h[00000-00001]\n"
                "2|2024-01-01T00:00:10|2024-01-01T00:00:50|h00001,h00004\n"
                "2.0|2024-01-01T00:00:10|2024-01-01T00:00:50|h00001\n"
                "3|2024-01-01T00:00:20|2024-01-01T00:00:30|h00000,h00004,h00008\n")
    for flag, path in (("--trace", trace), ("--sacct", sacct)):
        r = json.loads(subprocess.run(
            [sar_route, "replay", "-t", topo, flag, path, "-e", "sar", "--json", "--threads", "1"],
            check=True, capture_output=True, text=True).stdout)
        assert (r["placed"], r["multi_leaf_jobs"], r["events"]) == (3, 2, 5), (flag, r)
    # The same event, the same per-job figures: replay's event with b and c running (t = 20)
    # against compare and eval on a mapping of b and c, for every engine.
    tcsv = os.path.join(work, "t.csv")
    subprocess.run([sar_route, "replay", "-t", topo, "--trace", trace, "-e", "sar,dfsssp,minhop",
                    "--csv", tcsv, "--threads", "1", "--progress", "off"], check=True,
                   capture_output=True)
    at20 = {r["engine"]: r for r in csv.DictReader(open(tcsv)) if r["time_s"] == "20"}
    bc = os.path.join(work, "bc.map")
    with open(bc, "w") as f:
        f.write("h00001 b\nh00004 b\nh00000 c\nh00004 c\nh00008 c\n")
    cmp = json.loads(subprocess.run(
        [sar_route, "compare", "-t", topo, "--jobs", bc, "-e", "sar,dfsssp,minhop", "--file-order",
         "--threads", "1", "--json"], check=True, capture_output=True, text=True).stdout)
    for row in cmp["engines"]:
        want = at20[row["engine"]]
        got = row["flows"]["summary"]
        for key in ("job_time_max", "job_time_median"):
            mine = got["max_time" if key == "job_time_max" else "median_time"]
            assert abs(float(want[key]) - mine) <= 1e-5 * mine, (row["engine"], key, want, got)
        assert int(want["jobs_slower"]) == row["flows"]["vs_baseline"]["slower"], (want, row)

    # compare --html on the same tree with 2 leaf-spine cables cut: the same table and heat-map
    # pieces, one map per engine, 22 cabled cells and 2 grey ones.
    degraded = os.path.join(work, "ft-2.topo")
    subprocess.run([sar_route, "gen", "-f", "ft2:4,6", "--fail-links", "2", "--seed", "1", "-o",
                    degraded], check=True, capture_output=True)
    jobs = os.path.join(work, "jobs.map")
    subprocess.run([sar_route, "jobmix", "-t", degraded, "--max-size", "8", "-o", jobs],
                   check=True, capture_output=True)
    chtml = os.path.join(work, "c.html")
    subprocess.run([sar_route, "compare", "-t", degraded, "--jobs", jobs, "-e", "sar,dfsssp",
                    "--threads", "1", "--html", chtml], check=True, capture_output=True)
    croot = ET.parse(chtml).getroot()
    cmaps = [s for s in croot.iter(SVG + "svg") if s.get("class") == "heatmap"]
    assert len(cmaps) == 2, len(cmaps)
    for m in cmaps:
        assert len([r for r in m.iter(SVG + "rect") if r.get("class") == "cell"]) == 22
        assert len([r for r in m.iter(SVG + "rect") if r.get("class") == "nocable"]) == 2
    ctable = next(croot.iter(XHTML + "table"))
    assert len(ctable.findall(XHTML + "tr")) == 3
    print("ok: %d events, %d engines; compare report" % (events, len(engines)))


if __name__ == "__main__":
    main()
