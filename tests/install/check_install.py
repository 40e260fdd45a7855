#!/usr/bin/env python3
"""Installs this build into a staging root the way docs/operations.md says (DESTDIR=... cmake
--install) and checks that the installed tree is one story:

- the unit's ExecStart binary, its --config file and its Documentation= page exist in the stage;
- sar-filterd's and sar-notify's built-in default config paths are the installed ones;
- opensm.conf's event_plugin_options names the installed osmsar.conf, and libosmsar.so is in
  the library directory; plugstack.conf names the installed sar_pattern.so;
- re-running the install keeps an edited config (the new default goes beside it as .dist);
- `cmake --install --prefix <other>` is refused, naming the configured prefix;
- `systemd-analyze verify --root` accepts the unit, where systemd-analyze has --root.
Exit 0 if all hold; every failure is printed."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def staged(stage, path):
    return os.path.join(stage, path.lstrip("/"))


def install(build, stage, extra=()):
    env = dict(os.environ, DESTDIR=stage)
    return subprocess.run(["cmake", "--install", build, *extra], env=env, capture_output=True,
                          text=True, timeout=300)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--prefix", required=True, help="the build's CMAKE_INSTALL_PREFIX")
    ap.add_argument("--sysconfdir", required=True, help="its CMAKE_INSTALL_FULL_SYSCONFDIR")
    ap.add_argument("--libdir", required=True, help="its CMAKE_INSTALL_FULL_LIBDIR")
    args = ap.parse_args()
    stage = tempfile.mkdtemp(prefix="sar_install_")
    try:
        r = install(args.build_dir, stage)
        check(r.returncode == 0, f"cmake --install into {stage} (rc {r.returncode}) {r.stderr[-500:]}")
        if r.returncode != 0:
            return 1
        unit = staged(stage, f"{args.prefix}/lib/systemd/system/sar-filterd.service")
        check(os.path.isfile(unit), f"unit installed at {unit}")
        text = open(unit).read() if os.path.isfile(unit) else ""
        m = re.search(r"^ExecStart=(\S+) --config (\S+)", text, re.M)
        check(m is not None, "unit has ExecStart=<binary> --config <file>")
        if m:
            exe, conf = m.group(1), m.group(2)
            check(os.access(staged(stage, exe), os.X_OK), f"ExecStart binary {exe} installed")
            check(os.path.isfile(staged(stage, conf)), f"unit's --config {conf} installed")
            check(conf == f"{args.sysconfdir}/sar/sar-filterd.yaml",
                  f"unit's config {conf} is under the build's sysconfdir {args.sysconfdir}")
            out = subprocess.run([staged(stage, exe), "--help"], capture_output=True, text=True,
                                 timeout=30).stdout
            check(conf in out, f"sar-filterd's default config (--help) is {conf}")
        d = re.search(r"^Documentation=file:(\S+)", text, re.M)
        check(d is not None and os.path.isfile(staged(stage, d.group(1))),
              f"unit's Documentation= page installed ({d.group(1) if d else 'none'})")
        osm_conf = staged(stage, f"{args.sysconfdir}/sar/opensm.conf")
        check(os.path.isfile(osm_conf), f"opensm.conf sample installed at {osm_conf}")
        if os.path.isfile(osm_conf):
            e = re.search(r"^event_plugin_options (\S+)", open(osm_conf).read(), re.M)
            check(e is not None and os.path.isfile(staged(stage, e.group(1))),
                  f"opensm.conf's event_plugin_options {e.group(1) if e else 'none'} installed")
        if os.path.isdir(os.path.join(args.build_dir, "opensm-patch")) and any(
                f.startswith("libosmsar") for f in os.listdir(os.path.join(args.build_dir,
                                                                           "opensm-patch"))):
            check(os.path.isfile(staged(stage, f"{args.libdir}/libosmsar.so")),
                  f"libosmsar.so in {args.libdir}")
        plug = staged(stage, f"{args.sysconfdir}/sar/plugstack.conf")
        if os.path.isfile(plug):
            p = re.search(r"^required (\S+)", open(plug).read(), re.M)
            check(p is not None and os.path.isfile(staged(stage, p.group(1))),
                  f"plugstack.conf's plugin {p.group(1) if p else 'none'} installed")
            notify = staged(stage, f"{args.prefix}/sbin/sar-notify")
            out = subprocess.run([notify, "--help"], capture_output=True, text=True,
                                 timeout=30).stdout
            check(f"{args.sysconfdir}/sar/sar-notify.conf" in out,
                  "sar-notify's default config is the installed sar-notify.conf")
        # An edited config survives a second install.
        yaml = staged(stage, f"{args.sysconfdir}/sar/sar-filterd.yaml")
        with open(yaml, "a") as f:
            f.write("# edited by the site\n")
        r = install(args.build_dir, stage)
        check(r.returncode == 0, "second cmake --install")
        check(open(yaml).read().endswith("# edited by the site\n"),
              "an edited sar-filterd.yaml is kept by a second install")
        check(os.path.isfile(yaml + ".dist") and "edited" not in open(yaml + ".dist").read(),
              "the new default goes beside it as sar-filterd.yaml.dist")
        check("Keeping the edited" in r.stdout, "the install log says it kept the edited file")
        # --prefix at install time would install files naming the configured paths: refused.
        other = tempfile.mkdtemp(prefix="sar_install_other_")
        try:
            r = subprocess.run(["cmake", "--install", args.build_dir, "--prefix", other + "/x"],
                               capture_output=True, text=True, timeout=300)
            check(r.returncode != 0 and args.prefix in (r.stdout + r.stderr)
                  and not os.path.exists(other + "/x/bin"),
                  "cmake --install --prefix <other> is refused, naming the configured prefix")
        finally:
            shutil.rmtree(other, ignore_errors=True)
        sa = shutil.which("systemd-analyze")
        if sa and "--root" in subprocess.run([sa, "--help"], capture_output=True,
                                             text=True).stdout:
            r = subprocess.run([sa, "verify", f"--root={stage}", unit], capture_output=True,
                               text=True, timeout=60)
            # The stage holds only sar's files (no /bin/kill): judge the lines about ours.
            ours = m.group(1) if m else "sar-filterd"
            bad = [l for l in (r.stdout + r.stderr).splitlines() if ours in l and
                   ("not executable" in l or "No such file" in l)]
            check(not bad, "systemd-analyze verify --root finds the unit's binary: " +
                  "; ".join(bad))
        else:
            print("skip systemd-analyze verify --root (not available)")
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
