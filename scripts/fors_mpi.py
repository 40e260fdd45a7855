"""Runs an MPI all-to-all under libsarfors and checks that each rank followed the published FORS
schedule. Shared by libsarfors' test (mpi/test/test_sarfors.py) and the day demo, which runs an
alltoall job's exchange on the schedule the switches were routed for (docs/fors.md).

Everything runs on this machine: Open MPI over shared memory, ranks given their "host" through
SAR_FORS_HOSTS_BY_RANK (one name per world rank), as libsarfors reads it."""

import os
import signal
import subprocess


def run(cmd, env=None, timeout=60):
    """Runs cmd in its own process group; kills that group (ours) on timeout.
    Returns (rc, stdout, stderr); rc 124 on timeout."""
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return 124, out, err + "\n(timed out)"
    return p.returncode, out, err


def mpi_env(base=None):
    """Open MPI's environment for runs on this machine only: shared memory and self, no UCX or
    verbs probing, oversubscribed; no SAR_FORS_* or LD_PRELOAD inherited from the caller."""
    env = dict(os.environ if base is None else base)
    env.update({"OMPI_MCA_btl": "self,vader", "OMPI_MCA_pml": "ob1",
                "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
                "OMPI_MCA_rmaps_base_oversubscribe": "1",
                # Debian 12's Open MPI 4.1.4 picks Bruck's alltoall for small blocks on 12+
                # ranks, which returns wrong data (and writes past the buffer) when send and
                # receive types differ (open-mpi/ompi#10488, fixed later), as in alltoall_check:
                # the reference uses pairwise exchange.
                "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
                "OMPI_MCA_coll_tuned_alltoall_algorithm": "2"})
    for k in ("SAR_FORS_SCHEDULE", "SAR_FORS_TRACE", "SAR_FORS_HOST", "SAR_FORS_HOSTS_BY_RANK",
              "LD_PRELOAD"):
        env.pop(k, None)
    return env


def mpirun_cmd(mpirun, contexts, program, lib=None, trace=None, flavor="openmpi"):
    """The mpirun command line. contexts: [(ranks, {env})...] (MPMD when several); each context's
    environment goes through env(1): mpirun's -x reaches the first context only, and a rank
    without the library would never join the others' decision. flavor: "openmpi" (orterun) or
    "mpich" (Hydra's mpiexec: runs as root and oversubscribes without being asked)."""
    cmd = [mpirun] + (["--allow-run-as-root", "--oversubscribe"] if flavor == "openmpi" else [])
    extra = {"LD_PRELOAD": lib} if lib else {}
    extra.update({"SAR_FORS_TRACE": trace} if trace else {})
    for i, (n, env) in enumerate(contexts):
        if i:
            cmd.append(":")
        cmd += ["-np", str(n), "env"] + [f"{k}={v}" for k, v in dict(env, **extra).items()]
        cmd += program
    return cmd


def parse_trace(path):
    """libsarfors' trace of one rank (SAR_FORS_TRACE), one entry per collective call:
    [{'head': str, 'fors': bool, 'generation', 'host', 'local': [ranks],
      'phases': [(p, send_to, recv_from, [send ranks], [recv ranks])]}...]"""
    calls = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "call":
                c = {"head": line.strip(), "fors": "fors" in w, "phases": [], "local": []}
                if c["fors"]:
                    c["generation"] = w[w.index("generation") + 1]
                    c["host"] = w[w.index("host") + 1]
                calls.append(c)
            elif w[0] == "local" and calls:
                calls[-1]["local"] = [int(x) for x in w[2:]]
            elif w[0] == "phase" and calls:
                r = w.index("recv")
                calls[-1]["phases"].append((int(w[1]), w[3], w[5],
                                            [int(x) for x in w[7:r]],
                                            [int(x) for x in w[r + 1:]]))
    return calls


