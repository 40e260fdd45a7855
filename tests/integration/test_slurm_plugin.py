#!/usr/bin/env python3
"""The SLURM side of sar (slurm-plugin/, docs/slurm.md) on a real SLURM: 128 nodes, 8 leaves of
16, with the SPANK plugin sar_pattern.so (plugstack.conf), JobSubmitPlugins=lua with our
job_submit.lua, and PrologSlurmctld / EpilogSlurmctld running sar-notify (through a wrapper that
passes the socket and records each call). sar-filterd polls every 600 s, so only the hook can
explain a cycle soon after a job starts.

  1. --sar-pattern=bogus        -> sbatch refuses the job with the plugin's message
  2. --sar-pattern=alltoall on  -> admin_comment "sar-pattern=alltoall" (scontrol, squeue --json),
     a two-leaf job                the hook sees SPANK_SAR_PATTERN, one filterd cycle within 1 s
                                   of the hook (latency printed), one SIGUSR2 whose mapping holds
                                   the job's hosts (scontrol show hostnames) with "alltoall";
                                   an admin's AdminComment update keeps the pattern, a bad
                                   pattern in one is refused
  2b. batch jobs that print     -> an alltoall job's task has SAR_FORS_SCHEDULE=<mapping>.fors.<id>
      $SAR_FORS_SCHEDULE            (plugstack.conf gives mapping=...); a default job has none
  3. a 100-task array at once   -> 100 hook requests, at most a few cycles (printed)
  4. the job ends               -> EpilogSlurmctld's job-end: a reroute with an empty mapping;
     the array is cancelled        100 job-end requests, again at most a few cycles
  5. filterd frozen (SIGSTOP),  -> jobs still start, the hook exits 0 (within its 500 ms
     then stopped                  deadline when frozen) and logs why filterd was not told
"""

import json
import math
import os
import re
import time

import filterd_it as it
import sar_it
from slurm_testbed import SlurmTestbed
from testbed_common import socket_path

MAX_BURST_CYCLES = 5
# The coalescer polls at the latest 5 windows (1 s) after the first request it has not
# answered, so hooks spread over T seconds (slurmctld runs them slower on a loaded machine) may
# take one cycle per second of spread; without coalescing a burst would take 100.
MAX_DELAY_S = 1.0


def burst_cycle_limit(calls):
    """Cycles a coalesced burst of hook calls may take: MAX_BURST_CYCLES, or one per second of
    the calls' spread and two more (the first and the last) when they came slower."""
    spread = max(c[0] for c in calls) - min(c[0] for c in calls)
    return max(MAX_BURST_CYCLES, math.ceil(spread / MAX_DELAY_S) + 2)


def parse_args():
    def extra(ap):
        ap.add_argument("--sar-filterd", required=True)
        ap.add_argument("--sar-notify", required=True)
        ap.add_argument("--spank-plugin", required=True)
        ap.add_argument("--job-submit-lua", required=True)
    return sar_it.parse_args(__doc__, need_sar_route=False, extra=extra)


def write_hook(workdir, notify, sock):
    """The PrologSlurmctld/EpilogSlurmctld wrapper: sar-notify with our socket, and one line per
    call: <start> <end> <job> <context> <exit status> <SPANK_SAR_PATTERN>."""
    path = os.path.join(workdir, "sar-hook.sh")
    with open(path, "w") as f:
        f.write(f"""#!/bin/sh
t0=$(date +%s.%N)
{notify} --socket {sock} 2>>{workdir}/notify.err
rc=$?
echo "$t0 $(date +%s.%N) $SLURM_JOB_ID $SLURM_SCRIPT_CONTEXT $rc ${{SPANK_SAR_PATTERN:--}}" \\
  >>{workdir}/hooks.log
exit $rc
""")
    os.chmod(path, 0o755)
    return path


def hook_calls(workdir):
    """[(start, end, job, context, rc, pattern)] from the wrapper's log."""
    try:
        with open(os.path.join(workdir, "hooks.log")) as f:
            rows = [line.split() for line in f if line.strip()]
    except FileNotFoundError:
        return []
    return [(float(r[0]), float(r[1]), r[2], r[3], int(r[4]), r[5]) for r in rows]


def prologs(workdir, job):
    return [c for c in hook_calls(workdir) if c[2] == job and c[3] == "prolog_slurmctld"]


