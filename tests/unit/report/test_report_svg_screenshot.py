# -*- coding: utf-8 -*-
"""Render the report's SVG charts (plugins/plugin_utils/report_svg.py) in a page and screenshot it with headless
Chromium (Debian 12's `chromium`, pinned in tools/deps/apt-packages.txt; skipped, saying so, without it).

The page holds the allreduce bandwidth chart (two runs' figures in the workload results' shape) and the GPU-NIC
topology matrix of the DERIVED GPU host fixture (no GPU machine here). Checked in the picture: the right size,
not blank, the series colours of both lines, and each nvidia-smi relation's colour (PIX green ... SYS red). The
screenshot is left in tests/output/ for a human to look at.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import subprocess

import pytest

from ansible_collections.rdma.fabric.plugins.plugin_utils import report_svg as rs
from ansible_collections.rdma.fabric.tests.unit.report.test_report_screenshot import near, read_png

HERE = os.path.dirname(os.path.abspath(__file__))
GPU = os.path.join(HERE, "..", "fixtures", "fabric", "derived_gpu_nic_topology_gpudirect.json")
OUTPUT = os.path.join(HERE, "..", "..", "output")
WIDTH, HEIGHT = 900, 700


def _hex(colour):
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def page():
    with open(GPU) as f:
        gd = json.load(f)
    figures = ((8, 0.0001), (1024, 0.006), (65536, 0.021), (1048576, 0.029), (4194304, 0.031))
    mpi = [{"bytes": b, "busbw_gbps": bw} for b, bw in figures]
    other = [{"bytes": r["bytes"], "busbw_gbps": r["busbw_gbps"] * 0.6} for r in mpi]
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>charts</title></head>"
            "<body style=\"margin:0;background:#ffffff\"><div>%s</div><div>%s</div></body></html>" % (
                rs.allreduce_chart([("lab1+lab2 rxe0", mpi), ("second run", other)], width=800, height=320),
                rs.gpu_topology_chart("gpu-a01", gd["topology"]["matrix"], gd["topology"]["nearest_nic"])))


def test_svg_charts_screenshot(tmp_path):
    browser = shutil.which("chromium")
    if not browser:
        pytest.skip("chromium is not installed (Debian 12: apt-get install chromium=156.0.8078.79-1~deb12u1)")
    html = tmp_path / "charts.html"
    html.write_text(page())
    png = tmp_path / "charts.png"
    argv = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--user-data-dir=%s" % (tmp_path / "profile"), "--screenshot=%s" % png,
            "--window-size=%d,%d" % (WIDTH, HEIGHT), "file://%s" % html]
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          check=False, timeout=240)
    assert proc.returncode == 0 and png.exists(), proc.stdout[-2000:]
    if os.path.isdir(os.path.dirname(OUTPUT)):
        os.makedirs(OUTPUT, exist_ok=True)
        shutil.copy(str(png), os.path.join(OUTPUT, "report-svg-charts-screenshot.png"))
    width, height, rows = read_png(str(png))
    assert (width, height) == (WIDTH, HEIGHT)
    pixels = [px for row in rows[::2] for px in row[::2]]
    busy = sum(1 for px in pixels if not near(px, (255, 255, 255), 3)) / float(len(pixels))
    assert busy > 0.05, "mostly empty: %.3f" % busy
    # both series' line colours (chart, upper part of the page)
    upper = [px for row in rows[:330:2] for px in row[::2]]
    for colour in rs.SERIES_COLOURS[:2]:
        assert sum(1 for px in upper if near(px, _hex(colour), 10)) > 40, colour
    # every relation present in the matrix, in its own colour (lower part)
    lower = [px for row in rows[330::2] for px in row[::2]]
    colours = dict((rel, c) for rel, c, d in rs.TOPO_RELATIONS)
    for rel in ("PIX", "PXB", "PHB", "NODE", "SYS"):
        assert sum(1 for px in lower if near(px, _hex(colours[rel]), 4)) > 100, rel
