#!/usr/bin/env python3
"""Every ELF file this build installs carries Debian's hardening (issue 34; cmake/hardening.cmake):
read back with readelf from a DESTDIR staging install, as the packages ship them:

- full RELRO: a GNU_RELRO segment and BIND_NOW (DT_FLAGS BIND_NOW or DT_FLAGS_1 NOW);
- PIE: every program (it has an interpreter) is of type DYN;
- stack protector: __stack_chk_fail is imported by every program and by libosmsar.so (the
  plugin runs inside root's OpenSM); other libraries where they have a function that needs it;
- FORTIFY: a file that calls a function glibc fortifies (memcpy, read, snprintf, ...) calls
  its __*_chk form somewhere too (hardening-check's rule);
- and `hardening-check` (devscripts) agrees, where it is installed.
Skipped (exit 77) when the build was configured with SAR_HARDENING off or with the sanitizers.
Exit 0 if all hold; every failure is printed."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Functions glibc has a __<name>_chk form of, which _FORTIFY_SOURCE=2 uses where it can.
FORTIFIABLE = {"memcpy", "memmove", "memset", "mempcpy", "strcpy", "stpcpy", "strncpy", "strcat",
               "strncat", "sprintf", "snprintf", "vsprintf", "vsnprintf", "printf", "fprintf",
               "vfprintf", "read", "pread", "recv", "recvfrom", "fgets", "realpath", "getcwd",
               "readlink", "wcscpy", "confstr", "getgroups", "ttyname_r", "gethostname",
               "fread", "poll", "ppoll", "syslog", "asprintf", "dprintf", "vdprintf"}
MUST_PROTECT_STACK = ("libosmsar.so",)
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def readelf(*args):
    return subprocess.run(["readelf", "-W", *args], capture_output=True, text=True,
                          timeout=60).stdout


def is_elf(path):
    if os.path.islink(path) or not os.path.isfile(path):
        return False
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def imported(path):
    """Names of the undefined dynamic symbols (without @version)."""
    names = set()
    for line in readelf("--dyn-syms", path).splitlines():
        cols = line.split()
        if len(cols) >= 8 and cols[6] == "UND":
            names.add(cols[7].split("@")[0])
    return names


def check_file(path, rel):
    header = readelf("-h", path)
    segments = readelf("-l", path)
    dynamic = readelf("-d", path)
    is_program = "INTERP" in segments
    elf_type = re.search(r"Type:\s+(\S+)", header)
    check("GNU_RELRO" in segments, f"{rel}: RELRO segment")
    check(re.search(r"\(FLAGS\)\s.*\bBIND_NOW\b", dynamic) is not None
          or re.search(r"\(FLAGS_1\)\s.*\bNOW\b", dynamic) is not None, f"{rel}: BIND_NOW")
    if is_program:
        check(elf_type is not None and elf_type.group(1) == "DYN",
              f"{rel}: PIE (type {elf_type.group(1) if elf_type else '?'})")
    syms = imported(path)
    protected = "__stack_chk_fail" in syms
    if is_program or os.path.basename(rel) in MUST_PROTECT_STACK:
        check(protected, f"{rel}: stack protector (__stack_chk_fail)")
    chk = sorted(s for s in syms if re.fullmatch(r"__\w+_chk", s) and s != "__stack_chk_fail")
    plain = sorted(syms & FORTIFIABLE)
    check(bool(chk) or not plain,
          f"{rel}: FORTIFY ({len(chk)} _chk function(s); unfortified: {' '.join(plain) or 'none'})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", required=True)
    args = ap.parse_args()
    cache = open(os.path.join(args.build_dir, "CMakeCache.txt")).read()
    if re.search(r"^SAR_HARDENING:BOOL=(OFF|NO|FALSE|0)$", cache, re.M | re.I) or \
            re.search(r"^SAR_SANITIZE:BOOL=(ON|YES|TRUE|1)$", cache, re.M | re.I):
        print("skipped: this build is not hardened (SAR_HARDENING off or SAR_SANITIZE on)")
        return 77
    with tempfile.TemporaryDirectory() as stage:
        p = subprocess.run(["cmake", "--install", args.build_dir], capture_output=True, text=True,
                           env=dict(os.environ, DESTDIR=stage), timeout=300)
        check(p.returncode == 0, f"cmake --install into a stage ({p.stderr.strip()[-300:]})")
        elves = []
        for root, _, files in os.walk(stage):
            elves += [os.path.join(root, f) for f in files if is_elf(os.path.join(root, f))]
        names = sorted(os.path.relpath(e, stage) for e in elves)
        check(any(n.endswith("/sar-filterd") for n in names)
              and any(n.endswith("/libosmsar.so") for n in names) or not names,
              f"{len(names)} ELF file(s) installed, sar-filterd and libosmsar.so among them")
        check(bool(names), "ELF files found in the stage")
        for e in sorted(elves):
            check_file(e, os.path.relpath(e, stage))
        tool = shutil.which("hardening-check")
        if tool is None:
            print("note hardening-check (devscripts) not installed: readelf only")
        else:
            for e in sorted(elves):
                r = subprocess.run([tool, "--nocfprotection", "--quiet", e], capture_output=True,
                                   text=True, timeout=60)
                check(r.returncode == 0, f"hardening-check {os.path.relpath(e, stage)}"
                      + (": " + r.stdout.strip() if r.returncode else ""))
    print("FAILED: " + "; ".join(failures) if failures else "all ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
