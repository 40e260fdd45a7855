#!/usr/bin/env python3
"""libosmsar.so inside stock OpenSM: the plugin's tables are sar-route's, on the switches.

On FT(2;20,18) and a degraded 4-ary-3-tree (failed links and a failed switch), stock OpenSM
loads the plugin (`event_plugin_name osmsar`) and routes with `routing_engine sar`:
- the log says the engine registered, OpenSM's console `status` names sar as the engine in use;
- the tables read back from the simulated switches (dump_fts) equal, entry for entry, what
  `sar-route route --engine sar --canonical-order` computes offline from the read-back
  topology (ibnetdiscover, in discovery order), OpenSM's own guid2lid and the same job
  mapping; `sar-route eval` finds the read-back tables valid;
- independently of libsar (lft_truth.py: the read-back topology, guid2lid and tables only),
  after every pass checked against offline, including the three delta passes below: every host
  reaches every LID of every other host without a loop, on a shortest switch path;
- FT(2;20,18): after a SIGHUP (OpenSM resends every block until its first heavy resweep), three
  mapping changes, each followed by SIGUSR2, bring the switches within 2 s to the offline
  incremental tables (`sar-route route --previous` the read-back tables `--previous-jobs` the
  last pass's mapping: the plugin's default `delta true`; the second change keeps one job
  running), the LFT blocks OpenSM sends (the plugin logs one VERBOSE line per LFT_CHANGE event;
  OpenSM runs with -D 0x47 here) are exactly the blocks whose contents changed, and they are
  fewer than a full recompute changes (3x fewer over the three events); the pass's one INFO
  summary line counts those blocks and their switches, and no per-block line is at INFO;
- 3-level tree: SA PathRecords (saquery) carry the layer sar-route --sl-out gives each route,
  for routes on layers other than 0;
- a mapping with a four-word line keeps the old tables and logs file:line; a missing mapping
  routes with plain dfsssp (logged), equal to `sar-route route --engine dfsssp --previous`
  offline;
- a config file with a bad value: no engine registered, file:line logged, OpenSM falls back;
- FT(2;4,4) with LMC 2: every LID of every host routed as sar-route routes it.
"""

import os
import re
import shutil
import signal
import socket
import time

import lft_truth
import sar_it
import sar_testbed
from sar_it import check
from testbed_common import free_port_block

NUM_VLS = 8
BLOCK = 64  # LIDs per LFT block (IB_SMP_DATA_SIZE)


