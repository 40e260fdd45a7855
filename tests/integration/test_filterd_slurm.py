#!/usr/bin/env python3
"""sar-filterd against a real SLURM (64 nodes, 4 leaves of 16, topology/tree), libslurm source:

  1. a job inside one leaf            -> no reroute
  2. a job spanning two leaves        -> exactly one mapping write + SIGUSR2, and the mapping on
                                         disk at the signal holds exactly that job's hosts as
                                         SLURM expands them (scontrol show hostnames)
  3. the same hosts under a new id    -> none (the daemon is paused across the swap, so it sees
                                         only before and after)
  4. cancelling it                    -> one, with an empty mapping
The stand-in for OpenSM is a separate process found through its pid file.
"""

import os

import filterd_it as it
from slurm_testbed import SlurmTestbed


def body(args):
    w = args.workdir
    # A SLURM work directory deeper than sun_path (107 bytes) on purpose: a deep CI checkout once
    # left slurmstepd unable to create its sockets, and every job was requeued as a launch failure.
    slurm_dir = os.path.join(w, "slurm-" + "d" * 100)
    with SlurmTestbed(slurm_dir, num_nodes=64, nodes_per_leaf=16) as sb:
        sockdir = sb.sockdir
        mapping = os.path.join(w, "jobs.map")
        opensm = it.FakeOpenSM(w, mapping)
        d = it.Filterd(args.sar_filterd, w, it.base_options(w, sb, opensm), sb.env())
        try:
            d.wait_polls(2)
            it.check(opensm.signals() == [], "reroute with no jobs at all")

            # 1. one leaf (n001-n004 are all on leaf00)
            single = sb.sbatch(nodelist="n[001-004]")
            sb.wait_state(single, "RUNNING")
            d.wait_polls(3)
            it.check(opensm.signals() == [], f"single-leaf job caused a reroute:\n{d.tail()}")

            # 2. two leaves: n013-n020 straddle leaf00/leaf01
            multi = sb.sbatch(nodelist="n[013-020]")
            sb.wait_state(multi, "RUNNING")
            hosts = sb.job_hosts(multi)
            it.check(len({sb.leaf_of(h) for h in hosts}) == 2, f"test setup: {hosts}")
            it.wait_for(lambda: len(opensm.signals()) >= 1, "a reroute for the multi-leaf job")
            d.wait_polls(3)
            sigs = opensm.signals()
            it.check(len(sigs) == 1, f"{len(sigs)} reroutes for one multi-leaf job")
            it.check(sigs[0] is not None, "SIGUSR2 before the mapping file existed")
            got = it.parse_mapping(sigs[0])
            it.check(got == {multi: sorted(hosts)},
                     f"mapping at the signal: {got}, want {{{multi}: {sorted(hosts)}}}")

            # 3. same hosts, new id
            d.pause()
            try:
                sb.scancel(multi)
                sb.wait_state(multi, "GONE")
                again = sb.sbatch(nodelist="n[013-020]")
                sb.wait_state(again, "RUNNING")
            finally:
                d.resume()
            it.check(again != multi, "SLURM reused the job id")
            d.wait_polls(4)
            it.check(len(opensm.signals()) == 1,
                     f"same hosts under a new job id caused a reroute:\n{d.tail()}")

            # 4. cancel
            sb.scancel(again)
            sb.wait_state(again, "GONE")
            it.wait_for(lambda: len(opensm.signals()) >= 2, "a reroute for the cancelled job")
            d.wait_polls(3)
            sigs = opensm.signals()
            it.check(len(sigs) == 2, f"{len(sigs)} reroutes after the cancel, want 2")
            it.check(it.parse_mapping(sigs[1]) == {}, f"mapping after cancel: {sigs[1]!r}")
            m = d.metrics()
            it.check(m.get("reroutes_total") == 2 and m.get("poll_errors_total") == 0,
                     f"metrics: {m}")
            it.check(d.alive(), "sar-filterd died")
        finally:
            d.stop()
            opensm.stop()
    it.check(not os.path.exists(sockdir), f"the test bed left {sockdir} behind")


if __name__ == "__main__":
    a = it.parse_args(__doc__)
    it.main(lambda: body(a))
