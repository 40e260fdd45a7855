#!/usr/bin/env python3
"""Split runs as SLURM job arrays on the real loopback SLURM (4 nodes; issue 39):

  1. `sar-route replay ... --slurm-array 4 --slurm-opt=--hold`: one held array of 4 tasks and a
     merge job that waits for it (afterok); task 2 is cancelled (scancel <id>_2) before the array
     is released, so shards 0, 1, 3 finish and shard 2 has no result;
  2. `sar-route merge DIR` refuses, naming shard 2; the first merge job never runs;
  3. `sar-route merge --resume DIR` submits only task 2 and a new merge job; once they ran, the
     merged CSV equals the unsplit run's (rows sorted, every column but the reroute time) and
     the merge job's JSON summary equals the unsplit run's (but times);
  4. `sar-route study ... --slurm-array 3` (points split by failure count and seed): the merge
     job's JSON equals the unsplit study's (but route_ms).
sbatch, scancel and scontrol are the test bed's (SLURM_CONF set); sar-route finds sbatch on PATH.
"""

import csv
import glob
import json
import os
import re
import shutil
import subprocess
import time

import sar_it as it
from slurm_testbed import SlurmTestbed

TIMES = {"reroute_ms", "wall_s", "reroute_ms_mean", "reroute_ms_p95", "route_ms"}


def without_times(x):
    if isinstance(x, dict):
        return {k: without_times(v) for k, v in x.items() if k not in TIMES}
    if isinstance(x, list):
        return [without_times(v) for v in x]
    return x


def csv_rows(path):
    rows = list(csv.reader(open(path)))
    keep = [i for i, name in enumerate(rows[0]) if name not in TIMES]
    return sorted([r[i] for i in keep] for r in rows[1:])


def run(argv, env, expect=0):
    p = subprocess.run([str(a) for a in argv], env=env, capture_output=True, text=True, timeout=120)
    it.check(p.returncode == expect,
             f"{' '.join(map(str, argv))}: exit {p.returncode}, want {expect}\n{p.stdout}{p.stderr}")
    return p


def wait_for(cond, what, timeout=60.0):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise it.CheckFailed(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.2)


def ids(stdout):
    array = re.search(r"as array job (\d+)", stdout)
    merge = re.search(r"merge as job (\d+)", stdout)
    it.check(merge is not None, f"no merge job id in:\n{stdout}")
    return (array.group(1) if array else None), merge.group(1)


def body(args):
    w = args.workdir
    sar_route = os.path.abspath(args.sar_route)
    topo = os.path.join(w, "ft.topo")
    it.run([sar_route, "gen", "-f", "ft2:4,6", "-o", topo], expect=0)
    swf = os.path.join(w, "kth.swf")
    shutil.copy(os.path.join(it.REPO, "tests", "data", "kth-sp2-slice.swf"), swf)
    replay = [sar_route, "replay", "-t", topo, "--swf", swf, "-e", "sar,dfsssp,minhop",
              "--days", "2", "--delta", "--threads", "1", "--json"]
    whole = json.loads(it.run(replay + ["--csv", os.path.join(w, "whole.csv")], expect=0).stdout)
    with SlurmTestbed(os.path.join(w, "slurm"), num_nodes=4, nodes_per_leaf=4) as sb:
        env = sb.env()
        # 1. Held, so one task can be cancelled before any runs.
        wd = os.path.join(w, "split")
        out = run(replay + ["--csv", os.path.join(w, "split.csv"), "--slurm-array", "4",
                            "--work-dir", wd, "--slurm-opt=--hold"], env).stdout
        it.check(f"work directory {wd}" in out and "shards 0-3 of 4" in out, out)
        array, merge1 = ids(out)
        sb.scancel(f"{array}_2")
        sb.scontrol(["release", array])
        done = [os.path.join(wd, f"shard-{k}.json") for k in (0, 1, 3)]
        wait_for(lambda: all(os.path.exists(p) for p in done), "shards 0, 1, 3")
        wait_for(lambda: sb.job_field(array, "%T") == "", "the array's end")
        it.check(not os.path.exists(os.path.join(wd, "shard-2.json")), "cancelled shard ran")
        # 2. A merge by hand names what is missing; the first merge job waits for ever.
        p = run([sar_route, "merge", wd], env, expect=4)
        it.check("shards 2 of 4 have no result" in p.stderr, p.stderr)
        it.check(sb.job_field(merge1, "%T") == "PENDING", "the merge ran without shard 2")
        sb.scancel(merge1)
        it.check(not os.path.exists(os.path.join(w, "split.csv")), "a report without shard 2")
        # 3. Resume: only task 2 again (held, as the stored --slurm-opt says), then the merge.
        out = run([sar_route, "merge", "--resume", wd], env).stdout
        it.check("1 of 4 shards missing" in out and "submitted shards 2 of 4" in out, out)
        array2, merge2 = ids(out)
        sb.scontrol(["release", f"{array2},{merge2}"])
        wait_for(lambda: sb.job_field(merge2, "%T") == "" and
                 os.path.exists(os.path.join(w, "split.csv")), "the resumed merge", 90)
        it.check(csv_rows(os.path.join(w, "whole.csv")) == csv_rows(os.path.join(w, "split.csv")),
                 "the merged CSV differs from the unsplit run's")
        it.check(len(csv_rows(os.path.join(w, "split.csv"))) == 3 * whole["events"], "rows")
        merged = json.loads(open(os.path.join(wd, "merge.out")).read())
        it.check(without_times(merged) == without_times(whole),
                 f"merged summary {merged}\nunsplit {whole}")
        outs = sorted(os.path.basename(p) for p in glob.glob(os.path.join(wd, "shard-*.out")))
        it.check(outs == ["shard-0.out", "shard-1.out", "shard-2.out", "shard-3.out"], outs)
        print(f"replay: {whole['events']} events x 3 engines equal after 4 array tasks, one "
              "cancelled and resumed")

        # 4. The study, split by (failure count, seed) points over 3 array tasks.
        study = [sar_route, "study", "-t", topo, "-e", "dfsssp,minhop", "--links", "0,1,3",
                 "--seeds", "3", "--clusters", "4", "--threads", "1", "--json"]
        whole_study = json.loads(it.run(study, expect=0).stdout)
        wd = os.path.join(w, "split-study")
        out = run(study + ["--slurm-array", "3", "--work-dir", wd], env).stdout
        _, merge = ids(out)
        merge_out = os.path.join(wd, "merge.out")
        wait_for(lambda: sb.job_field(merge, "%T") == "" and os.path.exists(merge_out) and
                 open(merge_out).read().rstrip().endswith("}"), "the study's merge", 90)
        merged = json.loads(open(merge_out).read())
        it.check(len(merged["points"]) == 7, merged)
        it.check(without_times(merged) == without_times(whole_study), "the merged study differs")
        print("study: 7 points over 3 array tasks equal the unsplit study")


if __name__ == "__main__":
    a = it.parse_args(__doc__)
    it.main(lambda: body(a))
