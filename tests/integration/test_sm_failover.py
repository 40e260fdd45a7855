#!/usr/bin/env python3
"""Subnet manager failover with the plugin (issue 19, "Also"): two stock OpenSMs load
libosmsar.so on one ibsim fabric, a master (sm_priority 14) and a standby (sm_priority 1) on
another HCA with its own cache and dump directories, both reading the one mapping file.
sar-filterd (replay source) lists both pid files in `opensm_pid_file` and signals each.

  1. a multi-leaf job: sar-filterd signals both; the master routes, the standby logs the signal
     but no routing pass; the switches hold the tables `sar-route route` computes offline for
     the mapping
  2. the master is SIGKILLed and a second multi-leaf job starts: sar-filterd's reroute still
     succeeds (the dead master's pid file is a warning, not a failed trigger); the standby
     takes over (MASTER) and pushes the tables offline routing gives for the current mapping
  3. the first job ends: sar-filterd signals, the new master reroutes, tables equal offline
     routing again
Both run the shipped config/osmsar.conf (`delta true`), so "the tables offline routing gives" is
`sar-route route --previous <the tables read back before> --previous-jobs <their mapping>`, for
the new master's first passes a full recompute (failover_it.py, shared with
bench/sm_failover_day.py, which runs these steps with a real SLURM on the day demo's fabric).
After each step the tables read back from the switches also pass the independent checks
(sar_it: every route arrives, no channel dependency cycle). Every process started here is gone
at the end. ibsim clients: 2 OpenSMs and one dump_fts at a time.
"""

import os
import shutil
import signal
import time

import failover_it
import sar_it
from sar_it import check, sar_testbed

import day_bed  # scripts/ (sar_it puts it on the path)
from filterd_process import FilterdProcess
from testbed_common import socket_path, wait_gone

POLL_S = 0.2


class Bed:
    def __init__(self, args):
        self.args = args
        self.w = args.workdir
        self.topo = os.path.join(self.w, "fabric.topo")
        self.lids = os.path.join(self.w, "guid2lid")
        sar_it.sar_route_gen(args.sar_route, "ft2:4,4", self.topo, self.lids)
        self.mapping = os.path.join(self.w, "jobs.map")
        open(self.mapping, "w").close()
        self.osmsar_conf = os.path.join(self.w, "osmsar.conf")
        day_bed.shipped_osmsar_conf(day_bed.SHIPPED_OSMSAR_CONF, self.osmsar_conf,
                                    {"mapping_file": self.mapping, "num_vls": 8})
        # The tables the switches held at the last check and the mapping they were routed for.
        self.held = None
        self.tb = sar_testbed.Testbed(self.topo, os.path.join(self.w, "bed"), guid2lid=self.lids)
        self.pids = []
        self.filterd = None
        self.runs = 0
        self.checks = 0

    def start_sms(self):
        env = {"LD_LIBRARY_PATH": os.path.abspath(self.args.plugin_dir)}
        conf = ["event_plugin_name osmsar", f"event_plugin_options {self.osmsar_conf}",
                "qos TRUE", "qos_max_vls 8"]
        self.master = self.tb.start_opensm(
            "sar", extra_conf=conf + day_bed.sm_failover_conf(day_bed.MASTER_SM_PRIORITY),
            env_extra=env, name="master")
        self.pids.append(self.master.pid)
        # The standby: another HCA (another leaf), its own LID cache seeded with the same LIDs.
        self.standby = day_bed.start_standby_sm(self.tb, "sar", conf, env, self.lids,
                                                os.path.join(self.w, "standby-cache"), "h00005")
        self.pids.append(self.standby.pid)

    def start_filterd(self, trace_lines):
        """sar-filterd (again) with a new replay trace; the state dir persists."""
        if self.filterd:
            rc = self.filterd.stop()
            check(rc == 0, f"sar-filterd: exit status {rc} on SIGTERM:\n{self.filterd.tail()}")
        self.runs += 1
        d = os.path.join(self.w, "filterd")
        os.makedirs(d, exist_ok=True)
        trace = os.path.join(d, f"trace{self.runs}")
        with open(trace, "w") as f:
            f.write("".join(line + "\n" for line in trace_lines))
        opts = {
            "source": "replay", "replay_trace": trace, "fabric": self.topo,
            "poll_interval_s": POLL_S, "settle_s": 0, "min_reroute_interval_s": 0,
            "mapping_file": self.mapping, "trigger": "signal",
            "opensm_pid_file": [self.master.pid_file, self.standby.pid_file],
            "state_dir": os.path.join(d, "state"),
            "control_socket": socket_path(d, "control.sock"),
            "metrics_textfile": os.path.join(d, f"metrics{self.runs}.prom"),
        }
        self.filterd = FilterdProcess(self.args.sar_filterd, d, opts, dict(os.environ),
                                      name=f"run{self.runs}")
        self.pids.append(self.filterd.pid)
        m = self.filterd.wait_metric("reroutes_total", 1, 20)
        check(m.get("trigger_errors_total", 0) == 0,
              f"sar-filterd's trigger failed:\n{sar_testbed.tail(self.filterd.log)}")
        return m

    def wait_routed(self, sm, offset, timeout=20.0):
        """Waits for a routing pass of `sm` logged after `offset` and its LFT blocks acknowledged
        (the plugin's pass summary, logged at routing-done)."""
        sm.wait_log(r"sar tables configured on all switches", offset, timeout)
        sm.wait_log(r"osmsar: pass summary:", offset, timeout)

    def offline(self, tag, mapping, previous=None, previous_jobs=None):
        out = os.path.join(self.w, f"{tag}.offline.lfts")
        prev = ["--previous", previous] if previous else []
        prev += ["--previous-jobs", previous_jobs] if previous_jobs else []
        sar_it.run([self.args.sar_route, "route", "--engine", "sar", "--topology", self.topo,
                    "--lids", self.lids, "--jobs", mapping, "--vls", 8, "-o", out, *prev],
                   expect=0)
        return out

    def read_held(self, sm, tag):
        """The switches' tables now (and the mapping on disk) as where the next pass starts."""
        got = sm.readback(os.path.join(self.w, f"{tag}.switches.lfts"))
        mapping = os.path.join(self.w, f"{tag}.jobs.map")
        shutil.copyfile(self.mapping, mapping)
        self.held = (got, mapping)
        return got, mapping

    def check_tables(self, sm, what, new_master=False):
        """Switch tables == `sar-route route` for the mapping on disk as the pass ran it
        (failover_it: from the tables held before, or for a new master a full recompute);
        independently valid. Returns the mapping's job names."""
        self.checks += 1
        tag = f"check{self.checks}"
        before = self.held
        got, mapping = self.read_held(sm, tag)
        how = failover_it.check_switches(self.offline, self.topo, self.lids, got, mapping,
                                         before, new_master, what, tag)
        print(f"{what}: the switches hold sar-route route's tables ({how})")
        with open(mapping) as f:
            return {line.split()[1] for line in f if line.strip() and not line.startswith("#")}

    def stop(self):
        try:
            if self.filterd:
                self.filterd.stop()
        finally:
            self.tb.stop()


