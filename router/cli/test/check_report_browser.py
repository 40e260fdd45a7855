#!/usr/bin/env python3
"""Generated reports in a real browser, where their charts are drawn (Vega-Lite, inlined).

`sar-route study --html` on a small fat-tree, rendered by headless Chromium (--screenshot): the
window's size, mostly white page but far from one colour, and the first two engines' series
colours drawn in many pixels (the points and regression lines of the degradation charts). Then
the DOM after the scripts ran (--dump-dom) of the study, of `sar-route replay --html` and of
`sar-route compare --html`: every chart drawn as SVG with its title, axis titles with units, a
legend naming each engine (engines equal at every event as one entry "sar = dfsssp = minhop"),
the heat maps' colour scale, and no axis with the same tick label twice. Exit 77 (skipped)
without a browser.

usage: check_report_browser.py <sar-route> <workdir> <source dir>
The browser: $SAR_BROWSER, else chromium-headless-shell, chromium, chromium-browser on PATH."""
import html as htmllib
import json
import re
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


def chromium(exe, work, url, *args):
    """Runs headless Chromium on `url` with `args`; returns its stdout. The virtual time budget
    lets the charts' scripts finish before the screenshot or the DOM dump."""
    # --no-sandbox: Chromium's sandbox refuses to run as root (CI containers); the page is ours.
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           f"--user-data-dir={os.path.join(work, 'profile')}", "--virtual-time-budget=10000",
           *args, "file://" + url]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=80,
                          env=dict(os.environ, HOME=work))
    if done.returncode != 0:
        fail(f"{' '.join(cmd)}: exit {done.returncode}\n{done.stderr[-2000:]}")
    return done.stdout


def svg_texts(svg):
    return [htmllib.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def check_dom(exe, work, page, want_title, want_legends, want_axes):
    """The page's DOM after its scripts: the title; per chart <div> one drawn <svg> whose text
    has the chart's title, and no axis that repeats a tick label; `want_legends` and
    `want_axes` among the charts' texts."""
    dom = chromium(exe, work, page, "--dump-dom")
    title = re.search(r"<title>([^<]*)</title>", dom)
    if not title or htmllib.unescape(title.group(1)) != want_title:
        fail(f"{page}: title {title and title.group(1)!r}, not {want_title!r}")
    divs = re.findall(r'<div class="chart" data-kind="([a-z]+)" data-title="([^"]*)">(.*?)'
                      r'</svg>', dom, re.S)
    charts = dom.count('class="chart"')
    if not divs or len(divs) != charts:
        fail(f"{page}: {len(divs)} charts drawn of {charts}")
    texts = []
    for kind, name, body in divs:
        name = htmllib.unescape(name)
        t = svg_texts(body)
        if "<svg" not in body or name not in t:
            fail(f"{page}: chart {name!r} not drawn (texts {t[:10]})")
        for axis in re.findall(r'<g class="mark-text role-axis-label"[^>]*>(.*?)</g>', body, re.S):
            labels = svg_texts(axis)
            if len(labels) != len(set(labels)):
                fail(f"{page}: chart {name!r} repeats a tick label: {labels}")
        texts += t
    for want in want_legends + want_axes:
        if want not in texts:
            fail(f"{page}: no {want!r} in the charts' text")
    print(f"{os.path.basename(page)}: {len(divs)} charts drawn; legends {want_legends}")
    return dom


def main():
    sar_route, work, src = sys.argv[1], sys.argv[2], sys.argv[3]
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
    chromium(exe, work, html, f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={png}")
    if not os.path.exists(png):
        fail("no screenshot")
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
    check_dom(exe, work, html, "Fail-in-place study: " + topo, ["dfsssp", "osrm2", "engine"],
              ["failed cables + switches", "throughput (link bandwidths)"])

    # The replay report: time series and the before/after heat maps.
    rtopo, rhtml = os.path.join(work, "ft.topo"), os.path.join(work, "replay.html")
    subprocess.run([sar_route, "gen", "-f", "ft2:4,6", "-o", rtopo], check=True,
                   capture_output=True)
    subprocess.run([sar_route, "replay", "-t", rtopo, "--swf",
                    os.path.join(src, "tests/data/kth-sp2-slice.swf"), "-e", "sar,dfsssp,minhop",
                    "--days", "1", "--html", rhtml, "--progress", "off", "--threads", "1"],
                   check=True, capture_output=True)
    check_dom(exe, work, rhtml, "sar-route replay: kth-sp2-slice.swf on ft.topo",
              ["sar = dfsssp = minhop", "engine"],
              ["time (days since the first event)", "max effective EFI (routes on a channel)",
               "dark fiber (share of channels)", "upper switch", "leaf switch"])
    # A heat map's colour scale: the legend's gradient, with its title.
    dom = open(rhtml).read()
    spec = json.loads(re.search(r'data-kind="heatmap"[^>]*><script[^>]*>(.*?)</script>', dom,
                                re.S).group(1))
    if spec["layer"][0]["encoding"]["color"]["title"][0] != "effective EFI":
        fail(f"heat map colour legend: {spec['layer'][0]['encoding']['color']}")
    dom = chromium(exe, work, rhtml, "--dump-dom")
    gradients = re.findall(r'aria-label="Gradient legend titled .effective EFI[^"]*values from 0 '
                           r'to (\d+)"', dom)
    if len(gradients) != 2 or len(set(gradients)) != 1:
        fail(f"the heat maps have no common colour scale legend: {gradients}")
    # 0 (a dark link) is white on the scale.
    stops = re.findall(r'<stop offset="0" stop-color="([^"]+)"', dom)
    if len(stops) != 2 or set(stops) != {"rgb(255, 255, 255)"}:
        fail(f"the heat maps' colour scales do not start at white: {stops}")
    # compare --html on the tree with 2 cables cut: a heat map per engine, grey where no cable.
    degraded, jobs = os.path.join(work, "ft-2.topo"), os.path.join(work, "jobs.map")
    chtml = os.path.join(work, "compare.html")
    subprocess.run([sar_route, "gen", "-f", "ft2:4,6", "--fail-links", "2", "--seed", "1", "-o",
                    degraded], check=True, capture_output=True)
    subprocess.run([sar_route, "jobmix", "-t", degraded, "--max-size", "8", "-o", jobs],
                   check=True, capture_output=True)
    subprocess.run([sar_route, "compare", "-t", degraded, "--jobs", jobs, "-e", "sar,dfsssp",
                    "--threads", "1", "--html", chtml], check=True, capture_output=True)
    dom = check_dom(exe, work, chtml, "sar-route compare: " + degraded, [],
                    ["upper switch", "leaf switch", "grey: no cable"])
    grey = dom.count('fill="#bbbbbb"')
    if grey < 4:
        fail(f"compare: {grey} grey cells drawn, not 2 per map")
    print("PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
