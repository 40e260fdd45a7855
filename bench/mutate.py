#!/usr/bin/env python3
"""Mutation testing by hand-picked mutants: do the tests fail when the code is wrong?

Plants each bug of MUTATIONS (below) one at a time in a scratch git worktree of this repository
(never in the tree you work in), rebuilds only the targets the bug touches, runs the tests named
for it with a timeout, and prints per mutant whether a test failed (killed) or all passed
(survived), then the kill ratio. Not a CI test: minutes to an hour of CPU. docs/testbed.md
("Mutation testing") describes it.

  bench/mutate.py                      # every mutant, the scratch tree at HEAD
  bench/mutate.py --list               # the mutants and their tests
  bench/mutate.py --only coord-stale-epoch,sssp-lookahead-rate
  bench/mutate.py --skip-slow          # without the mutants whose tests drive OpenSM on ibsim

The scratch tree (default build-mutate/tree, ignored by git) is a detached `git worktree` of
--rev (default HEAD: commit what you want to test) with its own build directory tree/build,
configured like the project's build with ccache. With ccache's base_dir at or above both trees
and hash_dir false (`ccache -o base_dir=/work -o hash_dir=false`, if the trees are under /work),
its first build is mostly cache hits of your own build; else it is one full build, reused by
later runs.

Before any mutant, the tests of every selected mutant run on the unmutated tree: a test that
already fails there proves nothing, and its mutants are reported "baseline-fails". A mutant that
does not compile is "stillborn" and left out of the ratio. The mutated file is restored (and its
mtime moved on, so the next build recompiles it) after each mutant, on Ctrl-C, SIGTERM and
SIGHUP too; a run killed with SIGKILL leaves the journal build-mutate/planted, which the next
run restores first. Child processes run in their own process groups and are stopped by pgid.
"""

import argparse
import ctypes
import os
import signal
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

UNIT = "router/sar_unit_tests"  # relative to the build directory

