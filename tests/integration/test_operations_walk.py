#!/usr/bin/env python3
"""docs/operations.md walked as a new administrator would, on the test beds (issue 21).

Every command the page shows (lines of its ```sh blocks, and `program ...` spans in the text) is
classified below: RUN steps execute it, with its paths moved into this test's directory, against
the binaries and configs of a DESTDIR install made with the page's own command; SKIP entries say
why the machine cannot (systemd as PID 1, a real fabric, root-only host changes). A command on
the page that is in neither list fails the test, and so does a list entry the page no longer
shows: the walk and the page cannot drift apart.

The bed: ibsim + stock OpenSM loading the *installed* libosmsar.so (plugin mode), a real SLURM
on loopback, and the installed sar-filterd with the *shipped* sar-filterd.yaml, edited only in
the keys the page's configuration table names. Asserts, in the page's order: the dry run and
`--check` pass; `sar-notify status` answers; a job bigger than one leaf gives one reroute, its
journal line, OpenSM's log line, and `sar-notify mapping` lists its hosts as SLURM does;
`ibnetdiscover`/`dump_fts` read the fabric back and `sar-route eval` finds the tables valid;
after `scancel` the mapping is empty; file mode's first-table command writes valid tables.
"""

import glob
import os
import re
import subprocess

import sar_it
from sar_it import check

import day_bed  # scripts/ (sar_it puts it on the path)
from filterd_process import FilterdProcess
from testbed_common import LoggedProcess, socket_path, start_logged

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGE = os.path.join(REPO, "docs", "operations.md")
PROGRAMS = {"sudo", "cmake", "sar-route", "sar-filterd", "sar-notify", "systemctl", "journalctl",
            "ibnetdiscover", "dump_fts", "sbatch", "scancel", "scontrol", "mkdir", "printf",
            "ibportstate", "ldconfig"}

# Commands the machine cannot run, each with the reason (regex on the command as the page has it).
SKIP = [
    (r"^cmake -S \. -B build", "the CI's own build is this configure step"),
    (r"^cmake --build build", "the CI's own build"),
    (r"^\(cd build && ctest", "the CI runs ctest itself"),
    (r"^sudo cmake --install build", "installs into /usr as root; walked as DESTDIR below"),
    (r"^cmake --install( build --prefix <other>)?$",
     "named in prose; the --prefix refusal is checked by install.staging"),
    (r"^ldconfig$", "root-only host change"),
    (r"^mkdir -p /etc/opensm && opensm -c /etc/opensm/opensm\.conf$",
     "root-only host change (writes /etc/opensm); the test beds write their own opensm.conf"),
    (r"^systemctl ", "needs systemd as PID 1; the unit is checked by install.staging "
                     "(systemd-analyze verify)"),
    (r"^journalctl ", "needs journald; the same lines are read from sar-filterd's stderr"),
    (r"^ibportstate ", "reads a real port's VL capability; ibsim's ports have 8"),
    (r"^scontrol reconfigure$", "rollback of slurm.conf hooks; this bed runs without hooks"),
    (r"^printf 'status\\n' \| nc ", "the same request as `sar-notify status` (netcat is not a "
                                      "test dependency)"),
    (r"^sar-route diff-lfts ", "file mode; this bed runs plugin mode (file mode: e2e_day_file)"),
    (r"^sar-route (eval|route)$", "named in prose"),
    (r"^sar-notify$", "named in prose"),
    (r"^ibnetdiscover$", "named in prose"),
    (r"^sar-filterd running: ", "a log line quoted in prose; checked in the sar-filterd log"),
    (r"^sar-(filterd|route)$", "a package or program named in prose"),
    (r"^sar-route replay --trace day\.trace -e sar,minhop --html r\.html$",
     "the day demo's trace replayed offline (needs a finished day); replay is checked by "
     "router/cli/test/check_replay_report.py"),
    (r"^\(cd build && cpack -G DEB\)$", "the packages are built and checked by install.packages"),
    (r"^install -d -o sar-filterd ", "root-only host change for the system user the package makes"),
    (r"^setpriv --reuid=sar-filterd ", "needs the package's system user; "
                                       "integration.filterd_unprivileged runs sar-filterd as an "
                                       "unprivileged user with CAP_KILL only"),
]
# Commands a step below runs (regex -> step name); every one must be on the page.
RUN = [
    (r"^DESTDIR=/tmp/stage cmake --install build$", "install"),
    (r"^sar-filterd --config /etc/sar/sar-filterd\.yaml --once --dry-run$", "dry_run"),
    (r"^sar-filterd --config /etc/sar/sar-filterd\.yaml --check$", "check"),
    (r"^ibnetdiscover > /etc/sar/fabric\.topo$", "fabric"),
    (r"^mkdir -p /var/lib/sar$", "mkdir"),
    (r"^sar-route route --engine sar --vls 1 --topology <ibnetdiscover output> --lids "
     r"/var/cache/opensm/guid2lid -o /var/lib/sar/lfts\.dump$", "file_mode_first_table"),
    (r"^sar-notify status$", "status"),
    (r"^sbatch -N <leaf size \+ 1> --wrap 'sleep 600'$", "sbatch"),
    (r"^sar-notify mapping$", "mapping"),
    (r"^ibnetdiscover > fabric\.topo$", "readback"),
    (r"^dump_fts > switches\.lfts$", "readback"),
    (r"^sar-route eval --topology fabric\.topo --lids /var/cache/opensm/guid2lid --lfts "
     r"switches\.lfts --jobs /var/lib/sar/jobs\.map$", "eval"),
]


