"""What the OpenSM and SLURM test beds (sar_testbed.py, slurm_testbed.py, day_bed.py) share:
start/stop as a context manager, log tails for error messages, turning termination signals into
clean exits, stopping every live test bed when the interpreter exits, and free TCP ports."""

import atexit
import random
import signal
import socket
import weakref


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