# Each mutant: a plausible bug, planted by replacing `old` (which must occur exactly once in
# `file`) with `new`. `targets`: what to rebuild. `tests`: ("gtest", filter) runs the unit test
# binary with --gtest_filter; ("ctest", regex) runs ctest -R regex in the scratch build.
# `slow`: its tests drive OpenSM on ibsim (minutes).
COORD_TESTS = [("gtest", "MigrationCoordinator.*:ChangedRouteEndpoints.*")]
MUTATIONS = [
    dict(id="plugin-hold-any-pass",
         what="the plugin installs a held plan on any routing pass (released_epoch check dropped)",
         file="opensm-patch/osmsar_routing.c",
         old="if (p->released_epoch && p->planned && p->planned_fp == fp) {",
         new="if (p->planned && p->planned_fp == fp) {",
         targets=["osmsar", "osmsar_nohold", "sar-route", "sar-agent", "sar-migconsumer"],
         tests=[("ctest", "^integration\\.migration_opensm$")], timeout=900, slow=True),
    dict(id="coord-stale-epoch",
         what="acks of an earlier epoch are counted (epoch != epoch_ weakened to epoch > epoch_)",
         file="router/src/migration/migration_coordinator.cc",
         old="} else if (epoch != epoch_) {",
         new="} else if (epoch > epoch_) {",
         targets=["sar_unit_tests"], tests=COORD_TESTS),
    dict(id="changed-last-hop",
         what="the changed-routes walk does not compare a route's last switch",
         file="router/src/migration/migration_coordinator.cc",
         old="    if (pa != pb) return false;",
         new="    if (pa != pb && f.is_switch(f.peer({at.node, pa}).node)) return false;",
         targets=["sar_unit_tests"], tests=COORD_TESTS),
    dict(id="changed-last-switch-index",
         what="the changed-routes scan over the switches stops one short (off by one)",
         file="router/src/migration/migration_coordinator.cc",
         old="for (int sw = 0; sw < f.num_switches() && !differs; ++sw) {",
         new="for (int sw = 0; sw + 1 < f.num_switches() && !differs; ++sw) {",
         targets=["sar_unit_tests"], tests=COORD_TESTS),
    dict(id="sssp-lookahead-rate",
         what="the slow-cable look-ahead ignores the cable's rate",
         file="router/src/engines/sssp_core.cc",
         old="const uint64_t extra = chunk * unit_[b->arc] / 2;",
         new="const uint64_t extra = chunk * kUnitWeight / 2;",
         targets=["sar_unit_tests"],
         tests=[("gtest", "Capacity.*:DerivedDump.*:SsspRouter.*")]),
    dict(id="coord-release-one-early",
         what="the hold is released one ack before all are in",
         file="router/src/migration/migration_coordinator.cc",
         old="if (acked_.size() < expected_.size()) return r;",
         new="if (acked_.size() + 1 < expected_.size()) return r;",
         targets=["sar_unit_tests"], tests=COORD_TESTS),
    dict(id="coord-exclude-late",
         what="a silent port is excluded one missed epoch later than exclude_after",
         file="router/src/migration/migration_coordinator.cc",
         old="if (++missed_[g] >= config_.exclude_after",
         new="if (++missed_[g] > config_.exclude_after",
         targets=["sar_unit_tests"], tests=COORD_TESTS),
    dict(id="coord-deadline-late",
         what="a deadline fires one millisecond late",
         file="router/src/migration/migration_coordinator.cc",
         old="if (deadline_ms_ == 0 || now_ms < deadline_ms_) return;",
         new="if (deadline_ms_ == 0 || now_ms <= deadline_ms_) return;",
         targets=["sar_unit_tests"], tests=COORD_TESTS),
    dict(id="coord-stale-plan",
         what="the plan of an aborted (earlier) epoch is taken for the current one",
         file="router/src/migration/migration_coordinator.cc",
         old="if (phase_ != MigPhase::kPlan || epoch != epoch_) return;",
         new="if (phase_ != MigPhase::kPlan || epoch > epoch_) return;",
         targets=["sar_unit_tests"], tests=COORD_TESTS),
    dict(id="coord-routing-done-any-epoch",
         what="phase 3 ends on a routing pass that installed an earlier epoch's tables",
         file="router/src/migration/migration_coordinator.cc",
         old="if (phase_ != MigPhase::kPush || installed_epoch != epoch_) return;",
         new="if (phase_ != MigPhase::kPush || installed_epoch == 0) return;",
         targets=["sar_unit_tests"], tests=COORD_TESTS),
    dict(id="coord-missed-not-reset",
         what="an ack does not reset a port's missed-deadline count (exclusion not 'in a row')",
         file="router/src/migration/migration_coordinator.cc",
         old="  if (phase_ == MigPhase::kDrain) missed_.erase(issuer);\n",
         new="",
         targets=["sar_unit_tests"], tests=COORD_TESTS),
    dict(id="coord-abort-repath-acked-only",
         what="after an ack timeout only the ports that acked are told to move back",
         file="router/src/migration/migration_coordinator.cc",
         old="drained_ = expected_;  // late agents may still have moved: tell everyone",
         new="drained_ = acked_;  // late agents may still have moved: tell everyone",
         targets=["sar_unit_tests"], tests=COORD_TESTS),
    dict(id="io-size-limit-inclusive",
         what="a file of exactly the size limit is refused (fstat check > made >=)",
         file="router/src/io/file_util.cc",
         old="static_cast<uint64_t>(st.st_size) > options.max_bytes) {",
         new="static_cast<uint64_t>(st.st_size) >= options.max_bytes) {",
         targets=["sar_unit_tests"], tests=[("gtest", "HostileInputTest.*:FileUtilTest.*")]),
    dict(id="io-stream-limit-no-extra-byte",
         what="the streaming read stops at the limit without reading the byte that proves more",
         file="router/src/io/file_util.cc",
         old="const size_t limit = max_bytes == SIZE_MAX ? SIZE_MAX : max_bytes + 1;",
         new="const size_t limit = max_bytes;",
         targets=["sar_unit_tests"], tests=[("gtest", "HostileInputTest.*:FileUtilTest.*")]),
    dict(id="layers-count-skips-first-dep",
         what="the first layer's dependency counts skip every route's first dependency",
         file="router/src/engines/virtual_layers.cc",
         old="for (uint32_t i = 1; i < length; ++i) ++count[EdgeOf(ch[i - 1], ch[i])];",
         new="for (uint32_t i = 2; i < length; ++i) ++count[EdgeOf(ch[i - 1], ch[i])];",
         targets=["sar_unit_tests"], tests=[("gtest", "VirtualLayers.*:Deadlock*")]),
    dict(id="layers-skip-single-source-leaf",
         what="a leaf with one source besides the destination's own ports is not walked",
         file="router/src/engines/virtual_layers.cc",
         old="const bool live = own < endpoints_on_[slot];",
         new="const bool live = own + 1 < endpoints_on_[slot];",
         targets=["sar_unit_tests"], tests=[("gtest", "VirtualLayers.*:Deadlock*")]),
    dict(id="layers-give-up-one-early",
         what="cycle breaking gives up one layer before max_layers",
         file="router/src/engines/virtual_layers.cc",
         old="SAR_RETURN_IF_ERROR(BreakCycles(l, l + 1 == opts_.max_layers));",
         new="SAR_RETURN_IF_ERROR(BreakCycles(l, l + 2 >= opts_.max_layers));",
         targets=["sar_unit_tests"], tests=[("gtest", "VirtualLayers.*:Deadlock*")]),
    dict(id="trace-last-port-is-a-hole",
         what="the route tracer takes a switch's last port for a hole",
         file="router/src/analysis/trace.cc",
         old="if (p == LftSet::kNoRoute || p > fabric_.num_ports(node)) {\n      *fate = RouteFate::kHole;",
         new="if (p == LftSet::kNoRoute || p >= fabric_.num_ports(node)) {\n      *fate = RouteFate::kHole;",
         targets=["sar_unit_tests"], tests=[("gtest", "TraceTest.*:TraceFaultTest.*")]),
    dict(id="trace-min-hop-off-by-one",
         what="a route one hop longer than the shortest is not counted as non-minimal",
         file="router/src/analysis/trace.cc",
         old="tree.hops[s] > w.dist[s] + 1) {",
         new="tree.hops[s] > w.dist[s] + 2) {",
         targets=["sar_unit_tests"], tests=[("gtest", "TraceTest.*:TraceFaultTest.*")]),
]


