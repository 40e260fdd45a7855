#!/usr/bin/env python3
"""libsarfors in real Open MPI (shared memory, mpirun --oversubscribe) or MPICH (Hydra) on real
FORS schedules.

Schedules come from libsar's routing pass on FT(2;4,4): `sar-route route --schedule-out` where
sar-route has it, else fors_schedule_gen (engine sar, libsar's schedule writer); the "none" file
then from the same job on a 3-level fat-tree, else written by hand in the documented form.
Hosts are faked per rank by SAR_FORS_HOSTS_BY_RANK.
- MPI_Alltoall / MPI_Alltoallv (a strided send type, zero counts, gaps; 1, 100 and 5000 pairs
  of ints per block) give byte-identical results with and without the library, for 2-16 ranks
  and 1-4 ranks per host (uneven too); alltoall_check also checks every element itself;
- each rank's traced partner order, phase by phase, equals what `sar-route fors-schedule
  --host` (libsar's reader) prints for its host, and over all ranks every ordered rank pair is
  exchanged exactly once per call, received in the phase it was sent;
- a schedule replaced between two calls is followed from the second call on;
- a sub-communicator that lacks some of the job's hosts uses the library's own algorithm;
- a "none" schedule, a missing file, a corrupt file, a FIFO and ranks that read different
  schedules all fall back (trace says why) with identical results, none hangs (timeout).
"""

import argparse
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import fors_mpi  # noqa: E402  (scripts/fors_mpi.py: shared with the day demo)

run = fors_mpi.run

FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


class Mpi:
    def __init__(self, args):
        self.args = args
        self.env = fors_mpi.mpi_env()

    def run(self, contexts, prog_args, preload, trace=None):
        """contexts: [(ranks, {env})...] (MPMD when several). Returns (rc, stdout, stderr)."""
        cmd = fors_mpi.mpirun_cmd(self.args.mpirun, contexts, [self.args.check] + prog_args,
                                  lib=self.args.lib if preload else None, trace=trace,
                                  flavor=self.args.flavor)
        t0 = time.monotonic()
        res = run(cmd, env=self.env)
        print(f"     mpirun: {sum(n for n, _ in contexts)} ranks, {time.monotonic() - t0:.1f} s")
        return res


def host_order(args, job, schedule, host, cache={}):
    """What libsar's reader says host does per phase: [(phase, send_to, recv_from)], busy only."""
    key = (schedule, host)
    if key not in cache:
        rows, err = fors_mpi.host_order(args.sar_route, job, schedule, host)
        check(err is None, err or f"sar-route fors-schedule --host {host}")
        cache[key] = rows
    return cache[key]