def page_commands(text):
    """The commands on the page: ```sh lines (comments and `# ok` output dropped, `a; b` split)
    and inline spans that start with a program name."""
    cmds, lang = [], None
    for line in text.splitlines():
        if line.lstrip().startswith("```"):  # fences may be indented under a list item
            lang = line.lstrip()[3:].strip() if lang is None else None
            continue
        if lang is not None:
            if lang == "sh":
                line = re.split(r"\s{2,}#", line, maxsplit=1)[0].strip()
                if line and not line.startswith("#"):
                    cmds += [c.strip() for c in line.split("; ") if c.strip()]
            continue
        for span in re.findall(r"`([^`]+)`", line):
            word = span.split()[0] if span.split() else ""
            if word in PROGRAMS or word.startswith("DESTDIR="):
                cmds.append(span)
    return cmds


def classify(cmds):
    """{step: [commands]}; fails for a command in neither list and a list entry not used."""
    steps, used = {}, set()
    for c in cmds:
        run = [(i, s) for i, (rx, s) in enumerate(RUN) if re.search(rx, c)]
        skip = [i for i, (rx, _) in enumerate(SKIP) if re.search(rx, c)]
        check(len(run) + len(skip) == 1,
              f"docs/operations.md shows `{c}`: the walk must run it or say why not "
              f"(matches {len(run)} run and {len(skip)} skip entries)")
        for i, s in run:
            steps.setdefault(s, []).append(c)
            used.add(("run", i))
        used.update(("skip", i) for i in skip)
    for i, (rx, s) in enumerate(RUN):
        check(("run", i) in used, f"the walk runs '{s}' ({rx}), which the page no longer shows")
    for i, (rx, why) in enumerate(SKIP):
        check(("skip", i) in used, f"the walk skips {rx} ({why}), which the page no longer shows")
    for rx, why in SKIP:
        print(f"skip {rx}: {why}")
    return steps


def run(argv, env=None, cwd=None, timeout=120):
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=env, cwd=cwd,
                       timeout=timeout)
    print(f"$ {' '.join(map(str, argv))}  -> exit {p.returncode}")
    return p


def edit_config(shipped, out, values):
    """The shipped YAML with the page's keys set (its own lines replaced, comments kept)."""
    with open(shipped) as f:
        lines = f.read().splitlines()
    seen = set()
    for i, line in enumerate(lines):
        m = re.match(r"^([a-z_0-9]+):", line)
        if m and m.group(1) in values:
            lines[i] = f"{m.group(1)}: {values[m.group(1)]!s}"
            seen.add(m.group(1))
    missing = set(values) - seen
    check(not missing, f"the shipped {shipped} lacks the keys {sorted(missing)}")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


