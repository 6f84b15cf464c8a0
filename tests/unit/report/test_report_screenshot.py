# -*- coding: utf-8 -*-
"""Render the HTML fabric report from fixture data and screenshot it with headless Chromium.

Checks that the single-file report renders in a real browser (Debian's
`chromium` package) into a non-trivial picture: the PNG has the requested
size, is not blank (many colours, much non-background area) and shows the
report's colours: the header bar, the red highlight of problems and the green
of a passing test. The data is the REAL lab facts, a REAL roce_qos
check-mode result, a GPU host from the DERIVED topology fixture, an
unreachable host and a failed test (tests/unit/fixtures/fabric/README.md).

Chromium comes from Debian 12 (pinned in tools/deps/apt-packages.txt:
`chromium=156.0.8078.79-1~deb12u1`); without it the test is skipped and says so.
The screenshot is also left in tests/output/ for a human to look at. The fabric plan's page
(fabric-plan.html, same look) is drawn and checked the same way, and so is a report with the workload's
results (the MPI allreduce built by workload.allreduce_result from test_workload.py's lab-shaped output,
NCCL's and ucx_perftest's from the CLEARLY NAMED TEST DOUBLES of test_report.py) and the DERIVED GPU host:
its charts (heatmaps of the figures per host pair, allreduce bandwidth, GPU-NIC matrix) must be drawn, in
the page's order.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os
import shutil
import struct
import subprocess
import zlib

import pytest

from ansible_collections.rdma.fabric.plugins.plugin_utils import report as rpt
from ansible_collections.rdma.fabric.plugins.plugin_utils import report_svg as rs
from ansible_collections.rdma.fabric.tests.unit.plugins.plugin_utils import test_report as data
from ansible_collections.rdma.fabric.tests.unit.plugins.plugin_utils.test_fabric_plan import fleet_plan

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures", "fabric")
OUTPUT = os.path.join(HERE, "..", "..", "output")
WIDTH, HEIGHT = 1280, 2000


def load(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return json.load(f)


def report_html():
    lab1, lab2 = load("lab_lab1_facts.json"), load("lab_lab2_facts.json")
    gpu = copy.deepcopy(lab1)
    hosts = {
        "lab1": {"reachable": True, "rdma": lab1["rdma"], "gpudirect": lab1["gpudirect"],
                 "qos": {"eth1": load("lab_lab1_roce_qos_check.json")}},
        "lab2": {"reachable": False, "message": "Failed to connect to the host via ssh: Connection refused",
                 "facts_source": "cache", "rdma": lab2["rdma"]},
        "gpu-a01": {"reachable": True, "rdma": gpu["rdma"], "gpudirect": load("derived_gpu_nic_topology_gpudirect.json")},
    }
    common = dict(hosts=["lab1", "gpu-a01"], server="lab1", client="gpu-a01", devices=["rxe0", "rxe0"], ports=[1, 1],
                  gid_indices=[1, 1], server_ip="192.0.2.11")
    validation = [
        dict(common, test="precheck", passed=True, message="pre-check ok"),
        dict(common, test="ib_write_bw", passed=True, bandwidth_gbps=0.0481, min_bandwidth_gbps=0.0025,
             message="ib_write_bw client ok: 0.048 Gb/s"),
        dict(common, test="ib_send_lat", passed=False, latency_us=27080.55, max_latency_us=10.0,
             message="ib_send_lat client failed: latency 27080.55 us above the threshold 10.00 us"),
        dict(common, test="rping", passed=False, hosts=["gpu-a01", "lab2"], server="gpu-a01", client="lab2",
             message="not run: pre-check failed: lab2: unreachable or failed before validation"),
    ]
    return rpt.render_html(rpt.build_report(hosts, validation, generated_at="2026-11-21T01:00:00+00:00"))


def read_png(path):
    """Decode an 8-bit non-interlaced RGB/RGBA PNG (what Chromium writes): (width, height, rows of pixels)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _c, _f, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _y in range(height):
        ftype, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 0xFF
            elif ftype == 2:
                line[x] = (line[x] + b) & 0xFF
            elif ftype == 3:
                line[x] = (line[x] + ((a + b) >> 1)) & 0xFF
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        prev = line
    return width, height, rows


def near(pixel, rgb, tol=6):
    return all(abs(p - q) <= tol for p, q in zip(pixel, rgb))


def screenshot(tmp_path, name, html, height=HEIGHT):
    """The page ``html`` as Chromium draws it: the PNG's path (also left in tests/output/ for a human)."""
    browser = shutil.which("chromium")
    if not browser:
        pytest.skip("chromium is not installed (Debian 12: apt-get install chromium=156.0.8078.79-1~deb12u1)")
    page = tmp_path / ("%s.html" % name)
    page.write_text(html)
    png = tmp_path / ("%s.png" % name)
    argv = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--user-data-dir=%s" % (tmp_path / "profile"), "--screenshot=%s" % png,
            "--window-size=%d,%d" % (WIDTH, height), "file://%s" % page]
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False, timeout=240)
    assert proc.returncode == 0 and png.exists(), proc.stdout[-2000:]
    if os.path.isdir(os.path.dirname(OUTPUT)):
        os.makedirs(OUTPUT, exist_ok=True)
        shutil.copy(str(png), os.path.join(OUTPUT, "%s-screenshot.png" % name))
    return png


