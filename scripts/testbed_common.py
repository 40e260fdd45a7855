"""What the test beds (sar_testbed.py, slurm_testbed.py, filterd_process.py, day_bed.py) and the
integration tests share: child processes started with a log and a parent-death signal, waited on
by a line in their log, and stopped by PID (only our own); the /proc readers behind that;
start/stop as a context manager, log tails for error messages, turning termination signals into
clean exits, stopping every live test bed when the interpreter exits, and free TCP ports."""

import atexit
import itertools
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import weakref


class ProcessError(RuntimeError):
    """A child process did not start, exit or make progress in time; the message carries the
    tail of its log. The test beds' own errors (TestbedError, SlurmTestbedError, FilterdError)
    derive from it."""


# --- starting and stopping children -----------------------------------------------------------

_SETPRIV = shutil.which("setpriv")


def with_parent_death_signal(argv):
    """argv run under `setpriv --pdeathsig KILL`: if this Python process is killed outright
    (SIGKILL from a CTest timeout), the kernel still takes the child down with it. setpriv execs,
    so the PID and argv[0] stay the tool's own. (No preexec_fn: that is unsafe when children
    are started from threads.) The signal fires when the *thread* that started the child ends:
    start long-lived children from a thread that outlives them."""
    if _SETPRIV:
        return [_SETPRIV, "--pdeathsig", "KILL", "--", *argv]
    return list(argv)


def start_logged(argv, log, env=None, cwd=None, stdin=subprocess.DEVNULL, mode="ab",
                 stdout_to_log=True, new_session=False):
    """Starts `argv` with a parent-death signal, stderr (and stdout unless `stdout_to_log` is
    False: then it goes nowhere) into the file `log`, opened with `mode` ("ab" appends, "wb"
    starts afresh). Returns the subprocess.Popen."""
    with open(log, mode) as out:
        return subprocess.Popen(
            with_parent_death_signal([str(a) for a in argv]), env=env, cwd=cwd, stdin=stdin,
            stdout=out if stdout_to_log else subprocess.DEVNULL,
            stderr=subprocess.STDOUT if stdout_to_log else out,
            start_new_session=new_session)