class InstalledFilterd(FilterdProcess):
    """The installed sar-filterd with a config file given as is (FilterdProcess writes its own)."""

    def __init__(self, binary, config, log, metrics_file, control_socket, env):
        self.config, self.metrics_file, self.control_socket = config, metrics_file, control_socket
        LoggedProcess.__init__(self, start_logged([binary, "--config", config], log, env=env,
                                                  stdout_to_log=False), log)


def body(args):
    text = open(PAGE).read()
    steps = classify(page_commands(text))
    work = args.workdir
    build = os.path.dirname(os.path.dirname(os.path.abspath(args.sar_route)))

    # Install the way the page says, into a stage.
    stage = os.path.join(work, "stage")
    cmd = steps["install"][0].replace("/tmp/stage", stage).split()
    env = dict(os.environ, **dict(kv.split("=", 1) for kv in cmd if "=" in kv))
    p = run([w if w != "build" else build for w in cmd if "=" not in w], env=env)
    check(p.returncode == 0, f"{' '.join(cmd)}: {p.stderr[-1000:]}")

    def installed(name, kind="f"):
        # Bash completion and logrotate files are named after their program; they are not it.
        hits = [h for h in glob.glob(os.path.join(stage, "**", name), recursive=True)
                if (os.path.isfile(h) if kind == "f" else True) and
                "/bash-completion/" not in h and "/logrotate.d/" not in h]
        check(len(hits) == 1, f"the install has {len(hits)} files named {name}: {hits}")
        return hits[0]

    sar_route, sar_filterd = installed("sar-route"), installed("sar-filterd")
    sar_notify, shipped = installed("sar-notify"), installed("sar-filterd.yaml")
    # The bed's OpenSM loads the installed plugin: a build-like dir whose opensm-patch/ is it.
    fake_build = os.path.join(work, "installed-build", "opensm-patch")
    os.makedirs(fake_build)
    os.symlink(installed("libosmsar.so"), os.path.join(fake_build, "libosmsar.so"))

    bed = day_bed.DayBed(os.path.join(work, "bed"), fabric="ft2:4,4", sm="plugin", hooks=False,
                         sar_route=sar_route, sar_filterd=sar_filterd,
                         build_dir=os.path.dirname(fake_build), progress=print)
    filterd = None
    try:
        bed.start(reference=False, filterd=False)
        tb = bed.tb

        # /etc/sar and /var/lib/sar inside the work dir.
        etc, var = os.path.join(work, "etc-sar"), os.path.join(work, "var-lib-sar")
        os.makedirs(etc)
        for c in steps["mkdir"]:
            p = run(c.replace("/var/lib/sar", var).split())
            check(p.returncode == 0 and os.path.isdir(var), f"{c}: {p.stderr}")
        for c in steps["fabric"]:  # `ibnetdiscover > /etc/sar/fabric.topo`
            tb.diag(["ibnetdiscover"], os.path.join(etc, "fabric.topo"))
        # The configuration table's keys, and nothing else but test timings.
        state = os.path.join(work, "state")
        sock = socket_path(bed.workdir, "control.sock")
        metrics = os.path.join(work, "metrics.prom")
        config = os.path.join(etc, "sar-filterd.yaml")
        edit_config(shipped, config, {
            "source": "slurm", "slurm_conf": bed.slurm.conf,
            "fabric": os.path.join(etc, "fabric.topo"), "subnet_lst": '""',
            "poll_interval_s": 1, "settle_s": 0, "min_reroute_interval_s": 0,
            "mapping_file": bed.mapping_file, "trigger": "signal",
            "opensm_pid_file": bed.osm.pid_file, "state_dir": state, "control_socket": sock,
            "metrics_textfile": metrics})
        # "It must be the mapping_file in osmsar.conf": the bed's osmsar.conf names
        # bed.mapping_file (the plugin opens it with O_NOFOLLOW, so no symbolic link here).
        fenv = bed.slurm.env()

        for c in steps["dry_run"]:
            p = run([sar_filterd, "--config", config, "--once", "--dry-run"], env=fenv)
            check(p.returncode == 0, f"{c}: exit {p.returncode}: {p.stderr[-1500:]}")
        for c in steps["check"]:
            p = run([sar_filterd, "--config", config, "--check"], env=fenv)
            out = p.stdout + p.stderr
            check(p.returncode == 0 and "all checks passed" in out, f"{c}: {out[-1500:]}")

        filterd = InstalledFilterd(sar_filterd, config, os.path.join(work, "sar-filterd.log"),
                                   metrics, sock, fenv)
        bed.pids.append(filterd.pid)
        filterd.wait_polls(1)
        log = open(filterd.log).read()
        check(re.search(r"sar-filterd running: source libslurm, \d+ hosts on \d+ leaves", log),
              f"no 'sar-filterd running' line in {filterd.log}")
        nenv = dict(os.environ, SAR_FILTERD_SOCKET=sock)
        for c in steps["status"]:
            p = run([sar_notify, "status"], env=nenv)
            check(p.returncode == 0 and p.stdout.startswith("state=idle"), f"{c}: {p.stdout}")

        for c in steps["sbatch"]:
            off = bed.osm.log_offset()
            job = bed.slurm.run(["sbatch", "--parsable", "-N", str(bed.per_leaf + 1), "--wrap",
                                 "sleep 600"]).stdout.strip().split(";")[0]
            bed.slurm.wait_state(job, "RUNNING", timeout=60.0)
            hosts = sorted(bed.slurm.job_hosts(job))
            filterd.wait_metric("reroutes_total", 1, 30.0)
            bed.osm.wait_log(r"osmsar: engine sar routed \d+ switches", off, 30.0)
            bed.osm.wait_log(r"osmsar: pass summary:", off, 20.0)  # the blocks pushed
            log = open(filterd.log).read()
            check(f"+ job {job}" in log, f"no '+ job {job}' line in {filterd.log}")
        for c in steps["mapping"]:
            p = run([sar_notify, "mapping"], env=nenv)
            got = sorted(line.split()[0] for line in p.stdout.splitlines()
                         if line.strip() and not line.startswith("#"))
            check(p.returncode == 0 and got == hosts,
                  f"{c}: hosts {got}, SLURM runs job {job} on {hosts}")
        live_topo, lfts = os.path.join(work, "fabric.topo"), os.path.join(work, "switches.lfts")
        tb.diag(["ibnetdiscover"], live_topo)
        tb.diag(["dump_fts"], lfts)
        for c in steps["eval"]:
            p = run([sar_route, "eval", "--topology", live_topo, "--lids", bed.guid2lid, "--lfts",
                     lfts, "--jobs", bed.mapping_file])
            check(p.returncode == 0, f"{c}: exit {p.returncode}: {p.stdout[-800:]}{p.stderr}")

        bed.slurm.scancel(job)  # step 5 of "Check that it works"
        filterd.wait_metric("reroutes_total", 2, 30.0)
        p = run([sar_notify, "mapping"], env=nenv)
        check(p.returncode == 0 and "0 multi-leaf job(s)" in p.stdout, f"after scancel: {p.stdout}")

        for c in steps["file_mode_first_table"]:
            out = os.path.join(var, "lfts.dump")
            p = run([sar_route, "route", "--engine", "sar", "--vls", "1", "--topology",
                     os.path.join(etc, "fabric.topo"), "--lids", bed.guid2lid, "-o", out])
            check(p.returncode == 0 and os.path.getsize(out) > 0, f"{c}: {p.stderr[-800:]}")
            p = run([sar_route, "eval", "--topology", os.path.join(etc, "fabric.topo"), "--lids",
                     bed.guid2lid, "--lfts", out, "--vls", "1"])
            check(p.returncode == 0, f"eval of {out}: {p.stdout[-800:]}")
    finally:
        if filterd is not None:
            rc = filterd.stop()
            check(rc == 0, f"the installed sar-filterd exited {rc} on SIGTERM")
        bed.stop()
    left = bed.leftover_pids()
    check(not left, f"still running: {left}")


if __name__ == "__main__":
    a = sar_it.parse_args(__doc__)
    sar_it.main(lambda: body(a), errors=(day_bed.DayError,))
