"""sar-filterd as a child process, for the test beds (tests/integration/filterd_it.py) and the
end-to-end day (day_bed.py): its YAML config written from a dict, its log on stderr, its
Prometheus textfile read back as numbers, its control socket, and stopping it by PID."""

import json
import os
import signal
import socket
import subprocess
import time

import sar_testbed
from testbed_common import tail


class FilterdError(RuntimeError):
    """sar-filterd exited or did not make progress in time; the message carries its log tail."""


def control_request(path, line, timeout=5.0):
    """One request on sar-filterd's control socket (e.g. "status", "poll"); returns the reply."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(line.encode() + b"\n")
        data = b""
        while chunk := sock.recv(4096):
            data += chunk
    return data.decode()


class FilterdProcess:
    """sar-filterd in the foreground. `options` must name `metrics_textfile`; `name` picks the
    config and log file names in `workdir` (several runs can share one directory)."""

    def __init__(self, binary, workdir, options, env, name="sar-filterd", extra_args=()):
        self.config = os.path.join(workdir, f"{name}.yaml")
        self.log = os.path.join(workdir, f"{name}.log")
        self.metrics_file = options["metrics_textfile"]
        self.control_socket = options.get("control_socket")
        with open(self.config, "w") as f:
            for k, v in options.items():
                f.write(f"{k}: {json.dumps(v)}\n")
        with open(self.log, "ab") as err:
            self.proc = subprocess.Popen(
                sar_testbed._with_parent_death_signal(
                    [binary, "--config", self.config, *extra_args]),
                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)

    def alive(self):
        return self.proc.poll() is None

    def tail(self, lines=30):
        return tail(self.log, lines)

    def metrics(self):
        """{name without the sar_filterd_ prefix: value} from the textfile; {} before the first."""
        out = {}
        try:
            with open(self.metrics_file) as f:
                for line in f:
                    if line.startswith("sar_filterd_"):
                        k, v = line.split()
                        out[k[len("sar_filterd_"):]] = float(v)
        except FileNotFoundError:
            pass
        return out

    def wait_polls(self, count, timeout=30.0, errors=False):
        """Waits until `count` more polls (failed polls with errors=True) than now have
        completed; returns the metrics then."""
        key = "poll_errors_total" if errors else "polls_total"
        return self.wait_metric(key, self.metrics().get(key, 0) + count, timeout)

    def wait_polls_total(self, want, timeout=30.0):
        """Waits until `want` polls in all have completed; returns the metrics then."""
        return self.wait_metric("polls_total", want, timeout)

    def wait_metric(self, key, want, timeout):
        deadline = time.monotonic() + timeout
        while True:
            m = self.metrics()
            if m.get(key, 0) >= want:
                return m
            if not self.alive():
                raise FilterdError(f"sar-filterd exited ({self.proc.returncode}):\n{self.tail()}")
            if time.monotonic() > deadline:
                raise FilterdError(f"sar-filterd: {key} did not reach {want:g} in {timeout} s:\n"
                                   f"{self.tail()}")
            time.sleep(0.05)

    def log_offset(self):
        return os.path.getsize(self.log)

    def log_since(self, offset):
        with open(self.log, "rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")

    def control(self, line, timeout=5.0):
        return control_request(self.control_socket, line, timeout)

    def pause(self):
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self):
        os.kill(self.proc.pid, signal.SIGCONT)

    def stop(self, grace=10.0):
        """SIGTERM (after SIGCONT, in case it is paused), SIGKILL after `grace`; returns the exit
        status (0 for a clean exit)."""
        if self.alive():
            os.kill(self.proc.pid, signal.SIGCONT)
        sar_testbed.stop_process(self.proc, grace=grace)
        return self.proc.returncode