def check_traces(args, trace, ranks, hosts_by_rank, expect):
    """expect: one (job, schedule path, generation) per call (None: must fall back)."""
    per_rank = [fors_mpi.parse_trace(f"{trace}.{r}") for r in range(ranks)]
    ok = all(len(c) == len(expect) for c in per_rank)
    check(ok, f"every rank traced {len(expect)} calls ({[len(c) for c in per_rank]})")
    if not ok:
        return
    for i, want in enumerate(expect):
        calls = [per_rank[r][i] for r in range(ranks)]
        if want is None:
            check(all(not c["fors"] for c in calls), f"call {i + 1}: all ranks fell back "
                  f"({calls[0]['head']})")
            continue
        job, schedule, generation = want
        check(all(c["fors"] and c["generation"] == generation for c in calls),
              f"call {i + 1}: every rank follows generation {generation} ({calls[0]['head']})")
        for ok, what in fors_mpi.check_call(
                calls, hosts_by_rank, lambda h: host_order(args, job, schedule, h)):
            check(ok, f"call {i + 1}: {what}")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    for a in ("workdir", "lib", "check", "gen", "sar_route", "mpirun"):
        ap.add_argument("--" + a.replace("_", "-"), required=a != "mpirun", default="")
    ap.add_argument("--flavor", choices=("openmpi", "mpich"), default="openmpi",
                    help="the MPI library --lib and --check were built for")
    args = ap.parse_args()
    if not args.mpirun or not os.access(args.mpirun, os.X_OK):
        print("SKIP: mpirun not found (Debian: openmpi-bin libopenmpi-dev, mpich libmpich-dev; "
              "scripts/install-deps.sh installs them)")
        return 77
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    w = args.workdir
    mpi = Mpi(args)
    topo, degraded = os.path.join(w, "ft.topo"), os.path.join(w, "ft-degraded.topo")
    rc, _, err = run([args.sar_route, "gen", "--fabric", "ft2:4,4", "-o", topo])
    check(rc == 0, f"sar-route gen FT(2;4,4) {err.strip()}")
    # leaf 0 loses its cable to spine 0 (leaf port M0 + 1): its 4 hosts share 3 uplinks
    rc, _, err = run([args.sar_route, "gen", "--fabric", "ft2:4,4", "--fail-link", "leaf000:5",
                      "-o", degraded])
    check(rc == 0, f"sar-route gen FT(2;4,4) without leaf000:5 {err.strip()}")

    # `sar-route route --schedule-out` where this sar-route has it (the plugin's publisher,
    # offline), else fors_schedule_gen (the same routing pass and writer).
    _, route_help, _ = run([args.sar_route, "route", "--help"])
    schedule_out = "--schedule-out" in route_help

    def publish(name, topology, hosts):
        d = os.path.join(w, name)
        os.makedirs(d, exist_ok=True)
        mapping = os.path.join(d, "jobs.map")
        with open(mapping, "w") as f:
            f.writelines(f"{h} 4712 alltoall\n" for h in hosts)
        if schedule_out:
            cmd = [args.sar_route, "route", "--engine", "sar", "--topology", topology, "--jobs",
                   mapping, "-o", os.path.join(d, "tables.lfts"), "--schedule-out", mapping]
        else:
            cmd = [args.gen, topology, mapping, "1795377601"]
        rc, out, err = run(cmd)
        path = mapping + ".fors.4712"
        check(rc == 0 and os.path.exists(path),
              f"{name}: schedule published by {os.path.basename(cmd[0])} "
              f"({out.strip()} {err.strip()[-200:]})")
        with open(path) as f:
            head = f.read().splitlines()[1].split()
        return path, head[head.index("generation") + 1]

    h = [f"h{i:05d}" for i in range(16)]
    sizes = ["--sizes", "1,100,5000"]
    calls_per_round = 6
    # (name, hosts, ranks per host, rank order "rr" round-robin or "block")
    configs = [
        ("2x1", [h[0], h[4]], [1, 1], "rr"),
        ("3uneven", [h[1], h[5], h[9]], [2, 1, 3], "rr"),
        ("4x4", [h[0], h[1], h[4], h[5]], [4, 4, 4, 4], "rr"),
        ("8x2", h[0:8], [2] * 8, "block"),
        ("16x1", h, [1] * 16, "rr"),
    ]
    for name, hosts, per_host, order in configs:
        if order == "block":
            by_rank = [hh for hh, k in zip(hosts, per_host) for _ in range(k)]
        else:
            left, by_rank = list(per_host), []
            while any(left):
                for i, hh in enumerate(hosts):
                    if left[i]:
                        by_rank.append(hh)
                        left[i] -= 1
        ranks = len(by_rank)
        path, gen = publish(name, topo, hosts)
        # What the expectations are read from (the run may replace path). Not named
        # "<mapping>.fors.*": publishing removes such files of jobs it does not know.
        kept = os.path.join(os.path.dirname(path), "expected-schedule")
        shutil.copy(path, kept)
        env = {"SAR_FORS_SCHEDULE": path, "SAR_FORS_HOSTS_BY_RANK": ",".join(by_rank)}
        extra = []
        expect = [("4712", kept, gen)] * calls_per_round
        if name == "8x2":
            # the same job on the degraded tree: another schedule, given between two rounds;
            # then each half of the ranks (4 hosts of 8): not the job's communicator
            new_path, new_gen = publish(name + "-degraded", degraded, hosts)
            keep = os.path.join(os.path.dirname(new_path), "expected-schedule")
            shutil.copy(new_path, keep)
            check(new_gen != gen and any(host_order(args, "4712", keep, x) !=
                                         host_order(args, "4712", kept, x) for x in hosts),
                  f"{name}: the degraded tree's schedule differs ({gen} -> {new_gen})")
            extra = ["--change", new_path, "--split"]
            expect += [("4712", keep, new_gen)] * calls_per_round + [None] * calls_per_round
        trace = os.path.join(w, name, "trace")
        rc0, ref, err0 = mpi.run([(ranks, env)], sizes + extra, preload=False)
        check(rc0 == 0, f"{name}: {ranks} ranks without the library: exit {rc0} {err0[-300:]}")
        if name == "8x2":  # the reference run moved the new schedule in: publish them again
            path, _ = publish(name, topo, hosts)
            new_path, _ = publish(name + "-degraded", degraded, hosts)
        rc1, out, err1 = mpi.run([(ranks, env)], sizes + extra, preload=True, trace=trace)
        check(rc1 == 0, f"{name}: {ranks} ranks with the library: exit {rc1} {err1[-300:]}")
        check(out == ref and "errors 0" in out,
              f"{name}: results byte-identical with and without the library")
        check_traces(args, trace, ranks, by_rank, expect)

    # Fallbacks: 4 ranks on 4 hosts of two leaves, against the run without the library.
    hosts = [h[0], h[1], h[4], h[5]]
    by_rank = [h[0], h[4], h[1], h[5]]
    path, gen = publish("fallback", topo, hosts)
    base = {"SAR_FORS_HOSTS_BY_RANK": ",".join(by_rank)}
    rc, ref, err = mpi.run([(4, dict(base, SAR_FORS_SCHEDULE=path))], sizes, preload=False)
    check(rc == 0, f"fallback reference run: exit {rc} {err[-300:]}")
    d = os.path.join(w, "fallback")
    if schedule_out:
        # a real "none" file: the same job on a 3-level fat-tree gets no FORS
        three = os.path.join(w, "kary.topo")
        rc, _, err = run([args.sar_route, "gen", "--fabric", "kary:4,3", "-o", three])
        check(rc == 0, f"sar-route gen kary:4,3 {err.strip()}")
        none, _ = publish("none", three, hosts)
    else:  # the documented form, by hand
        none = os.path.join(d, "none")
        with open(none, "w") as f:
            f.write("# sar-fors-schedule 1\n"
                    "# job 4712 epoch 1795377601 generation none phases 0 lower_bound 0 hosts 4\n"
                    "# none: fabric is not a 2-level fat-tree\nphase,src,dst,dlid\n")
    corrupt = os.path.join(d, "corrupt")
    with open(path) as f:
        text = f.read()
    with open(corrupt, "w") as f:
        f.write(text[:text.rstrip("\n").rfind("\n") + 1])  # the last row missing
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    # the same job's schedule on the degraded tree: what ranks would see if the file changed
    # between their reads
    other, other_gen = publish("fallback-other", degraded, hosts)
    cases = [
        ("none", [(4, {"SAR_FORS_SCHEDULE": none})], "job 4712: no FORS schedule: "),
        ("missing", [(4, {"SAR_FORS_SCHEDULE": os.path.join(d, "absent")})], "no schedule file"),
        ("corrupt", [(4, {"SAR_FORS_SCHEDULE": corrupt})], corrupt + ": host h0000"),
        ("fifo", [(4, {"SAR_FORS_SCHEDULE": fifo})], "not a regular file (refused)"),
        ("mixed", [(2, {"SAR_FORS_SCHEDULE": path}), (2, {"SAR_FORS_SCHEDULE": other})],
         "the ranks do not all have this schedule"),
    ]
    check(other_gen != gen, f"two generations for the mixed case: {gen}, {other_gen}")
    for name, contexts, why in cases:
        trace = os.path.join(d, "trace-" + name)
        contexts = [(n, dict(base, **e)) for n, e in contexts]
        rc, out, err = mpi.run(contexts, sizes, preload=True, trace=trace)
        check(rc == 0 and out == ref, f"{name}: falls back, same results (exit {rc}) "
              f"{err[-300:] if rc else ''}")
        check_traces(args, trace, 4, by_rank, [None] * calls_per_round)
        firsts = []
        for r in range(4):
            with open(f"{trace}.{r}") as f:
                firsts.append(f.readline().strip())
        said = [x for x in firsts if why in x]
        check(said, f"{name}: a rank's trace says why: {said[0] if said else firsts}")
    print("FAILED: " + "; ".join(FAILURES) if FAILURES else "all checks passed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
