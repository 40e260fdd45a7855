"""What the OpenSM and SLURM test beds (sar_testbed.py, slurm_testbed.py) share: log tails for
error messages, turning termination signals into clean exits, and stopping every live test bed
when the interpreter exits."""

import atexit
import signal
import weakref


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