def body(args):
    t0 = time.monotonic()
    bed = Bed(args)
    try:
        bed.tb.start()
        bed.pids.append(bed.tb.ibsim_pid)
        bed.start_sms()
        # A heavy sweep first, as a live OpenSM has had (docs/opensm-plugin.md).
        off = bed.master.log_offset()
        bed.master.signal(signal.SIGHUP)
        bed.master.wait_log(r"-> SUBNET UP\s*$", off, 30)
        bed.read_held(bed.master, "start")

        # 1. the master routes, the standby only hears the signal
        moff, soff = bed.master.log_offset(), bed.standby.log_offset()
        bed.start_filterd(["0 - wide h0000[1-6]"])
        bed.wait_routed(bed.master, moff)
        bed.standby.wait_log(r"osmsar: SIGUSR2", soff, 10)
        check("tables configured" not in bed.standby.log_since(soff),
              "the standby ran a routing pass")
        jobs = bed.check_tables(bed.master, "step 1 (master)")
        check(jobs == {"wide"}, f"step 1: mapping holds {jobs}")

        # 2. the master dies; a new job; the standby takes over with the current mapping
        soff = bed.standby.log_offset()
        os.kill(bed.master.pid, signal.SIGKILL)
        check(wait_gone(bed.master.pid, 10), "the master survived SIGKILL")
        t_kill = time.monotonic()
        bed.start_filterd(["0 - wide h0000[1-6]", "0 - second h000[09-14]"])
        check("another was signalled" in open(bed.filterd.log).read(),
              "sar-filterd did not warn about the dead master's pid file")
        bed.standby.wait_log(r"Entering MASTER state", soff, 20)
        bed.wait_routed(bed.standby, soff)
        t_takeover = time.monotonic() - t_kill
        jobs = bed.check_tables(bed.standby, "step 2 (standby took over)", new_master=True)
        check(jobs == {"wide", "second"}, f"step 2: mapping holds {jobs}")

        # 3. the new master reroutes on sar-filterd's signal
        soff = bed.standby.log_offset()
        bed.start_filterd(["0 - second h000[09-14]"])
        bed.standby.wait_log(r"osmsar: SIGUSR2", soff, 10)
        bed.wait_routed(bed.standby, soff)
        jobs = bed.check_tables(bed.standby, "step 3 (new master rerouted)")
        check(jobs == {"second"}, f"step 3: mapping holds {jobs}")
    finally:
        pids = list(bed.pids)
        bed.stop()
    left = [p for p in pids if not wait_gone(p, 5)]
    check(not left, f"still running: {left}")
    print(f"takeover to tables in the switches: {t_takeover:.1f} s; "
          f"test {time.monotonic() - t0:.1f} s")


if __name__ == "__main__":
    def extra(ap):
        ap.add_argument("--sar-filterd", required=True)
        ap.add_argument("--plugin-dir", required=True)
    a = sar_it.parse_args(__doc__, extra=extra)
    sar_it.main(lambda: body(a))
