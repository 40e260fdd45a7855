#!/usr/bin/env python3
"""sar-filterd's three SLURM job sources agree with SLURM itself. With a real SLURM (32 nodes,
2 leaves of 16) running a one-leaf job, two multi-leaf jobs and a pending one, `sar-filterd
--once` with source libslurm, squeue (--json) and slurmrestd (UNIX socket) must each write a
mapping holding exactly the multi-leaf jobs, each with the hosts `scontrol show hostnames`
gives for it; `--dry-run` must say so and write nothing; and with the controller gone each must
fail (exit 1) without writing anything.

The reply shapes of other SLURM versions, made from this SLURM's own `squeue --json` by a
wrapper: SLURM >= 23.02 prints job_state as an array and time_limit as an object (same
mapping expected); a field of a wrong type (job_state a number, nodes an array, partition null)
is a failed poll naming the field and the job: exit 1, no mapping, no crash.
"""

import json
import os
import shutil
import subprocess
import sys

import filterd_it as it
from filterd_process import write_config
from slurm_testbed import SlurmTestbed


# Runs the real squeue and rewrites its reply: "array" as SLURM >= 23.02 prints it, otherwise
# the field named by mode, of job {target}, set to {value} (a type SLURM never prints there).
SQUEUE_WRAPPER = """#!{python}
import json, subprocess, sys
p = subprocess.run(["{real}", *sys.argv[1:]], capture_output=True, text=True)
doc = json.loads(p.stdout)
for j in doc["jobs"]:
    if "{mode}" == "array":
        j["job_state"] = [j["job_state"]]
        t = j.get("time_limit")
        if isinstance(t, int):
            j["time_limit"] = {{"set": True, "infinite": t >= 0xFFFFFFFE, "number": t}}
    elif j["job_id"] == {target}:
        j["{mode}"] = json.loads({value})
sys.stdout.write(json.dumps(doc))
sys.exit(p.returncode)
"""


def run_once(args, w, sb, source, extra, name, flags=()):
    d = os.path.join(w, name)
    os.makedirs(d)
    opts = {
        "source": source, "slurm_conf": sb.conf, "topology_conf": sb.topology_conf,
        "mapping_file": os.path.join(d, "jobs.map"), "trigger": "none",
        "state_dir": os.path.join(d, "state"), "poll_retries": 0, "source_timeout_s": 10,
        **extra,
    }
    cfg = os.path.join(d, "filterd.yaml")
    write_config(cfg, opts)
    p = subprocess.run([args.sar_filterd, "--config", cfg, "--once", *flags], env=sb.env(),
                       capture_output=True, text=True, timeout=60)
    mapping = opts["mapping_file"]
    text = open(mapping).read() if os.path.exists(mapping) else None
    return p, text


def body(args):
    w = args.workdir
    with SlurmTestbed(os.path.join(w, "slurm"), num_nodes=32, nodes_per_leaf=16) as sb:
        sock = sb.start_slurmrestd()
        single = sb.sbatch(nodelist="n[001-004]")
        multi_a = sb.sbatch(nodelist="n[010-020]", time_limit=30)
        multi_b = sb.sbatch(nodelist="n[005-008],n[029-030]")
        for j in (single, multi_a, multi_b):
            sb.wait_state(j, "RUNNING")
        pending = sb.sbatch(nodes=32)  # cannot start while the others run
        it.check(sb.job_field(pending, "%T") == "PENDING", "test setup: job not pending")
        want = {j: sorted(sb.job_hosts(j)) for j in (multi_a, multi_b)}

        sources = {
            "slurm": {},
            "squeue": {},
            "slurmrestd": {"slurmrestd_socket": sock},
        }
        for source, extra in sources.items():
            p, text = run_once(args, w, sb, source, extra, f"up-{source}")
            it.check(p.returncode == 0, f"{source}: exit {p.returncode}: {p.stderr[-2000:]}")
            it.check(text is not None, f"{source}: no mapping written:\n{p.stderr[-2000:]}")
            got = it.parse_mapping(text)
            it.check(got == want, f"{source}: mapping {got}, want {want}")

        # --dry-run: says what it would hand over, writes and signals nothing.
        p, text = run_once(args, w, sb, "slurm", {}, "dry-run", flags=["--dry-run"])
        it.check(p.returncode == 0 and "dry run: would write 2 jobs" in p.stderr,
                 f"--dry-run: exit {p.returncode}: {p.stderr[-1500:]}")
        it.check(text is None and not os.path.exists(os.path.join(w, "dry-run", "state")),
                 "--dry-run wrote files")

        # Other SLURM versions' shapes, through a wrapper around the real squeue.
        real_squeue = shutil.which("squeue", path=sb.env().get("PATH", os.defpath))
        it.check(real_squeue is not None, "no squeue on PATH")
        for name, edit in [("array", None), ("job_state", 3), ("nodes", ["n010"]),
                           ("partition", None)]:
            wrapper = os.path.join(w, f"squeue-{name}")
            with open(wrapper, "w") as f:
                f.write(SQUEUE_WRAPPER.format(python=sys.executable, real=real_squeue, mode=name,
                                              value=repr(json.dumps(edit)), target=multi_a))
            os.chmod(wrapper, 0o755)
            p, text = run_once(args, w, sb, "squeue", {"squeue_path": wrapper}, f"shape-{name}")
            if name == "array":
                it.check(p.returncode == 0, f"23.02 shape: exit {p.returncode}: {p.stderr[-2000:]}")
                got = it.parse_mapping(text) if text is not None else None
                it.check(got == want, f"23.02 shape: mapping {got}, want {want}")
                continue
            it.check(p.returncode == 1, f"{name} of a wrong type: exit {p.returncode} "
                     f"(1 = failed poll; 134 = the old crash): {p.stderr[-1500:]}")
            it.check(text is None, f"{name} of a wrong type: a mapping was written")
            it.check(f"job {multi_a}: '{name}'" in p.stderr and "no reroute on partial data"
                     in p.stderr, f"{name}: error does not name field and job: {p.stderr[-1500:]}")

        sb.kill_controller()
        for source, extra in sources.items():
            p, text = run_once(args, w, sb, source, extra, f"down-{source}")
            it.check(p.returncode == 1, f"{source} with the controller down: exit {p.returncode}")
            it.check(text is None, f"{source}: wrote a mapping from a failed poll")
            it.check("no reroute on partial data" in p.stderr, f"{source}: {p.stderr[-1000:]}")


if __name__ == "__main__":
    a = it.parse_args(__doc__)
    it.main(lambda: body(a))
