#!/usr/bin/env python3
"""One man page from a program's --help with help2man (docs/man/CMakeLists.txt). A program with
subcommands (sar-route) gets a SUBCOMMANDS section made of every subcommand's --help, so each
of their options is in the page too. Writes the page gzipped (-9n, reproducible)."""
import argparse
import gzip
import os
import re
import subprocess
import sys
import tempfile


def help_text(argv):
    p = subprocess.run(argv + ["--help"], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        sys.exit(f"make_man: {' '.join(argv)} --help: exit {p.returncode}\n{p.stderr}")
    return p.stdout


def subcommands(text):
    """Names listed under CLI11's 'SUBCOMMANDS:' (or 'Subcommands:') heading."""
    m = re.search(r"^SUBCOMMANDS:\s*$(.*?)(?:^\S|\Z)", text, re.M | re.S | re.I)
    if not m:
        return []
    return [line.split()[0] for line in m.group(1).splitlines() if line.strip()]


def roff_literal(text):
    out = []
    for line in text.rstrip("\n").splitlines():
        line = line.replace("\\", "\\e").replace("-", "\\-")
        if line.startswith((".", "'")):
            line = "\\&" + line
        out.append(line)
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for a in ("--help2man", "--binary", "--name", "--section", "--version", "--what",
              "--include", "-o"):
        ap.add_argument(a, required=True)
    args = ap.parse_args()
    include = open(args.include).read()
    subs = subcommands(help_text([args.binary]))
    if subs:
        include += "\n[SUBCOMMANDS]\n"
        for s in subs:
            # CLI11 prints a subcommand's usage with argv[0], the build tree's path: the page
            # shows the installed program's name instead.
            text = help_text([args.binary, s]).replace(args.binary, args.name)
            include += f".SS {s}\n.nf\n{roff_literal(text)}\n.fi\n"
    # The page's date: SOURCE_DATE_EPOCH if the build sets it (reproducible builds), else when
    # the program was built.
    epoch = os.environ.get("SOURCE_DATE_EPOCH") or str(int(os.stat(args.binary).st_mtime))
    with tempfile.TemporaryDirectory() as tmp:
        inc = os.path.join(tmp, "include.h2m")
        with open(inc, "w") as f:
            f.write(include)
        page = os.path.join(tmp, "page")
        p = subprocess.run([args.help2man, "--no-info", "--no-discard-stderr",
                            f"--section={args.section}", f"--name={args.what}",
                            f"--version-string={args.version}", f"--include={inc}",
                            "-o", page, args.binary], capture_output=True, text=True,
                           timeout=120, env=dict(os.environ, SOURCE_DATE_EPOCH=epoch))
        if p.returncode != 0:
            sys.exit(f"make_man: help2man {args.binary}: exit {p.returncode}\n{p.stderr}")
        data = open(page, "rb").read()
    build_dir = os.path.dirname(os.path.abspath(args.binary))
    if build_dir.encode() in data.replace(b"\\-", b"-"):
        sys.exit(f"make_man: the page of {args.name} names the build directory {build_dir}")
    tmp_out = args.o + ".tmp"
    with open(tmp_out, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz:
            gz.write(data)
    os.replace(tmp_out, args.o)


if __name__ == "__main__":
    main()