def console(port, command, timeout=5.0):
    """One command on OpenSM's loopback console; returns what it printed."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(command.encode() + b"\n")
        out, deadline = b"", time.monotonic() + timeout
        s.settimeout(0.5)
        while time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                if out:
                    break
                continue
            if not chunk:
                break
            out += chunk
        s.sendall(b"quit\n")
    return out.decode(errors="replace")


def write_atomic(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def mapping_text(topo, seed, jobs=3, per_job=6):
    """`jobs` jobs over hosts spread across leaves; `seed` picks which hosts."""
    hosts = sorted(h.name for h in topo.hcas())
    lines = []
    for j in range(jobs):
        for k in range(per_job):
            lines.append(f"{hosts[(seed * 7 + j * 13 + k * 11) % len(hosts)]} job{seed}_{j}")
    return "\n".join(lines) + "\n"


class Fabric:
    """One test bed with OpenSM running the plugin."""

    def __init__(self, args, name, gen, lmc=0, conf_extra=()):
        self.args, self.w = args, os.path.join(args.workdir, name)
        os.makedirs(self.w)
        self.topo_path = os.path.join(self.w, "fabric.topo")
        lids = os.path.join(self.w, "fabric.guid2lid")
        sar_it.sar_route_gen(args.sar_route, gen[0], self.topo_path, lids,
                             extra=gen[1:] + (["--lmc", str(lmc)] if lmc else []))
        self.topo = sar_it.parse_topology(self.topo_path)
        self.mapping = os.path.join(self.w, "job_mapping")
        self.conf = os.path.join(self.w, "osmsar.conf")
        with open(self.conf, "w") as f:
            f.write(f"engine sar\nmapping_file {self.mapping}\nnum_vls {NUM_VLS}\nthreads 2\n")
            f.writelines(line + "\n" for line in conf_extra)
        self.tb = sar_it.new_testbed(args.workdir, name + "-bed", self.topo_path, lids, lmc=lmc)
        self.daemon = None
        self.live_topo = os.path.join(self.w, "live.topo")

    def start(self, console_port, log_flags=None):
        self.tb.start()
        self.daemon = self.tb.start_opensm(
            "sar", console_port=console_port,
            extra_conf=["event_plugin_name osmsar", f"event_plugin_options {self.conf}",
                        "qos TRUE", f"qos_max_vls {NUM_VLS}"],
            env_extra={"LD_LIBRARY_PATH": self.args.plugin_dir}, log_flags=log_flags)
        log = self.daemon.log_since(0)
        check("osmsar: routing engine 'sar' registered" in log, "no registration line in the log")
        passes = self.daemon.routing_passes("sar")
        check(passes and passes[-1][1] == "sar", f"OpenSM did not route with sar: {passes}")
        # The topology as the switches report it, and the LIDs OpenSM handed out.
        self.tb.diag(["ibnetdiscover"], self.live_topo)
        self.lids = os.path.join(self.tb.cache_dir, "guid2lid")
        self.known = set()
        for lo, hi in sar_it.parse_guid2lid(self.lids).values():
            self.known.update(range(lo, hi + 1))

    def offline(self, engine, tag, jobs=True, previous=None, previous_jobs=None, extra=()):
        """sar-route's tables for the current mapping; with `previous` (an LFT dump of what the
        switches hold) and `previous_jobs` (the mapping of the plugin's last routed pass) the
        incremental routing the plugin does by default (`delta true`)."""
        out = os.path.join(self.w, f"offline-{tag}.lfts")
        layers = os.path.join(self.w, f"offline-{tag}.layers")
        cmd = [self.args.sar_route, "route", "--engine", engine, "--topology", self.live_topo,
               "--canonical-order",
               "--lids", self.lids, "--vls", NUM_VLS, "-o", out, "--sl-out", layers]
        if jobs:
            cmd += ["--jobs", self.mapping]
        if previous:
            cmd += ["--previous", previous]
        if previous_jobs:
            cmd += ["--previous-jobs", previous_jobs]
        sar_it.run(cmd + list(extra), expect=0)
        return self.restrict(sar_it.parse_lfts(out)), layers

    def check_sar_tables(self, tag, what, previous=None, previous_jobs=None, extra=()):
        """The switches hold sar-route's sar tables for the current mapping (incremental from the
        LFT dump `previous` if given), and eval finds them valid and deadlock-free with
        sar-route's layers. Returns (offline tables, layers path)."""
        offline, layers_path = self.offline("sar", tag, previous=previous,
                                            previous_jobs=previous_jobs, extra=extra)
        rb = self.check_equal(offline, what)
        ev = sar_it.sar_route_eval(self.args.sar_route, self.live_topo, rb, self.lids,
                                   extra=["--layers", layers_path])
        check(ev["valid"] is True and ev["deadlock_free"] is True,
              f"{what}: eval: read-back tables not valid and deadlock-free: {ev}")
        self.truth(rb, what)
        return offline, layers_path

    def truth(self, path, what):
        """The tables read back into `path` walked without libsar (lft_truth.py): every host to
        every LID of every other host delivered without a loop, on a shortest path (sar's SSSP
        fixes the hop count by BFS, degraded fabric or not; delta passes keep only entries
        that stay so)."""
        rep = lft_truth.require(self.live_topo, self.lids, path, f"{what}: switches' tables",
                                min_hop=True, all_lids=True)
        print(f"{what}: independent walk: {rep.summary()}")

    def restrict(self, tables):
        return {g: {l: p for l, p in t.items() if l in self.known} for g, t in tables.items()}

    def readback(self):
        path = self.daemon.readback()
        return self.restrict(sar_it.parse_lfts(path)), path

    def check_equal(self, offline, what):
        switches, path = self.readback()
        diff = sar_it.diff_tables(switches, offline)
        check(not diff, f"{what}: switches differ from sar-route offline in {len(diff)} entries:"
                        f" {diff[:5]}")
        return path

    def wait_pass(self, offset, timeout=20):
        self.daemon.wait_log(r"tables configured on all switches", offset, timeout)


