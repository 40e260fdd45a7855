#!/usr/bin/env python3
"""Split runs without SLURM (issue 39): `replay --shard K/N --work-dir DIR` for every K, then
`merge DIR`, must write the CSV and JSON the unsplit run writes, row for row (sorted rows, every
column but the reroute time); with full recomputes and with --delta; `study` split by points
likewise. Then the refusals: a missing shard, inputs changed since the split, a shard of another
split in the same directory, a pipe as input, --slurm-array without sbatch on PATH.
Usage: check_split_runs.py SAR_ROUTE SOURCE_DIR WORKDIR"""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys

TIMES = {"reroute_ms", "wall_s", "reroute_ms_mean", "reroute_ms_p95", "route_ms"}


def run(argv, expect=0, **kw):
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, **kw)
    assert p.returncode == expect, f"{argv}: exit {p.returncode}, want {expect}\n{p.stderr}"
    return p


def rows_without_times(path):
    rows = list(csv.reader(open(path)))
    keep = [i for i, name in enumerate(rows[0]) if name not in TIMES]
    assert len(keep) == len(rows[0]) - 1, rows[0]
    return [[r[i] for i in keep] for r in rows[1:]]


def without_times(x):
    if isinstance(x, dict):
        return {k: without_times(v) for k, v in x.items() if k not in TIMES}
    if isinstance(x, list):
        return [without_times(v) for v in x]
    return x


def figures(path):
    """The report's charts (time series, heat map: Vega-Lite specifications with their data):
    no times in them."""
    return re.findall(r'<div class="chart".*?</div>', open(path).read(), re.S)


def main():
    sar_route, src, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    topo = os.path.join(work, "ft.topo")
    run([sar_route, "gen", "-f", "ft2:4,6", "-o", topo])
    swf = os.path.join(work, "kth.swf")
    shutil.copy(os.path.join(src, "tests/data/kth-sp2-slice.swf"), swf)
    base = [sar_route, "replay", "-t", topo, "--swf", swf, "-e", "sar,dfsssp,minhop", "--days", "2",
            "--progress", "off", "--threads", "1", "--json"]

    for delta in ([], ["--delta"]):
        tag = "delta" if delta else "full"
        whole_csv = os.path.join(work, f"whole-{tag}.csv")
        whole_html = os.path.join(work, f"whole-{tag}.html")
        whole = json.loads(run(base + delta + ["--csv", whole_csv, "--html", whole_html]).stdout)
        assert whole["events"] > 20, whole
        wd = os.path.join(work, f"split-{tag}")
        split_csv = os.path.join(work, f"split-{tag}.csv")
        split_html = os.path.join(work, f"split-{tag}.html")
        for k in range(4):
            out = run(base + delta + ["--csv", split_csv, "--html", split_html, "--shard",
                                      f"{k}/4", "--work-dir", wd])
            assert f"shard {k}/4" in out.stdout, out.stdout
            assert os.path.exists(os.path.join(wd, f"shard-{k}.json"))
        assert not os.path.exists(split_csv), "a shard wrote the report"
        merged = json.loads(run([sar_route, "merge", wd]).stdout)
        a, b = rows_without_times(whole_csv), rows_without_times(split_csv)
        assert len(a) == whole["events"] * 3, (len(a), whole["events"])
        assert sorted(a) == sorted(b), f"{tag}: merged CSV differs from the unsplit run's"
        assert a == b, f"{tag}: merged CSV rows in another order"
        assert without_times(merged) == without_times(whole), (tag, merged, whole)
        svg = figures(whole_html)
        assert len(svg) >= 3 and svg == figures(split_html), f"{tag}: the HTML figures differ"
        print(f"replay {tag}: {len(a)} rows and {len(svg)} HTML figures equal after 4 shards")

    # Refusals. A shard missing: exit 4 and its number.
    wd = os.path.join(work, "split-full")
    os.rename(os.path.join(wd, "shard-2.json"), os.path.join(work, "shard-2.json"))
    p = run([sar_route, "merge", wd], expect=4)
    assert "shards 2 of 4 have no result" in p.stderr, p.stderr
    os.rename(os.path.join(work, "shard-2.json"), os.path.join(wd, "shard-2.json"))
    # The history changed since the split: the merge refuses (exit 2), naming the manifest.
    with open(swf, "a") as f:
        f.write("; a changed history\n")
    p = run([sar_route, "merge", wd], expect=2)
    assert "inputs or options changed" in p.stderr, p.stderr
    # A shard of the changed input into the same directory: refused before any work.
    p = run(base + ["--shard", "1/4", "--work-dir", wd], expect=2)
    assert "is of another split" in p.stderr, p.stderr
    p = run(base + ["--shard", "1/3", "--work-dir", os.path.join(work, "split-delta")], expect=2)
    assert "is of another split" in p.stderr, p.stderr
    p = run(base + ["--shard", "4/4", "--work-dir", wd], expect=2)
    assert "0 <= K < N" in p.stderr, p.stderr
    p = run(base + ["--work-dir", wd], expect=2)
    assert "--work-dir goes with --shard or --slurm-array" in p.stderr, p.stderr
    # A pipe cannot be read again by every shard.
    fifo = os.path.join(work, "fifo")
    os.mkfifo(fifo)
    argv = [a if a != swf else fifo for a in base]
    p = run(argv + ["--shard", "0/2", "--work-dir", os.path.join(work, "w-fifo")], expect=2)
    assert "regular file" in p.stderr, p.stderr
    # No SLURM: a clear error, nothing submitted.
    env = dict(os.environ, PATH=os.path.join(work, "no-bin"))
    p = run(base + ["--slurm-array", "2", "--work-dir", os.path.join(work, "w-noslurm")],
            expect=4, env=env)
    assert "sbatch" in p.stderr and "PATH" in p.stderr, p.stderr
    p = run([a if a != "sar,dfsssp,minhop" else "sar,nosuch" for a in base] +
            ["--slurm-array", "2", "--work-dir", os.path.join(work, "w-badengine")], expect=2,
            env=env)
    assert "unknown engine 'nosuch'" in p.stderr, p.stderr
    assert not os.path.exists(os.path.join(work, "w-badengine")), "a work dir for a bad run"
    with open(os.path.join(work, "w-noslurm", "shard.sh")) as f:
        script = f.read()
    assert '--shard "$SLURM_ARRAY_TASK_ID/2"' in script, script

    # Study split by (failure count, seed) points: 1 + 3 + 3 points over 3 shards.
    study = [sar_route, "study", "-t", topo, "-e", "dfsssp,minhop", "--links", "0,1,3",
             "--seeds", "3", "--clusters", "4", "--progress", "off", "--threads", "1", "--json"]
    whole = json.loads(run(study + ["--html", os.path.join(work, "whole-study.html")]).stdout)
    wd = os.path.join(work, "split-study")
    for k in range(3):
        run(study + ["--html", os.path.join(work, "split-study.html"), "--shard", f"{k}/3",
                     "--work-dir", wd])
    merged = json.loads(run([sar_route, "merge", wd]).stdout)
    assert len(merged["points"]) == 7, merged
    assert without_times(merged) == without_times(whole), (merged, whole)
    with open(os.path.join(work, "whole-study.html")) as a, \
            open(os.path.join(work, "split-study.html")) as b:
        assert a.read() == b.read(), "the study's HTML report differs"
    print("study: 7 points, the fits and the HTML report equal after merging 3 shards")
    print("PASSED")


if __name__ == "__main__":
    main()