def host_order(sar_route, job, schedule, host):
    """What libsar's reader (`sar-route fors-schedule --host`) says host does in each phase it
    is busy: ([(phase, send_to, recv_from)], error or None)."""
    rc, out, err = run([sar_route, "fors-schedule", "--job", str(job), "--schedule", schedule,
                        "--host", host])
    if rc != 0:
        return [], f"sar-route fors-schedule --host {host}: exit {rc} {err.strip()}"
    rows = []
    for line in out.splitlines()[2:]:
        p, to, _lid, frm = line.split()
        if to != "-" or frm != "-":
            rows.append((int(p), to, frm))
    return rows, None


def check_call(calls, hosts_by_rank, want_order):
    """Checks one collective call, traced by every rank (calls[r]), that followed a schedule.
    want_order(host) -> [(phase, send_to, recv_from)]. Returns [(ok, what)]."""
    ranks = len(calls)
    out = []
    same = all(c["host"] == hosts_by_rank[r] and
               [(p, s, f) for p, s, f, _, _ in c["phases"]] == want_order(hosts_by_rank[r])
               for r, c in enumerate(calls))
    out.append((same, "each rank's phase order = sar-route fors-schedule --host"))
    sends, recvs = [], set()
    for r, c in enumerate(calls):
        sends += [(-1, r, d) for d in c["local"]]
        recvs |= {(-1, s, r) for s in c["local"]}
        for p, _, _, to, frm in c["phases"]:
            sends += [(p, r, d) for d in to]
            recvs |= {(p, s, r) for s in frm}
    # ranks on one host exchange in the local step, and only there
    out.append((all(sorted(c["local"]) == [q for q in range(ranks)
                                           if hosts_by_rank[q] == hosts_by_rank[r]]
                    for r, c in enumerate(calls)),
                "each rank's local step = the ranks of its host"))
    pairs = sorted((s, d) for _, s, d in sends)
    out.append((pairs == [(s, d) for s in range(ranks) for d in range(ranks)],
                f"every ordered rank pair exchanged exactly once ({len(pairs)})"))
    out.append((set(sends) == recvs and len(sends) == len(recvs),
                "every message received in the phase it was sent"))
    return out


def run_job_exchange(mpirun, lib, program, sar_route, job, hosts, schedule, workdir,
                     timeout=180):
    """One rank per host of the job runs `program` (alltoall_check) under libsarfors with the
    job's published schedule. Returns (ok, summary line, [failed checks])."""
    os.makedirs(workdir, exist_ok=True)
    trace = os.path.join(workdir, "trace")
    for name in os.listdir(workdir):
        if name.startswith("trace."):
            os.unlink(os.path.join(workdir, name))
    by_rank = list(hosts)
    env = {"SAR_FORS_SCHEDULE": schedule, "SAR_FORS_HOSTS_BY_RANK": ",".join(by_rank)}
    cmd = mpirun_cmd(mpirun, [(len(by_rank), env)], [program, "--sizes", "1,100"], lib=lib,
                     trace=trace)
    rc, out, err = run(cmd, env=mpi_env(), timeout=timeout)
    if rc != 0 or "errors 0" not in out:
        return False, f"mpirun: exit {rc}", [(err or out).strip()[-400:]]
    per_rank = [parse_trace(f"{trace}.{r}") for r in range(len(by_rank))]
    fails, generation, phases = [], None, 0
    orders = {}

    def want(host):
        if host not in orders:
            orders[host], e = host_order(sar_route, job, schedule, host)
            if e:
                fails.append(e)
        return orders[host]

    counts = {len(c) for c in per_rank}
    if len(counts) != 1 or 0 in counts:
        return False, "trace", [f"calls traced per rank differ or none: {sorted(counts)}"]
    for i in range(len(per_rank[0])):
        calls = [c[i] for c in per_rank]
        if not all(c["fors"] for c in calls):
            fails.append(f"call {i + 1} fell back: {calls[0]['head']}")
            continue
        generation = calls[0]["generation"]
        phases = max(phases, max((p for c in calls for p, *_ in c["phases"]), default=-1) + 1)
        fails += [f"call {i + 1}: {what}" for ok, what in check_call(calls, by_rank, want)
                  if not ok]
    ok = not fails
    return ok, (f"{len(per_rank[0])} calls (MPI_Alltoall and MPI_Alltoallv), {len(by_rank)} "
                f"ranks, schedule generation {generation}, {phases} phases"), fails
