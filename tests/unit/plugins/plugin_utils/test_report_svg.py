# -*- coding: utf-8 -*-
"""Unit tests for plugin_utils/report_svg.py: self-contained inline SVG charts.

Data: allreduce rows in the shape of the rdma_validate workload results, and the GPU-NIC matrix of the DERIVED
GPU host fixture (tests/unit/fixtures/fabric/derived_gpu_nic_topology_gpudirect.json, gpudirect facts read from
a derived sysfs tree: no GPU machine here).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import xml.etree.ElementTree as ET

from ansible_collections.rdma.fabric.plugins.plugin_utils import report_svg as rs

HERE = os.path.dirname(__file__)
GPU = os.path.join(HERE, "..", "..", "fixtures", "fabric", "derived_gpu_nic_topology_gpudirect.json")
NS = "{http://www.w3.org/2000/svg}"
ROWS = [{"bytes": 8, "busbw_gbps": 0.0001}, {"bytes": 1024, "busbw_gbps": 0.004},
        {"bytes": 65536, "busbw_gbps": 0.02}, {"bytes": 4194304, "busbw_gbps": 0.031}]


def parse(svg):
    root = ET.fromstring(svg)
    assert root.tag == NS + "svg"
    return root


def self_contained(svg):
    low = svg.lower()
    assert "<script" not in low and "href" not in low and "url(" not in low and "@import" not in low
    assert "http://" not in low.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_allreduce_chart_one_point_per_size_on_a_log_axis():
    svg = rs.allreduce_chart([("lab1+lab2 rxe0 (MPI)", ROWS), ("hw <b>&", [{"bytes": 8, "busbw_gbps": 0.02}])])
    self_contained(svg)
    root = parse(svg)
    lines = root.findall(NS + "polyline")
    assert len(lines) == 2
    points = [tuple(float(v) for v in p.split(",")) for p in lines[0].get("points").split()]
    xs = [p[0] for p in points]
    # log2 axis: 8 B -> 1 KiB is 7 doublings of the 13 from 8 B to 64 KiB
    assert xs == sorted(xs)
    assert abs((xs[1] - xs[0]) / (xs[2] - xs[0]) - 7.0 / 13.0) < 0.01
    ys = [p[1] for p in points]
    assert ys == sorted(ys, reverse=True)  # more bandwidth is higher on the page
    labels = [t.text for t in root.iter(NS + "text")]
    assert "hw <b>&" in labels and "4M" in labels and "8" in labels
    assert "bus bandwidth (Gb/s)" in labels and "0.05" in labels and "0.025" in labels  # top: the nice ceiling above 0.031
    assert "&lt;b&gt;&amp;" in svg


def test_empty_chart_says_no_data():
    root = parse(rs.allreduce_chart([("none", [])]))
    assert "no data" in [t.text for t in root.iter(NS + "text")]


def test_gpu_topology_chart_colours_each_relation():
    with open(GPU) as f:
        gd = json.load(f)
    svg = rs.gpu_topology_chart("gpu-a01", gd["topology"]["matrix"], gd["topology"]["nearest_nic"])
    self_contained(svg)
    root = parse(svg)
    colours = dict((rel, colour) for rel, colour, dummy in rs.TOPO_RELATIONS)
    cells = [(r.find(NS + "title").text, r.get("fill")) for r in root.iter(NS + "rect") if r.find(NS + "title") is not None]
    by_title = dict(cells)
    assert by_title["0000:03:00.0 / mlx5_0: PIX"] == colours["PIX"]
    assert by_title["0000:03:00.0 / mlx5_3: PXB"] == colours["PXB"]
    assert by_title["0000:03:00.0 / mlx5_1: PHB"] == colours["PHB"]
    assert by_title["0000:03:00.0 / mlx5_2: NODE"] == colours["NODE"]
    assert by_title["0000:81:00.0 / mlx5_0: SYS"] == colours["SYS"]
    assert by_title["0000:03:00.0 / nearest NIC: mlx5_0 (PIX)"] == "#f8f9fa"
    assert len(cells) == 2 * 5
    texts = [t.text for t in root.iter(NS + "text")]
    assert texts[0] == "gpu-a01: GPU to NIC (nvidia-smi topo -m)"
    assert "SYS across NUMA nodes" in texts


def test_nvlink_relations_share_one_colour():
    root = parse(rs.gpu_topology_chart("h", {"gpu0": {"gpu1": "NV12", "mlx5_0": "PIX"}}))
    fills = dict((r.find(NS + "title").text, r.get("fill")) for r in root.iter(NS + "rect") if r.find(NS + "title") is not None)
    assert fills["gpu0 / gpu1: NV12"] == dict((r, c) for r, c, d in rs.TOPO_RELATIONS)["NV#"]


def test_helpers():
    assert [rs.human_bytes(v) for v in (8, 1024, 1536, 4194304, 1 << 30)] == ["8", "1K", "1536", "4M", "1G"]
    assert [rs.nice_ceiling(v) for v in (0.031, 0.2, 3, 7, 0)] == [0.05, 0.2, 5, 10, 1.0]
