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


def test_long_series_labels_widen_the_legend_not_the_chart():
    short = parse(rs.allreduce_chart([("MPI", ROWS)]))
    long_ = parse(rs.allreduce_chart([("NCCL allreduce, 128 hosts", ROWS)]))
    assert short.get("width") == long_.get("width") == "640"
    frame = [r for r in long_.iter(NS + "rect") if r.get("fill") == "none"][0]
    legend = [t for t in long_.iter(NS + "text") if t.text == "NCCL allreduce, 128 hosts"][0]
    # the label starts right of the plot and its ~25 characters (7 px each) end inside the picture
    assert float(legend.get("x")) > int(frame.get("x")) + int(frame.get("width"))
    assert float(legend.get("x")) + 7 * 25 <= 640


def test_gradient_and_closeness():
    assert rs.gradient_colour(0) == rs.GRADIENT[0] and rs.gradient_colour(1) == rs.GRADIENT[-1]
    assert rs.gradient_colour(0.5) == rs.GRADIENT[2] and rs.gradient_colour(-3) == rs.GRADIENT[0]
    assert rs.gradient_colour(0.125) == "#e65414"  # half way between the first two stops (#d62828, #f77f00)
    # half the best bandwidth and twice the best latency are equally far from the best
    assert rs.closeness(45, 90, True) == rs.closeness(10, 5, False) == 0.5
    assert rs.closeness(90, 90, True) == rs.closeness(5, 5, False) == 1.0
    assert rs.closeness(0, 90, True) == 0.0 and rs.closeness(0, 0, True) == 1.0 and rs.closeness(3, 0, False) == 0.0
    assert [rs.figure_text(v) for v in (0.0481, 90.0, 27080.55, 7.1e-05)] == ["0.0481", "90", "27081", "7.1e-05"]


def cells_of(root):
    return dict((r.find(NS + "title").text, r.get("fill")) for r in root.iter(NS + "rect") if r.find(NS + "title") is not None)


def test_numeric_heatmap_colours_each_cell_against_the_best_and_draws_its_scale():
    names = ["lab1", "lab2", "gpu<1>"]
    values = {(0, 1): (90.0, " (ib_write_bw)"), (1, 2): (45.0, " (ucx_tag_bw)"), (2, 0): (0.0, "")}
    svg = rs.numeric_heatmap(names, 1, values, "Bandwidth per host pair (Gb/s)", "Gb/s", True)
    self_contained(svg)
    root = parse(svg)
    assert root.get("aria-label") == "Bandwidth per host pair (Gb/s)" and root.find(NS + "title").text == root.get("aria-label")
    assert cells_of(root) == {"lab1 -> lab2: 90 Gb/s (ib_write_bw)": rs.GRADIENT[-1],
                              "lab2 -> gpu<1>: 45 Gb/s (ucx_tag_bw)": rs.GRADIENT[2],
                              "gpu<1> -> lab1: 0 Gb/s": rs.GRADIENT[0]}
    texts = [t.text for t in root.iter(NS + "text")]
    assert texts[:6] == ["lab1", "lab1", "lab2", "lab2", "gpu<1>", "gpu<1>"]  # every row and column named
    assert ["22.5", "45", "90"] == texts[6:9]  # the scale's ticks: 1/4, 1/2 and all of the best
    assert texts[9] == "Gb/s, a cell's worst pair: best 90, worst 0; ticks: the best, 1/2 and 1/4 of it"
    scale = [r for r in root.iter(NS + "rect") if r.find(NS + "title") is None and r.get("height") == "12"]
    assert len(scale) == 30 and scale[0].get("fill") == rs.gradient_colour(1 / 60.0)
    # a cell with the worst latency is red, the legend counts in multiples of the best
    lat = parse(rs.numeric_heatmap(names, 1, {(0, 1): (5.0, ""), (1, 0): (27080.55, "")}, "Latency", "us", False))
    assert cells_of(lat) == {"lab1 -> lab2: 5 us": rs.GRADIENT[-1], "lab2 -> lab1: 27081 us": rs.gradient_colour(5.0 / 27080.55)}
    assert [t.text for t in lat.iter(NS + "text")][6:9] == ["20", "10", "5"]
    assert rs.numeric_heatmap(names, 1, {}, "Latency", "us", False) == ""


def test_host_grid_of_300_hosts_in_blocks_stays_bounded():
    """300 hosts in blocks of 3 (as the report's pair_matrix makes them): 100 rows and columns of 7 pixels."""
    names = ["node%04d" % i for i in range(300)]
    cells = dict(((i, (i + 1) % 100), ("#2a9d8f", rs.pair_label(names, 3, i, (i + 1) % 100))) for i in range(100))
    svg = rs.host_grid(names, 3, cells, "host-pair matrix")
    self_contained(svg)
    root = parse(svg)
    width = int(root.get("width"))
    assert width == int(root.get("height")) <= 8 + 50 + 100 * 7 + 4  # label margin, 100 cells, border
    titled = [r for r in root.iter(NS + "rect") if r.find(NS + "title") is not None]
    assert len(titled) == 100 and all(r.get("width") == "7" for r in titled)
    assert titled[0].find(NS + "title").text == "servers node0000 .. node0002 -> clients node0003 .. node0005"
    # a name every 9th row and column (100 / 12, rounded up), not 300
    assert len(list(root.iter(NS + "text"))) == 2 * 12
    assert len(svg) < 100 * 200 + 5000
    assert rs.pair_label(names, 1, 0, 2) == "node0000 -> node0002" and rs.block_span(names, 7, 42) == "node0294 .. node0299"
