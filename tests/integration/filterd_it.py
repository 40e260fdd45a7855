"""Helpers of the sar-filterd integration tests: a stand-in for OpenSM that records every SIGUSR2
with the job mapping file as it was on disk at that moment, a running sar-filterd, and readers
for its metrics textfile. Run as a script, `filterd_it.py fake-opensm ...` is that stand-in.
"""

import argparse
import json
import os
import signal
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))

import sar_it  # noqa: E402  (beside this file)
import filterd_process  # noqa: E402  (path set above)
from sar_it import check  # noqa: E402  (the tests use it through this module too)
from testbed_common import LoggedProcess, socket_path, start_logged  # noqa: E402


def parse_args(description):
    """--sar-filterd and --workdir (wiped first), as sar_it.parse_args does for sar-route."""
    return sar_it.parse_args(description, need_sar_route=False,
                             extra=lambda ap: ap.add_argument("--sar-filterd", required=True))


def main(body):
    sar_it.main(body)  # the test beds' and sar-filterd's errors are ProcessErrors


def parse_mapping(text):
    """Job mapping file -> {job id: sorted hosts}; written independently of libsar's parser."""
    jobs = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].split()
        if line:
            check(len(line) == 2, f"mapping line is not '<host> <job>': {line}")
            jobs.setdefault(line[1], []).append(line[0])
    return {j: sorted(h) for j, h in jobs.items()}


def parse_mapping_patterns(text):
    """Mapping with patterns ('<host> <job> [<pattern>]') -> {job id: (sorted hosts, pattern)};
    written independently of libsar's parser."""
    hosts, pattern = {}, {}
    for line in text.splitlines():
        f = line.split("#", 1)[0].split()
        if not f:
            continue
        check(len(f) in (2, 3), f"mapping line is not '<host> <job> [<pattern>]': {line}")
        hosts.setdefault(f[1], []).append(f[0])
        p = f[2] if len(f) == 3 else "default"
        check(pattern.setdefault(f[1], p) == p, f"job {f[1]} has two patterns in the mapping")
    return {j: (sorted(h), pattern[j]) for j, h in hosts.items()}


class FakeOpenSM(LoggedProcess):
    """A separate process standing in for OpenSM: pid file + a record of each SIGUSR2."""

    name = "fake OpenSM"
    # sar-filterd signals only an `opensm` with libosmsar.so mapped (verify_sm_process); this
    # stand-in is a Python process, so configs pointed at it switch that check off. The switch
    # is test-only; the tests with a real OpenSM (e2e_day) keep the check on.
    filterd_options = {"verify_sm_process": False}

    def __init__(self, workdir, mapping_file):
        self.pid_file = os.path.join(workdir, "opensm.pid")
        self.record = os.path.join(workdir, "opensm.signals")
        log = os.path.join(workdir, "fake-opensm.log")
        super().__init__(start_logged(
            [sys.executable, os.path.abspath(__file__), "fake-opensm", "--pid-file",
             self.pid_file, "--mapping", mapping_file, "--record", self.record], log), log)
        self.wait_until(lambda: os.path.exists(self.pid_file), "its pid file", 10,
                        interval=0.05)

    def signals(self):
        """[mapping text at each SIGUSR2], oldest first."""
        try:
            with open(self.record) as f:
                return [json.loads(line)["mapping"] for line in f if line.strip()]
        except FileNotFoundError:
            return []

    def stop(self):
        return super().stop(grace=0)


def _fake_opensm_main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--pid-file", required=True)
    ap.add_argument("--mapping", required=True)
    ap.add_argument("--record", required=True)
    a = ap.parse_args(argv)

    def on_usr2(_signum, _frame):
        try:
            with open(a.mapping) as f:
                text = f.read()
        except FileNotFoundError:
            text = None
        with open(a.record, "a") as f:
            f.write(json.dumps({"t": time.time(), "mapping": text}) + "\n")

    signal.signal(signal.SIGUSR2, on_usr2)
    with open(a.pid_file + ".tmp", "w") as f:
        f.write(f"{os.getpid()}\n")
    os.rename(a.pid_file + ".tmp", a.pid_file)
    while True:
        time.sleep(3600)


class Filterd(filterd_process.FilterdProcess):
    """sar-filterd with debug logging, as every filterd test runs it."""

    def __init__(self, binary, workdir, options, env, name="filterd"):
        super().__init__(binary, workdir, options, env, name=name,
                         extra_args=("--log-level", "debug"))


control = filterd_process.control_request


def wait_for(cond, what, timeout=15.0):
    deadline = time.monotonic() + timeout
    while not cond():
        check(time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


def base_options(workdir, sb, opensm):
    return {
        "source": "slurm",
        "slurm_conf": sb.conf,
        "topology_conf": sb.topology_conf,
        "poll_interval_s": 0.3,
        "settle_s": 0,
        "min_reroute_interval_s": 0,
        "poll_retries": 1,
        "retry_backoff_s": 0.1,
        "mapping_file": os.path.join(workdir, "jobs.map"),
        "trigger": "signal",
        "opensm_pid_file": opensm.pid_file,
        **opensm.filterd_options,
        "state_dir": os.path.join(workdir, "state"),
        "control_socket": socket_path(workdir, "control.sock"),
        "metrics_textfile": os.path.join(workdir, "metrics.prom"),
    }


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "fake-opensm":
    _fake_opensm_main(sys.argv[2:])