def test_html_report_screenshot(tmp_path):
    png = screenshot(tmp_path, "fabric-report", report_html())
    assert png.stat().st_size > 30000  # a blank 1280x2000 page compresses to a few kB
    width, height, rows = read_png(str(png))
    assert (width, height) == (WIDTH, HEIGHT)
    sample = [px for row in rows[::4] for px in row[::4]]
    background = max(set(sample), key=sample.count)
    assert near(background, (0xF4, 0xF6, 0xFA)) or near(background, (0xFF, 0xFF, 0xFF))
    colours = set(sample)
    assert len(colours) > 200, "too few colours: %d" % len(colours)
    busy = sum(1 for px in sample if not near(px, background, 3)) / float(len(sample))
    assert busy > 0.25, "mostly empty: %.2f" % busy
    # the header bar, a problem highlight (failed row / unreachable border), and a PASS badge
    assert any(near(px, (0x1D, 0x35, 0x57)) for px in rows[10]), "no header bar at the top"
    assert sum(1 for px in sample if near(px, (0xFF, 0xE3, 0xE3)) or near(px, (0xD6, 0x28, 0x28))) > 50
    assert sum(1 for px in sample if near(px, (0xD8, 0xF3, 0xDC)) or near(px, (0xE6, 0xF6, 0xEA))) > 10


def test_html_plan_screenshot(tmp_path):
    """fabric-plan.html of a fleet plan (tests/unit/plugins/plugin_utils/test_fabric_plan.py): header bar, the green
    CHECK MODE badge, the red of the failed and unreachable hosts, the orange of the hosts that would change."""
    png = screenshot(tmp_path, "fabric-plan", rpt.render_plan_html(fleet_plan(), generated_at="2026-11-26T16:00:00+00:00"))
    width, height, rows = read_png(str(png))
    assert (width, height) == (WIDTH, HEIGHT)
    sample = [px for row in rows[::2] for px in row[::2]]
    background = max(set(sample), key=sample.count)
    assert near(background, (0xF4, 0xF6, 0xFA)) or near(background, (0xFF, 0xFF, 0xFF))
    assert len(set(sample)) > 100, "too few colours: %d" % len(set(sample))
    assert any(near(px, (0x1D, 0x35, 0x57)) for px in rows[10]), "no header bar at the top"
    assert sum(1 for px in sample if near(px, (0xD8, 0xF3, 0xDC))) > 10, "no CHECK MODE badge"
    assert sum(1 for px in sample if near(px, (0xD6, 0x28, 0x28)) or near(px, (0xFF, 0xD6, 0xD6))) > 30, "no red host"
    assert sum(1 for px in sample if near(px, (0xF4, 0xA2, 0x61)) or near(px, (0xFF, 0xE8, 0xCC))) > 30, "no host that would change"


def _hex(colour):
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def _rows_with(rows, colour, tol, least=8):
    """The rows (every 2nd) holding at least ``least`` pixels (every 2nd) of ``colour``."""
    rgb = _hex(colour)
    return [y for y in range(0, len(rows), 2) if sum(1 for px in rows[y][::2] if near(px, rgb, tol)) >= least]


def test_html_report_with_workload_and_gpu_host_screenshot(tmp_path):
    """The Validation section's heatmaps of bandwidth and latency, the Workload section's allreduce chart (MPI and
    NCCL lines), gpu1's GPU-NIC matrix in nvidia-smi's colours: each drawn, one below the other."""
    validation = data.validation() + data.workload_validation() + [
        dict(data.validation()[1], server="gpu1", client="lab1", hosts=["gpu1", "lab1"], bandwidth_gbps=0.012),
        dict(data.validation()[2], server="gpu1", client="lab1", hosts=["gpu1", "lab1"], latency_us=9.5, passed=True)]
    html = rpt.render_html(rpt.build_report(data.report_hosts(), validation, generated_at="2026-11-26T00:00:00+00:00"))
    height = 4200
    png = screenshot(tmp_path, "fabric-report-workload", html, height=height)
    width, height_, rows = read_png(str(png))
    assert (width, height_) == (WIDTH, height)
    sample = [px for row in rows[::4] for px in row[::4]]
    background = max(set(sample), key=sample.count)
    assert sum(1 for px in sample if not near(px, background, 3)) / float(len(sample)) > 0.25, "mostly empty"
    # the colour scales under the bandwidth and latency heatmaps (the yellow middle of the gradient)
    scales = _rows_with(rows, rs.gradient_colour(0.5), 12)
    assert scales, "no colour scale of a heatmap"
    # the allreduce chart: both runs' lines (MPI: the first series colour, also the header's, so below it)
    nccl = _rows_with(rows, rs.SERIES_COLOURS[1], 10, least=2)
    mpi = [y for y in _rows_with(rows, rs.SERIES_COLOURS[0], 10, least=40) if y > 200]
    assert nccl and mpi, "no allreduce lines"
    # gpu1's GPU-NIC matrix: every relation of the fixture in its own colour
    colours = dict((rel, c) for rel, c, dummy in rs.TOPO_RELATIONS)
    topology = dict((rel, _rows_with(rows, colours[rel], 4, least=20)) for rel in ("PIX", "PHB", "NODE", "SYS"))
    assert all(topology.values()), topology
    # in the page's order: Validation (heatmaps), Workload (chart), then the hosts (gpu1 first)
    assert max(scales) < min(nccl) and max(nccl) < min(min(y) for y in topology.values())
    assert min(mpi) < min(min(y) for y in topology.values())