class Interrupted(Exception):
    pass


def on_signal(signum, _frame):
    raise Interrupted(signal.Signals(signum).name)


def run(cmd, cwd, log, timeout=None, env=None):
    """Runs cmd in its own process group, output appended to `log`. Returns (rc, seconds);
    rc None on timeout. The group is stopped (TERM, then KILL) on a timeout or an interrupt."""
    t0 = time.monotonic()
    with open(log, "a") as out:
        out.write(f"\n$ {' '.join(cmd)}\n")
        out.flush()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True, preexec_fn=die_with_parent)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = None
        finally:
            if proc.poll() is None:
                stop_group(proc)
    return rc, time.monotonic() - t0


def die_with_parent():
    """In the child: SIGTERM when this script dies, even by SIGKILL (PR_SET_PDEATHSIG)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


def stop_group(proc):
    for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


class Scratch:
    """The scratch worktree, its build directory and the journal of the planted file."""

    def __init__(self, root, rev, jobs):
        self.root = os.path.abspath(root)
        self.tree = os.path.join(self.root, "tree")
        self.build = os.path.join(self.tree, "build")
        self.journal = os.path.join(self.root, "planted")
        self.log = os.path.join(self.root, "mutate.log")
        self.rev = rev
        self.jobs = jobs

    def git(self, *args, cwd=None):
        return subprocess.run(["git", *args], cwd=cwd or REPO, check=True, text=True,
                              capture_output=True).stdout.strip()

    def prepare(self):
        os.makedirs(self.root, exist_ok=True)
        self.restore_journal()
        commit = self.git("rev-parse", "--verify", f"{self.rev}^{{commit}}")
        if not os.path.isdir(os.path.join(self.tree, ".git")) and \
                not os.path.isfile(os.path.join(self.tree, ".git")):
            self.git("worktree", "prune")  # a scratch directory removed by hand
            self.git("worktree", "add", "--detach", self.tree, commit)
        else:
            self.git("checkout", "--detach", "-f", commit, cwd=self.tree)
            self.git("reset", "--hard", "-q", commit, cwd=self.tree)
        dirty = self.git("status", "--porcelain", "--untracked-files=no", cwd=self.tree)
        if dirty:
            sys.exit(f"mutate: the scratch tree {self.tree} is not clean:\n{dirty}")
        open(self.log, "w").close()
        if not os.path.isfile(os.path.join(self.build, "CMakeCache.txt")):
            rc, _ = run(["cmake", "-S", self.tree, "-B", self.build,
                         "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DCMAKE_INSTALL_PREFIX=/usr",
                         "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache",
                         "-DCMAKE_C_COMPILER_LAUNCHER=ccache"], self.tree, self.log)
            if rc != 0:
                sys.exit(f"mutate: cmake failed, see {self.log}")
        return commit

    def restore_journal(self):
        """A run killed with SIGKILL left a planted file: put the original back."""
        if not os.path.exists(self.journal):
            return
        with open(self.journal) as f:
            rel = f.readline().strip()
        backup = self.journal + ".orig"
        if rel and os.path.exists(backup):
            os.replace(backup, os.path.join(self.tree, rel))
            print(f"mutate: restored {rel} left planted by an interrupted run")
        os.unlink(self.journal)

    def plant(self, m):
        path = os.path.join(self.tree, m["file"])
        with open(path) as f:
            text = f.read()
        n = text.count(m["old"])
        if n != 1:
            return None, f"'old' occurs {n} times in {m['file']} (the source moved on?)"
        with open(self.journal + ".orig", "w") as f:
            f.write(text)
        with open(self.journal, "w") as f:
            f.write(m["file"] + "\n")
        with open(path, "w") as f:
            f.write(text.replace(m["old"], m["new"]))
        return text, None

    def unplant(self, m, text):
        path = os.path.join(self.tree, m["file"])
        with open(path, "w") as f:
            f.write(text)
        now = time.time()
        os.utime(path, (now, now))  # newer than the mutant's objects: the next build redoes them
        for p in (self.journal, self.journal + ".orig"):
            if os.path.exists(p):
                os.unlink(p)

    def build_targets(self, targets, timeout):
        return run(["cmake", "--build", self.build, "-j", str(self.jobs), "--target", *targets],
                   self.tree, self.log, timeout)

    def run_tests(self, tests, timeout):
        """True if every test passed, False if one failed, None if one timed out."""
        for kind, what in tests:
            if kind == "gtest":
                cmd = [os.path.join(self.build, UNIT), f"--gtest_filter={what}"]
                cwd = os.path.join(self.build, "router")
            else:
                cmd = ["ctest", "-R", what, "--output-on-failure", "--no-tests=error",
                       "--timeout", str(timeout)]
                cwd = self.build
            rc, _ = run(cmd, cwd, self.log, timeout)
            if rc is None:
                return None
            if rc != 0:
                return False
        return True


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scratch", default=os.path.join(REPO, "build-mutate"),
                    help="scratch directory (worktree and build inside; default %(default)s)")
    ap.add_argument("--rev", default="HEAD", help="the commit to mutate (default HEAD)")
    ap.add_argument("--only", help="comma-separated mutant ids")
    ap.add_argument("--skip-slow", action="store_true",
                    help="leave out the mutants whose tests drive OpenSM on ibsim")
    ap.add_argument("--jobs", type=int, default=2, help="build parallelism (default 2)")
    ap.add_argument("--timeout", type=int, default=600,
                    help="seconds per build and per test command (default 600; a mutant's own "
                         "timeout may be longer)")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    args = ap.parse_args()

    selected = MUTATIONS
    if args.only:
        want = args.only.split(",")
        unknown = set(want) - {m["id"] for m in MUTATIONS}
        if unknown:
            sys.exit(f"mutate: no mutant {', '.join(sorted(unknown))} (see --list)")
        selected = [m for m in MUTATIONS if m["id"] in want]
    if args.skip_slow:
        selected = [m for m in selected if not m.get("slow")]
    if args.list:
        for m in selected:
            tests = " ".join(f"{k}:{w}" for k, w in m["tests"])
            print(f"{m['id']:32} {m['file']}\n    {m['what']}\n    tests: {tests}")
        return 0

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    scratch = Scratch(args.scratch, args.rev, args.jobs)
    results = []
    try:
        commit = scratch.prepare()
        print(f"mutate: {len(selected)} mutant(s) of {commit[:12]} in {scratch.tree} "
              f"(log {scratch.log})", flush=True)
        targets = sorted({t for m in selected for t in m["targets"]})
        rc, dt = scratch.build_targets(targets, max(args.timeout, 3600))
        if rc != 0:
            sys.exit(f"mutate: the unmutated build failed (rc {rc}), see {scratch.log}")
        print(f"mutate: unmutated build {dt:.0f} s", flush=True)
        baseline = {}
        for m in selected:
            key = tuple(m["tests"])
            if key not in baseline:
                baseline[key] = scratch.run_tests(m["tests"], m.get("timeout", args.timeout))
                if not baseline[key]:
                    print(f"mutate: tests {key} do not pass unmutated", flush=True)
        for m in selected:
            t0 = time.monotonic()
            verdict, note = None, ""
            if not baseline[tuple(m["tests"])]:
                verdict = "baseline-fails"
            else:
                text, err = scratch.plant(m)
                if err:
                    verdict, note = "not-planted", err
                else:
                    try:
                        rc, _ = scratch.build_targets(m["targets"], args.timeout)
                        if rc != 0:
                            verdict = "stillborn"
                        else:
                            ok = scratch.run_tests(m["tests"], m.get("timeout", args.timeout))
                            verdict = "survived" if ok else "killed"
                            note = "a test timed out" if ok is None else ""
                    finally:
                        scratch.unplant(m, text)
            results.append((m, verdict))
            print(f"{verdict:14} {m['id']:32} {time.monotonic() - t0:5.0f} s  {m['what']}"
                  f"{'  (' + note + ')' if note else ''}", flush=True)
    except Interrupted as e:
        print(f"mutate: interrupted ({e}); the scratch tree is restored", file=sys.stderr)
        return 130
    finally:
        scratch.restore_journal()
    judged = [v for _, v in results if v in ("killed", "survived")]
    killed = judged.count("killed")
    survivors = [m["id"] for m, v in results if v == "survived"]
    print(f"kill ratio: {killed}/{len(judged)}"
          + (f" ({100.0 * killed / len(judged):.0f}%)" if judged else "")
          + (f"; survived: {', '.join(survivors)}" if survivors else ""))
    others = [(m["id"], v) for m, v in results if v not in ("killed", "survived")]
    if others:
        print("not judged: " + ", ".join(f"{i} ({v})" for i, v in others))
    return 0 if not survivors and not others else 1


if __name__ == "__main__":
    sys.exit(main())
