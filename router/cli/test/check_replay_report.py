#!/usr/bin/env python3
"""sar-route replay end to end: the real binary on a slice of the KTH SP2 log, its CSV, JSON and
HTML report checked against each other and against the fabric.

The report must be well-formed XML (parsed here with xml.etree), titled with the history's file
name (a pipe: says so; --title), and its charts' Vega-Lite specifications must hold what the
CSV says: one series per engine and chart with a value per event, engines equal at every event
merged into one series "a = b" (and only those), one heat-map cell per (leaf, spine) cable pair
in each of the two maps on a scale from white at 0, and one table row per engine. Then
`compare --html` on a job mix of the same fabric with two cables cut: one heat map per engine
with a grey cell per cut cable, one table row per engine.
Usage: check_replay_report.py SAR_ROUTE SOURCE_DIR WORKDIR"""
import csv
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

XHTML = "{http://www.w3.org/1999/xhtml}"


def chart_specs(root, kind):
    """{title: Vega-Lite specification} of the report's charts of `kind`, in page order."""
    out = {}
    for div in root.iter(XHTML + "div"):
        if div.get("class") == "chart" and div.get("data-kind") == kind:
            spec = json.loads(div.find(XHTML + "script").text)
            assert spec["title"]["text"] == div.get("data-title"), spec["title"]
            out[div.get("data-title")] = spec
    return out


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
    title = root.find(f"{XHTML}head/{XHTML}title").text
    assert title == "sar-route replay: kth-sp2-slice.swf on ft.topo", title
    assert "CDATA" in open(html).read() and "vega.View" in open(html).read()
    charts = chart_specs(root, "series")
    assert len(charts) == 6, len(charts)  # 3 of what jobs feel, 3 of the fabric
    # Each series against the CSV: engines equal at every event are one series "a = b" (and
    # only those), its rows the events' values (and the last held to the end of the axis).
    csv_key = {"Max effective EFI per event": "effective_efi_max",
               "Slowest job's exchange time per event": "job_time_max",
               "Median job's exchange time per event": "job_time_median",
               "Jobs slower than under dfsssp per event": "jobs_slower",
               "Dark fiber per event": "dark_fiber"}
    for name, spec in charts.items():
        groups = spec["encoding"]["color"]["scale"]["domain"]
        members = [g.split(" = ") for g in groups]
        assert sorted(e for m in members for e in m) == sorted(engines), (name, groups)
        if name == "Multi-leaf jobs running":  # the same for every engine: one line
            assert groups == [" = ".join(engines)], groups
            assert "subtitle" in spec["title"], spec["title"]
        if name not in csv_key:
            continue
        col = {e: [float(r[csv_key[name]]) for r in rows if r["engine"] == e] for e in engines}
        for g, m in zip(groups, members):
            drawn = [v["v"] for v in spec["data"]["values"] if v["s"] == g]
            assert len(drawn) == events + 1 and drawn[-1] == drawn[-2], (name, g, len(drawn))
            for e in m:
                assert all(abs(a - b) <= 1e-6 * max(1, abs(b)) for a, b in
                           zip(drawn, col[e])), (name, e)
        for a, b in [(a, b) for i, a in enumerate(engines) for b in engines[i + 1:]]:
            together = any(a in m and b in m for m in members)
            assert together == (col[a] == col[b]), (name, a, b, together)
        assert ("subtitle" in spec["title"]) == any(len(m) > 1 for m in members), spec["title"]
    maps = chart_specs(root, "heatmap")
    assert list(maps) == ["before the reroute", "after the reroute"], list(maps)
    for m in maps.values():
        assert len(m["layer"]) == 1  # no grey layer: every leaf-spine pair is cabled
        cells = m["layer"][0]["data"]["values"]
        assert len(cells) == 6 * 4, len(cells)  # 6 leaves x 4 spines, one cable each
        scale = m["layer"][0]["encoding"]["color"]["scale"]
        assert scale["domain"][0] == 0 and scale["range"][0] == "#ffffff", scale
        for c in cells:  # white (0) exactly where both directions carry no load
            assert c["v"] == max(c["up"], c["down"]) <= scale["domain"][1], (c, scale)
    table = next(root.iter(XHTML + "table"))
    assert len(table.findall(XHTML + "tr")) == 1 + len(engines)
    # The title names the history's file, never /dev/fd/N: a pipe says so, --title names it.
    swf = os.path.join(src, "tests/data/kth-sp2-slice.swf")
    for extra, want in (([], "sar-route replay: SWF history from a pipe (name it with --title) "
                              "on ft.topo"), (["--title", "KTH <SP2>"], "KTH <SP2>")):
        with open(swf) as stdin:
            subprocess.run([sar_route, "replay", "-t", topo, "--swf", "/dev/stdin", "-e", "sar",
                            "--days", "0.2", "--html", html, "--progress", "off", "--threads",
                            "1", *extra], check=True, capture_output=True, stdin=stdin)
        got = ET.parse(html).getroot().find(f"{XHTML}head/{XHTML}title").text
        assert got == want, (got, want)
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
    cmaps = chart_specs(croot, "heatmap")
    assert list(cmaps) == ["sar", "dfsssp"], list(cmaps)
    for m in cmaps.values():
        assert len(m["layer"][0]["data"]["values"]) == 22
        assert len(m["layer"][1]["data"]["values"]) == 2  # grey: no cable
    ctable = next(croot.iter(XHTML + "table"))
    assert len(ctable.findall(XHTML + "tr")) == 3
    print("ok: %d events, %d engines; compare report" % (events, len(engines)))


if __name__ == "__main__":
    main()