def changed_blocks(a, b):
    """(switch GUID, block) pairs whose 64 entries differ between two table sets."""
    out = set()
    for guid in set(a) | set(b):
        ta, tb = a.get(guid, {}), b.get(guid, {})
        for lid in set(ta) | set(tb):
            if ta.get(lid) != tb.get(lid):
                out.add((guid, lid // BLOCK))
    return out


def sent_blocks(log_text):
    return [(int(m.group(2), 16), int(m.group(1))) for m in re.finditer(
        r"osmsar: LFT block (\d+) of switch (0x[0-9a-fA-F]+) changed", log_text)]


PASS_SUMMARY = re.compile(r"\] (0x[0-9a-f]+) -> \w+: osmsar: pass summary: result ([^;]+); engine "
                          r"(\S+), (\d+) switches routed; (\d+) LFT blocks changed on (\d+) "
                          r"switches; tables in the switches ([0-9.]+) ms after routing began")


def check_pass_summary(log_text, sent, what):
    """One INFO summary line for the one pass in `log_text`, whose counts are those of the
    VERBOSE per-block lines (`sent`); the per-block lines are not at INFO."""
    summaries = PASS_SUMMARY.findall(log_text)
    check(len(summaries) == 1, f"{what}: {len(summaries)} pass summary lines, not 1")
    level, result, engine, routed, blocks, switches, ms = summaries[0]
    check(level == "0x02" and result == "ok" and engine == "sar" and int(routed) > 0,
          f"{what}: summary {summaries[0]}")
    check(int(blocks) == len(sent) and int(switches) == len({g for g, _ in sent}),
          f"{what}: summary says {blocks} blocks on {switches} switches; the per-block lines "
          f"{len(sent)} on {len({g for g, _ in sent})}")
    levels = set(re.findall(r"\] (0x[0-9a-f]+) -> \w+: osmsar: LFT block", log_text))
    check(levels == {"0x04"}, f"{what}: per-block lines at levels {levels}, not only VERBOSE")


def check_metrics_textfile(fab, path):
    """The plugin's metrics_textfile agrees with OpenSM's log (passes, LFT blocks since load),
    and has every sar_osmsar_* metric the shipped dashboard and alert rules name."""
    log = fab.daemon.log_since(0)
    passes = len(re.findall(r"osmsar: engine sar routed", log))
    blocks = len(sent_blocks(log))
    deadline = time.monotonic() + 10
    while True:  # written at routing-done: wait for the file of the last pass
        samples = {}
        if os.path.exists(path):
            for line in open(path):
                if line and not line.startswith("#"):
                    name, value = line.rsplit(" ", 1)
                    samples[name] = float(value)
        if (samples.get('sar_osmsar_passes_total{result="ok"}') == passes and
                samples.get("sar_osmsar_lft_blocks_changed_total") == blocks):
            break
        check(time.monotonic() < deadline,
              f"metrics textfile {samples} disagrees with the log: {passes} passes, "
              f"{blocks} LFT blocks")
        time.sleep(0.2)
    check(samples.get('sar_osmsar_passes_total{result="failed"}') == 0, f"failed passes: {samples}")
    check(samples.get('sar_osmsar_last_pass_seconds{stage="route"}', 0) > 0 and
          samples.get("sar_osmsar_last_pass_layers", 0) >= 1, f"last pass: {samples}")
    check(oct(os.stat(path).st_mode & 0o777) == "0o644", "metrics textfile mode")
    names = {n.split("{")[0] for n in samples}
    for shipped in ("config/grafana/sar.json", "config/prometheus/sar-rules.yml"):
        with open(os.path.join(sar_it.REPO, shipped)) as f:
            wanted = set(re.findall(r"sar_osmsar_[a-z_]+", f.read()))
        check(wanted and wanted <= names,
              f"{shipped} names plugin metrics the plugin does not write: {wanted - names}")
    print(f"metrics textfile: {passes} passes, {blocks} LFT blocks, as the log says")


def test_ft2(args):
    metrics = os.path.join(args.workdir, "osmsar.prom")
    fab = Fabric(args, "ft2_20_18", ["ft2:20,18"], conf_extra=[f"metrics_textfile {metrics}"])
    write_atomic(fab.mapping, mapping_text(fab.topo, 1))
    port = free_port_block(1)
    fab.start(port, log_flags=sar_testbed.OPENSM_VERBOSE_LOG_FLAGS)  # the per-block lines
    status = console(port, "status")
    check(re.search(r"Routing Engine.*\bsar\b", status),
          f"console status does not name sar:\n{status}")
    check(re.search(r"Loaded event plugins\s*:.*\bosmsar\b", status),
          f"console status does not list the plugin:\n{status}")
    first, _ = fab.check_sar_tables("a", "FT(2;20,18) first pass")

    # Settle OpenSM: until its first heavy resweep it resends every block.
    off = fab.daemon.log_offset()
    fab.daemon.signal(signal.SIGHUP)
    fab.wait_pass(off)
    fab.daemon.wait_log(r"SUBNET UP", off, 20)
    time.sleep(0.3)

    # A sequence of job events (the plugin's default `delta true`): each pass gives exactly the
    # offline incremental routing (`sar-route route --previous <what the switches hold>`),
    # OpenSM sends exactly the blocks whose contents changed, and fewer than a full recompute
    # would change.
    current, current_path = fab.readback()
    check(not sar_it.diff_tables(current, first), "settling changed the tables")
    total_sent = total_full = 0
    last_mapping = os.path.join(fab.w, "last-mapping")
    for seed in (2, 5, 9):
        # The job set of the plugin's last pass: jobs in both keep their routes.
        shutil.copyfile(fab.mapping, last_mapping)
        text = mapping_text(fab.topo, seed)
        if seed == 5:  # job2_0 runs on: its lines kept, the new jobs on the other hosts
            with open(last_mapping) as f:
                kept = [ln for ln in f.read().splitlines() if ln.endswith(" job2_0")]
            hosts = {ln.split()[0] for ln in kept}
            text = "\n".join(kept + [ln for ln in text.splitlines()
                                     if ln.split()[0] not in hosts]) + "\n"
        write_atomic(fab.mapping, text)
        want_tables, _ = fab.offline("sar", f"delta{seed}", previous=current_path,
                                     previous_jobs=last_mapping)
        full, _ = fab.offline("sar", f"full{seed}")
        want = changed_blocks(current, want_tables)
        full_blocks = changed_blocks(current, full)
        check(want, f"mapping {seed} changes no table: the test proves nothing")
        off = fab.daemon.log_offset()
        t0 = time.monotonic()
        fab.daemon.signal(signal.SIGUSR2)
        fab.wait_pass(off, 10)
        while True:
            switches, path = fab.readback()
            if not sar_it.diff_tables(switches, want_tables):
                break
            check(time.monotonic() - t0 < 10,
                  f"mapping {seed}: switches never reached the offline incremental tables "
                  f"({len(sar_it.diff_tables(switches, want_tables))} entries differ)")
        elapsed = time.monotonic() - t0
        check(elapsed < 2.0, f"SIGUSR2 -> new tables on the switches took {elapsed:.2f} s (> 2 s)")
        # Logged at routing-done, after the switches acknowledged the pass's last block.
        fab.daemon.wait_log(r"osmsar: pass summary", off, 10)
        log = fab.daemon.log_since(off)
        check(re.search(r"osmsar: sar: delta: kept \d+ of \d+ entries", log),
              f"mapping {seed}: no delta note in the log")
        # The plugin passed its last mapping: job2_0 runs across the second change.
        check(seed != 5 or re.search(r"osmsar: sar: stability: 1 running jobs, 0 of", log),
              f"mapping {seed}: no stability note for the running job in the log")
        sent = sent_blocks(log)
        check_pass_summary(log, sent, f"mapping {seed}")
        check(len(sent) == len(set(sent)), "a block was sent twice")
        check(set(sent) == want,
              f"blocks sent {len(sent)} != blocks changed {len(want)}: "
              f"extra {sorted(set(sent) - want)[:5]}, missing {sorted(want - set(sent))[:5]}")
        check(len(want) < len(full_blocks),
              f"mapping {seed}: delta changed {len(want)} blocks, full recompute "
              f"{len(full_blocks)}")
        fab.truth(path, f"FT(2;20,18) mapping {seed} (delta)")
        print(f"FT(2;20,18) mapping {seed}: SIGUSR2 -> offline incremental tables read back in "
              f"{elapsed:.2f} s; {len(sent)} LFT blocks sent = {len(want)} changed "
              f"(a full recompute: {len(full_blocks)})")
        total_sent += len(sent)
        total_full += len(full_blocks)
        current, current_path = switches, path
    check(total_full >= 3 * total_sent,
          f"delta sent {total_sent} blocks, a full recompute changes {total_full}: < 3x fewer")
    check_metrics_textfile(fab, metrics)
    fab.tb.stop()


def parse_layers(path):
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) == 3 and f[0].startswith("0x"):
            out[(int(f[0], 16), int(f[1], 16))] = int(f[2])
    return out


def test_degraded(args):
    fab = Fabric(args, "kary_4_3_degraded",
                 ["kary:4,3", "--fail-link", "leaf000:5", "--fail-link", "leaf005:6",
                  "--fail-link", "l2sw002:7", "--fail-switch", "l2sw006"])
    write_atomic(fab.mapping, mapping_text(fab.topo, 3, jobs=2, per_job=8))
    fab.start(free_port_block(1))
    first, layers_path = fab.check_sar_tables("a", "degraded 3-level tree")

    # SA path records carry the routes' layers as SL.
    layers = parse_layers(layers_path)
    nonzero = sorted((k, v) for k, v in layers.items() if v != 0)
    check(len(set(layers.values())) > 1, f"one layer only: {set(layers.values())}")
    for (slid, dlid), layer in nonzero[:: max(1, len(nonzero) // 4)][:4]:
        pr = fab.tb.diag(["saquery", "-p", "--slid", str(slid), "--dlid", str(dlid)])
        m = re.search(r"\bsl\.+0x([0-9a-fA-F]+)", pr)
        check(m and int(m.group(1), 16) == layer,
              f"PathRecord {slid}->{dlid}: SL {m and m.group(1)}, layer {layer}\n{pr}")

    # A broken mapping keeps the old tables and names file:line.
    text = mapping_text(fab.topo, 4, jobs=2, per_job=8).splitlines()
    text.insert(2, "hostx 7 default extra")
    write_atomic(fab.mapping, "\n".join(text) + "\n")
    off = fab.daemon.log_offset()
    fab.daemon.signal(signal.SIGUSR2)
    fab.wait_pass(off)
    log = fab.daemon.log_since(off)
    check(re.search(r"osmsar: routing failed: .*" + re.escape(fab.mapping) + r":3:", log),
          f"no error naming {fab.mapping}:3 in the log:\n{log[-2000:]}")
    check("sar tables configured" in log, "OpenSM fell back to another engine")
    fab.check_equal(first, "after a broken mapping")

    # A missing mapping routes with plain dfsssp (incrementally: from the tables held now).
    _, held = fab.readback()
    os.unlink(fab.mapping)
    off = fab.daemon.log_offset()
    fab.daemon.signal(signal.SIGUSR2)
    fab.wait_pass(off)
    check("does not exist: routing with plain dfsssp" in fab.daemon.log_since(off),
          "no dfsssp fallback line in the log")
    dfsssp, _ = fab.offline("dfsssp", "dfsssp", jobs=False, previous=held)
    fab.check_equal(dfsssp, "missing mapping (dfsssp)")

    # A bad config: the plugin refuses to register, OpenSM logs file:line and falls back.
    fab.daemon.stop()
    with open(fab.conf, "a") as f:
        f.write("engine ftree\n")
    d = fab.tb.start_opensm(
        "sar", extra_conf=["event_plugin_name osmsar", f"event_plugin_options {fab.conf}"],
        env_extra={"LD_LIBRARY_PATH": args.plugin_dir}, name="bad-config")
    log = d.log_since(0)
    check(re.search(r"osmsar: config error: .*" + re.escape(fab.conf) + r":5:", log),
          f"no config error naming {fab.conf}:5:\n{log[-2000:]}")
    check("routing engine 'sar' registered" not in log, "registered despite a bad config")
    passes = d.routing_passes("sar")
    check(passes and passes[-1][1] != "sar", f"routed with sar despite a bad config: {passes}")
    fab.tb.stop()


def test_lmc(args):
    """LMC 2: every host has four LIDs; the plugin routes each of them as sar-route does."""
    fab = Fabric(args, "ft2_4_4_lmc2", ["ft2:4,4"], lmc=2)
    write_atomic(fab.mapping, mapping_text(fab.topo, 5, jobs=2, per_job=4))
    fab.start(free_port_block(1))
    ranges = sar_it.parse_guid2lid(fab.lids).values()
    check(any(hi - lo == 3 for lo, hi in ranges), f"no LMC 2 LID range in {fab.lids}")
    fab.check_sar_tables("lmc", "FT(2;4,4) with LMC 2")
    fab.tb.stop()


def test_refine_work(args):
    """sar_refine_work in the plugin's config limits the refinement as --sar-refine-work does
    offline: the switches hold the limited tables, which differ from the default's."""
    work = "1"
    fab = Fabric(args, "kary_4_3_refine_work", ["kary:4,3"],
                 conf_extra=[f"sar_refine_work {work}"])
    write_atomic(fab.mapping, mapping_text(fab.topo, 6, jobs=3, per_job=8))
    fab.start(free_port_block(1))
    full, _ = fab.offline("sar", "full")
    limited, _ = fab.check_sar_tables("limited", "sar_refine_work 1",
                                      extra=["--sar-refine-work", work])
    diff = sar_it.diff_tables(limited, full)
    check(diff, "the work limit changed nothing on this fabric: the test proves nothing")
    print(f"sar_refine_work {work}: the switches hold the limited tables "
          f"({len(diff)} entries differ from the default's)", flush=True)
    fab.tb.stop()


def main():
    args = sar_it.parse_args(__doc__, extra=lambda ap: ap.add_argument(
        "--plugin-dir", required=True, help="directory holding libosmsar.so"))
    args.plugin_dir = os.path.abspath(args.plugin_dir)
    sar_it.main(lambda: (test_degraded(args), test_lmc(args), test_refine_work(args),
                         test_ft2(args)), errors=(lft_truth.TruthError,))


if __name__ == "__main__":
    main()