def proc_stat(pid):
    """(command name, state letter, parent PID) from /proc/PID/stat, or None once the PID is
    gone. Zombies show as state 'Z'."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    # The command name is in parentheses and may contain spaces; the state follows it.
    close = stat.rfind(")")
    rest = stat[close + 2:].split()
    return stat[stat.find("(") + 1:close], rest[0], int(rest[1])


def proc_state(pid):
    """State letter of PID, or None once it is gone."""
    st = proc_stat(pid)
    return st[1] if st else None


def wait_gone(pid, timeout):
    """True once PID has exited (absent or a zombie we could not reap) within `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        state = proc_state(pid)
        if state is None or state in "ZX":
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)


def vm_hwm_kb(pid):
    """Peak resident set (VmHWM, kB) of PID so far, or None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def pids_with_env(entry):
    """PIDs (other than ours) whose environment holds `entry` (NAME=value): the processes a
    daemon left behind that carry a test bed's own setting (e.g. its SLURM_CONF)."""
    needle = entry.encode() if isinstance(entry, str) else entry
    me = os.getpid()
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    out.append(int(name))
        except OSError:
            pass
    return out


def stop_processes(procs, grace=3.0):
    """Stops children we started (subprocess.Popen), all at once: SIGTERM (after a SIGCONT, so a
    paused one acts on it), SIGKILL to those still running after `grace` seconds (at once with
    grace=0: a slurmd with running steps hangs on SIGTERM); reaps them. Raises ProcessError if
    one is still there."""
    started = live = [p for p in procs if p is not None and p.returncode is None]
    steps = ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)) if grace > 0 else \
        ((signal.SIGKILL, 10.0),)
    for sig, wait in steps:
        for p in live:
            try:
                # SIGCONT first: a stopped process keeps SIGTERM pending until it runs, so the
                # order does not matter to it, but a SIGCONT arriving after SIGTERM can land
                # in the exit path, and LeakSanitizer's stop-the-world at exit hangs on it
                # (seen as "non-zero exit on SIGTERM" in sanitized runs, 1 in ~20).
                if sig == signal.SIGTERM:
                    os.kill(p.pid, signal.SIGCONT)
                os.kill(p.pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        for p in live:
            try:
                p.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        live = [p for p in live if p.returncode is None]
        if not live:
            break
    stuck = [p for p in started if not wait_gone(p.pid, 5.0)]
    if stuck:
        raise ProcessError("did not exit: " + ", ".join(
            f"{p.pid} ({' '.join(map(str, p.args))})" for p in stuck))


def stop_process(proc, grace=3.0):
    """stop_processes() for one child (None or an exited one is fine)."""
    stop_processes([proc], grace)


class LoggedProcess:
    """A child we started (`proc`, a subprocess.Popen) with a log file it writes: waiting for a
    line in that log, for any condition while it lives, signals by PID, and stop(). Errors are
    `error_class` with the log's tail; a subclass with more to say overrides error()."""

    name = "process"
    error_class = ProcessError

    def __init__(self, proc, log, name=None):
        self.proc = proc
        self.log = log
        if name:
            self.name = name

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc.poll() is None

    def tail(self, lines=30):
        return tail(self.log, lines)

    def error(self, what):
        return self.error_class(f"{what}:\n{self.tail()}")

    def log_offset(self):
        """The log's current size: pass it to wait_log() to wait only for lines written later."""
        try:
            return os.path.getsize(self.log)
        except OSError:
            return 0

    def log_since(self, offset):
        try:
            with open(self.log, "rb") as f:
                f.seek(offset)
                return f.read().decode(errors="replace")
        except FileNotFoundError:
            return ""

    def wait_until(self, cond, what, timeout, interval=0.01):
        """Polls cond() until it returns something true, which is returned. Raises error() if
        the process exits first or `timeout` seconds pass."""
        deadline = time.monotonic() + timeout
        while True:
            got = cond()
            if got:
                return got
            if not self.alive():
                raise self.error(f"{self.name} exited with {self.proc.returncode} while "
                                 f"waiting for {what}")
            if time.monotonic() > deadline:
                raise self.error(f"{self.name}: no {what} within {timeout} s")
            time.sleep(interval)

    def wait_log(self, pattern, offset, timeout):
        """Waits until a log line written after byte `offset` matches regex `pattern`; returns
        the match."""
        rx = re.compile(pattern, re.M)
        return self.wait_until(lambda: rx.search(self.log_since(offset)), f"/{pattern}/",
                               timeout)

    def signal(self, signum):
        os.kill(self.proc.pid, signum)

    def pause(self):
        self.signal(signal.SIGSTOP)

    def resume(self):
        self.signal(signal.SIGCONT)

    def stop(self, grace=3.0):
        """Stops it by PID (SIGTERM, SIGKILL after `grace`; at once with 0); returns the exit
        status. Idempotent."""
        stop_process(self.proc, grace)
        return self.proc.returncode


# --- test beds ----------------------------------------------------------------------------------


class StartStop:
    """`with Bed(...) as bed:` for classes with start() and stop(). A start() that fails is
    stopped at once: a failing __enter__ gets no __exit__, and what did start (daemons, temp
    dirs) must not outlive it."""

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            try:
                self.stop()
            except Exception:  # noqa: BLE001 - report the start's error, not the teardown's
                pass
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


def tail(path, lines=25):
    """The last `lines` lines of a log file, or a note saying why it could not be read."""
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return f"<{path}: {e.strerror}>"


def exit_on_signals():
    """Turns SIGTERM/SIGHUP/SIGINT into SystemExit so `finally` and atexit clean up."""
    def handler(signum, _frame):
        raise SystemExit(128 + signum)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, handler)


def live_registry():
    """A set of running test beds (objects with stop()) that are all stopped at interpreter
    exit; add a test bed when it starts and discard it when it stops."""
    live = weakref.WeakSet()

    def stop_all():
        for tb in list(live):
            try:
                tb.stop()
            except Exception:  # noqa: BLE001 - best effort at interpreter exit
                pass
    atexit.register(stop_all)
    return live


def _port_free(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def _ephemeral_ports():
    """The kernel's range for outgoing connections' local ports."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = (int(x) for x in f.read().split())
        return lo, hi
    except (OSError, ValueError):
        return 32768, 60999


def free_port_block(count, rng=None):
    """A run of `count` free TCP ports on loopback, chosen at random so instances do not collide,
    and outside the ephemeral range: the outgoing connections of a hundred daemons take their
    local ports from there, and one taken between this check and slurmd's bind once left a node
    down ("Unable to bind listen port")."""
    rng = rng or random.Random()
    lo, hi = _ephemeral_ports()
    spans = [(a, b - count) for a, b in ((10000, lo), (hi + 1, 65536)) if b - count > a]
    if not spans:
        raise OSError(f"no room for {count} ports outside the ephemeral range {lo}-{hi}")
    weights = [b - a for a, b in spans]
    for _ in range(200):
        a, b = rng.choices(spans, weights)[0]
        base = rng.randrange(a, b)
        if all(_port_free(p) for p in range(base, base + count)):
            return base
    raise OSError(f"no block of {count} free ports found")


# sockaddr_un.sun_path holds 108 bytes with its NUL. Checkouts at deep paths (CI runners) give
# work directories whose sockets would not fit: those go to one short private directory.
SUN_PATH_MAX = 107
_short_socket_dir = None
_short_socket_count = itertools.count()


def socket_path(directory, name):
    """A UNIX socket path for `name` that belongs with `directory`: directory/name when it fits
    in sun_path, else <short private dir>/<n>-name, with a symlink directory/name -> it so a
    person looking at the work directory still finds it. The private directory (mkdtemp, 0700)
    is removed when the process exits."""
    path = os.path.join(directory, name)
    if len(path.encode()) <= SUN_PATH_MAX:
        return path
    global _short_socket_dir
    if _short_socket_dir is None:
        _short_socket_dir = tempfile.mkdtemp(prefix="sar-s-", dir="/tmp")
        atexit.register(shutil.rmtree, _short_socket_dir, True)
    short = os.path.join(_short_socket_dir, f"{next(_short_socket_count)}-{name}")
    try:
        os.makedirs(directory, exist_ok=True)
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(short, path)
    except OSError:
        pass  # the symlink is only a signpost
    return short
