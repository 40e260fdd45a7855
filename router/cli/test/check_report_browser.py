#!/usr/bin/env python3
"""A generated report in a real browser: `sar-route study --html` on a small fat-tree, rendered by
headless Chromium (--screenshot), and the PNG checked: the window's size, mostly white page
but far from one colour, and the first two engines' series colours drawn in many pixels (the
points and regression lines of the degradation charts). Exit 77 (skipped) without a browser.

usage: check_report_browser.py <sar-route> <workdir>
The browser: $SAR_BROWSER, else chromium-headless-shell, chromium, chromium-browser on PATH."""
import os
import shutil
import struct
import subprocess
import sys
import zlib

WIDTH, HEIGHT = 1000, 1400
# report_html.cc's first two series colours (kColours): the study's first two engines.
SERIES = {"dfsssp": (0xd6, 0x27, 0x28), "osrm2": (0x1f, 0x77, 0xb4)}


def fail(msg):
    print(f"FAILED: {msg}", file=sys.stderr)
    sys.exit(1)


def browser():
    for name in (os.environ.get("SAR_BROWSER"), "chromium-headless-shell", "chromium",
                 "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def decode_png(data):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB or RGBA PNG, unfiltered here
    (no imaging library needed)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("the screenshot is not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in (2, 6):
                fail(f"unexpected PNG format: depth {depth}, colour type {colour}")
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 255
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        rows.append([tuple(line[i:i + 3]) for i in range(0, stride, bpp)])
        prev = line
    return width, height, rows


def main():
    sar_route, work = sys.argv[1], sys.argv[2]
    exe = browser()
    if exe is None:
        print("SKIPPED: no chromium on PATH (set SAR_BROWSER)")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    topo, html, png = (os.path.join(work, n) for n in ("f.topo", "study.html", "study.png"))
    # Yuan's FT(8,2): osrm2 routes it with LMC 1 until the first cut cable.
    subprocess.run([sar_route, "gen", "-f", "ft2:4,8", "--lmc", "1", "-o", topo], check=True,
                   capture_output=True)
    subprocess.run([sar_route, "study", "-t", topo, "--engines", "dfsssp,osrm2", "--links",
                    "0,1,2,3", "--seeds", "2", "--html", html, "--progress", "off"], check=True,
                   capture_output=True)
    # --no-sandbox: Chromium's sandbox refuses to run as root (CI containers); the page is ours.
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           f"--user-data-dir={os.path.join(work, 'profile')}",
           f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={png}", "file://" + html]
    env = dict(os.environ, HOME=work)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=80, env=env)
    if done.returncode != 0 or not os.path.exists(png):
        fail(f"{' '.join(cmd)}: exit {done.returncode}\n{done.stderr[-2000:]}")
    data = open(png, "rb").read()
    width, height, rows = decode_png(data)
    if (width, height) != (WIDTH, HEIGHT):
        fail(f"screenshot is {width}x{height}, asked for {WIDTH}x{HEIGHT}")
    counts = {}
    for row in rows:
        for px in row:
            counts[px] = counts.get(px, 0) + 1
    total = width * height
    white = counts.get((255, 255, 255), 0)
    print(f"{len(data)} bytes, {len(counts)} colours, {100 * white / total:.1f}% white")
    if len(counts) < 50 or white > 0.99 * total or white < 0.5 * total:
        fail(f"the page does not look rendered: {len(counts)} colours, {white} of {total} white")
    for engine, colour in SERIES.items():
        n = counts.get(colour, 0)
        print(f"{engine}: {n} pixels of #{bytes(colour).hex()}")
        if n < 30:
            fail(f"{engine}'s series colour #{bytes(colour).hex()} in only {n} pixels")
    # Text: dark pixels of the tables and labels, a good share of the page.
    dark = sum(c for px, c in counts.items() if max(px) < 80)
    if dark < 0.005 * total:
        fail(f"hardly any text: {dark} dark pixels")
    print("PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
