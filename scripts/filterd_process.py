"""sar-filterd as a child process, for the test beds (tests/integration/filterd_it.py) and the
end-to-end day (day_bed.py): its YAML config written from a dict, its log on stderr, its
Prometheus textfile read back as numbers, its control socket, and stopping it by PID."""

import json
import os
import socket

from testbed_common import LoggedProcess, ProcessError, start_logged


class FilterdError(ProcessError):
    """sar-filterd exited or did not make progress in time; the message carries its log tail."""


def write_config(path, options):
    """sar-filterd's YAML config from a dict: one `key: value` line each, values as JSON (a
    subset of YAML)."""
    with open(path, "w") as f:
        for k, v in options.items():
            f.write(f"{k}: {json.dumps(v)}\n")


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


class FilterdProcess(LoggedProcess):
    """sar-filterd in the foreground. `options` must name `metrics_textfile`; `name` picks the
    config and log file names in `workdir` (several runs can share one directory)."""

    name = "sar-filterd"
    error_class = FilterdError

    def __init__(self, binary, workdir, options, env, name="sar-filterd", extra_args=()):
        self.config = os.path.join(workdir, f"{name}.yaml")
        log = os.path.join(workdir, f"{name}.log")
        self.metrics_file = options["metrics_textfile"]
        self.control_socket = options.get("control_socket")
        write_config(self.config, options)
        super().__init__(start_logged([binary, "--config", self.config, *extra_args], log,
                                      env=env, stdout_to_log=False), log)

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
        """Waits until metric `key` reaches `want`; returns the metrics then."""
        def reached():
            m = self.metrics()
            return [m] if m.get(key, 0) >= want else None
        return self.wait_until(reached, f"{key} >= {want:g}", timeout, interval=0.05)[0]

    def control(self, line, timeout=5.0):
        return control_request(self.control_socket, line, timeout)

    def stop(self, grace=10.0):
        """SIGTERM (after a SIGCONT, in case it is paused), SIGKILL after `grace`; returns the exit
        status (0 for a clean exit)."""
        return super().stop(grace)