def body(args):
    w = args.workdir
    sock = socket_path(w, "control.sock")
    hook = write_hook(w, os.path.abspath(args.sar_notify), sock)
    with SlurmTestbed(os.path.join(w, "slurm"), num_nodes=128, nodes_per_leaf=16,
                      spank_plugin=args.spank_plugin, job_submit_lua=args.job_submit_lua,
                      prolog_slurmctld=hook, epilog_slurmctld=hook,
                      spank_args=f"mapping={os.path.join(w, 'jobs.map')}") as sb:
        mapping = os.path.join(w, "jobs.map")
        opensm = it.FakeOpenSM(w, mapping)
        options = it.base_options(w, sb, opensm)
        options.update(poll_interval_s=600, event_coalesce_ms=200, control_socket=sock)
        d = it.Filterd(args.sar_filterd, w, options, sb.env())
        try:
            d.wait_polls(1)
            it.wait_for(lambda: os.path.exists(sock), "filterd's control socket")

            # 1. a bad value is refused on the submit host
            p = sb.sbatch_run(nodes=1, extra_args=["--sar-pattern=bogus"])
            it.check(p.returncode != 0, f"sbatch accepted --sar-pattern=bogus: {p.stdout}")
            it.check("invalid --sar-pattern 'bogus'" in p.stderr,
                     f"sbatch's message lacks the plugin's: {p.stderr!r}")
            it.check(sb.run(["squeue", "-h", "-o", "%i"]).stdout.strip() == "",
                     "a job exists after the refused submission")

            # 2. alltoall across two leaves: the hook makes filterd look at once
            polls0 = d.metrics()["polls_total"]
            job = sb.sbatch(nodelist="n[013-020]", extra_args=["--sar-pattern=alltoall"])
            it.wait_for(lambda: len(opensm.signals()) >= 1, "a reroute for the alltoall job", 10)
            sig_t = _signal_times(opensm)[0]
            calls = prologs(w, job)
            it.check(len(calls) == 1, f"prolog calls for job {job}: {calls}")
            start, end, _, _, rc, pattern = calls[0]
            latency = sig_t - start
            print(f"hook -> reroute latency: {latency * 1e3:.0f} ms (hook itself "
                  f"{(end - start) * 1e3:.0f} ms, event_coalesce_ms 200)", flush=True)
            it.check(rc == 0 and pattern == "alltoall", f"prolog call: {calls[0]}")
            it.check(0 <= latency < 1.0, f"reroute {latency:.3f} s after the hook, want < 1 s")
            time.sleep(0.5)  # nothing else may poll: the interval is 600 s
            m = d.metrics()
            it.check(m["polls_total"] - polls0 == 1 and m["control_requests_total"] >= 1,
                     f"want exactly one hook-driven cycle: {m}")
            hosts = sb.job_hosts(job)
            it.check(len({sb.leaf_of(h) for h in hosts}) == 2, f"test setup: {hosts}")
            got = it.parse_mapping_patterns(opensm.signals()[0])
            it.check(got == {job: (sorted(hosts), "alltoall")},
                     f"mapping at the signal: {got}, want {job}: {sorted(hosts)} alltoall")
            show = sb.scontrol(["show", "job", job]).stdout
            it.check("AdminComment=sar-pattern=alltoall" in show, f"scontrol show job:\n{show}")
            js = json.loads(sb.run(["squeue", "--json"]).stdout)
            comments = {str(j["job_id"]): j.get("admin_comment") for j in js["jobs"]}
            it.check(comments.get(job) == "sar-pattern=alltoall", f"squeue --json: {comments}")
            # An admin's AdminComment update keeps the pattern (job_submit.lua's
            # slurm_job_modify) and its other text; a bad pattern in it is refused.
            sb.scontrol(["update", f"JobId={job}", "AdminComment=checked by ops"])
            show = sb.scontrol(["show", "job", job]).stdout
            it.check("AdminComment=checked by ops,sar-pattern=alltoall" in show,
                     f"AdminComment update lost the pattern:\n{show}")
            bad = sb.scontrol(["update", f"JobId={job}", "AdminComment=sar-pattern=bogus"],
                              check=False)
            show = sb.scontrol(["show", "job", job]).stdout
            it.check(bad.returncode != 0 and "sar-pattern=alltoall" in show,
                     f"AdminComment=sar-pattern=bogus: exit {bad.returncode}\n{show}")

            # 2b. The job's tasks learn where the router publishes their FORS schedule.
            show_env = "echo SAR_FORS_SCHEDULE=${SAR_FORS_SCHEDULE:-unset}"
            a2a = sb.sbatch(nodes=1, extra_args=["--sar-pattern=alltoall"], command=show_env)
            plain = sb.sbatch(nodes=1, command=show_env)
            outs = {j: os.path.join(sb.workdir, "jobs", f"{j}.out") for j in (a2a, plain)}

            def printed():
                return all(os.path.exists(p) and open(p).read().strip() for p in outs.values())
            it.wait_for(printed, "the two printing jobs' output", 20)
            got = {j: open(p).read().strip() for j, p in outs.items()}
            it.check(got[a2a] == f"SAR_FORS_SCHEDULE={mapping}.fors.{a2a}",
                     f"alltoall job's environment: {got[a2a]!r}")
            it.check(got[plain] == "SAR_FORS_SCHEDULE=unset",
                     f"default job's environment: {got[plain]!r}")
            print(f"alltoall job {a2a}: {got[a2a]}", flush=True)
            # Both end before the burst below, whose counts must not see them.
            it.wait_for(lambda: len([c for c in hook_calls(w) if c[2] in (a2a, plain)
                                     and c[3] == "epilog_slurmctld"]) == 2,
                        "the printing jobs' epilogs", 20)
            time.sleep(1.5)  # their coalesced poll
            others = (job, a2a, plain)

            # 3. 100 jobs at once (one array submission): a few cycles, not 100
            m0 = d.metrics()
            array = sb.sbatch(nodes=1, extra_args=["--array=1-100"])
            t_submit = time.time()

            def array_prologs():
                return [c for c in hook_calls(w)
                        if c[3] == "prolog_slurmctld" and c[2] not in others]
            it.wait_for(lambda: len(array_prologs()) >= 100, "100 array task prologs", 60)
            want = m0["control_requests_total"] + 100
            it.wait_for(lambda: d.metrics()["control_requests_total"] >= want,
                        "100 hook requests at filterd", 10)
            time.sleep(1.5)  # the last coalesced poll is due at most 5 windows (1 s) later
            m1 = d.metrics()
            cycles = m1["polls_total"] - m0["polls_total"]
            calls = array_prologs()
            spread = max(c[0] for c in calls) - min(c[0] for c in calls)
            print(f"burst: 100 array tasks, prologs over {spread:.2f} s (first "
                  f"{min(c[0] for c in calls) - t_submit:.2f} s after sbatch), "
                  f"{m1['control_requests_total'] - m0['control_requests_total']:.0f} hook "
                  f"requests -> {cycles:.0f} filterd cycles", flush=True)
            it.check(all(c[4] == 0 for c in calls), "a prolog failed")
            limit = burst_cycle_limit(calls)
            it.check(1 <= cycles <= limit,
                     f"{cycles} cycles for the burst (limit {limit}):\n{d.tail()}")
            it.check(len(opensm.signals()) == 1, "single-node jobs caused a reroute")
            it.check(m1["running_jobs"] == 101, f"filterd saw {m1['running_jobs']} running jobs")

            # 4. the alltoall job ends: EpilogSlurmctld -> job-end -> reroute, empty mapping
            sb.scancel(job)
            it.wait_for(lambda: len(opensm.signals()) >= 2, "a reroute after the job ended", 10)
            it.check(it.parse_mapping_patterns(opensm.signals()[1]) == {},
                     "mapping after the end is not empty")
            ends = [c for c in hook_calls(w) if c[2] == job and c[3] == "epilog_slurmctld"]
            it.check(len(ends) == 1 and ends[0][4] == 0, f"epilog calls: {ends}")

            # ... and the array's end is a burst of job-end requests: a few cycles again
            m0 = d.metrics()
            sb.scancel(array)

            def array_epilogs():
                return [c for c in hook_calls(w)
                        if c[3] == "epilog_slurmctld" and c[2] not in others]
            it.wait_for(lambda: len(array_epilogs()) >= 100, "100 array task epilogs", 60)
            time.sleep(1.5)
            cycles = d.metrics()["polls_total"] - m0["polls_total"]
            print(f"end burst: 100 job-end requests -> {cycles:.0f} filterd cycles", flush=True)
            it.check(all(c[4] == 0 for c in array_epilogs()), "an epilog failed")
            limit = burst_cycle_limit(array_epilogs())
            it.check(1 <= cycles <= limit, f"{cycles} cycles for the end burst (limit {limit})")

            # 5. filterd frozen, then stopped: jobs start, the hook exits 0 and logs
            d.pause()
            try:
                frozen = sb.sbatch(nodes=1)
                sb.wait_state(frozen, "RUNNING")
                it.wait_for(lambda: prologs(w, frozen), "the prolog of the job (filterd frozen)")
            finally:
                d.resume()
            start, end, _, _, rc, _ = prologs(w, frozen)[0]
            print(f"filterd frozen: hook exit {rc} after {(end - start) * 1e3:.0f} ms", flush=True)
            it.check(rc == 0 and end - start < 1.5, f"hook with filterd frozen: {rc}, "
                     f"{end - start:.2f} s")
            it.check(d.stop() == 0, "sar-filterd did not exit cleanly")
            gone = sb.sbatch(nodes=1)
            sb.wait_state(gone, "RUNNING")
            it.wait_for(lambda: prologs(w, gone), "the prolog of the job (filterd stopped)")
            rc = prologs(w, gone)[0][4]
            it.check(rc == 0, f"hook exit {rc} with filterd stopped")
            with open(os.path.join(w, "notify.err")) as f:
                err = f.read()
            for j in (frozen, gone):
                it.check(f"job {j}: sar-filterd not told" in err, f"no log for job {j}:\n{err}")
            with open(os.path.join(sb.workdir, "log", "slurmctld.log"), errors="replace") as f:
                ctld = f.read()
            failed = re.findall(r".*(?:prolog|epilog).*exit status.*", ctld)
            it.check(not failed, f"slurmctld logged failed hooks: {failed[:3]}")
        finally:
            d.stop()
            opensm.stop()


def _signal_times(opensm):
    with open(opensm.record) as f:
        return [json.loads(line)["t"] for line in f if line.strip()]


if __name__ == "__main__":
    a = parse_args()
    it.main(lambda: body(a))
