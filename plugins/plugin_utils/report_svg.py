# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Charts for the fabric report as self-contained inline SVG (no scripts, no external resources, no fonts to load).

Generic building blocks, so that other report charts reuse them:

* :func:`line_chart`: series of (x, y) points on a log2 x axis (message sizes) and a linear y axis;
* :func:`category_matrix`: a labelled grid whose cells hold a category label, each category with its own
  colour;
* :func:`host_grid`: the host-pair grid (a row per server, a column per client, hosts in name order, blocks
  of consecutive hosts when many: the caller's, report.pair_matrix), each cell a colour and a tooltip; the
  report's pass/fail matrix is one;
* :func:`numeric_heatmap`: a host-pair grid of one figure per cell (bandwidth, latency), coloured by how close
  each cell is to the best one (:func:`closeness`, :data:`GRADIENT`), with its colour scale as a legend.

Report charts built on them:

* :func:`allreduce_chart`: allreduce bus bandwidth against message size, one line per run (the ``sizes`` rows
  of the rdma_validate workload results: ``bytes``, ``busbw_gbps``);
* :func:`gpu_topology_chart`: one GPU host's GPU-to-NIC relation matrix (``ansible_facts.gpudirect.topology.matrix``)
  with ``nvidia-smi topo -m``'s labels (X, PIX, PXB, PHB, NODE, SYS), coloured from near (green) to far (red).

Every chart function computes its geometry here and returns one ``<svg>`` element, drawn by its Jinja2 template
(templates/report/*.svg.j2, report_templates.py), as ``Markup`` text; every label is escaped.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

from markupsafe import Markup

from ansible_collections.rdma.fabric.plugins.plugin_utils import report_templates as templates

# nvidia-smi topo -m's relations, nearest first, and their colours (green: same PCIe switch ... red: across
# NUMA nodes); the legend text is nvidia-smi's own wording, shortened.
TOPO_RELATIONS = (
    ("X", "#dee2e6", "self"),
    ("NV#", "#74c69d", "NVLink"),
    ("PIX", "#95d5b2", "one PCIe switch"),
    ("PXB", "#d8f3dc", "several PCIe switches"),
    ("PHB", "#fff3bf", "PCIe host bridge"),
    ("NODE", "#ffd8a8", "same NUMA node"),
    ("SYS", "#ffa8a8", "across NUMA nodes"),
)
SERIES_COLOURS = ("#1d3557", "#e63946", "#2a9d8f", "#f4a261", "#6a4c93", "#457b9d", "#8d99ae")
FONT = Markup('font-family="DejaVu Sans, Arial, sans-serif"')


def _s(text):
    """A label as the charts write it: None is empty."""
    return "" if text is None else str(text)


def _num(value):
    return "%.3g" % value


def human_bytes(size):
    """``4194304`` -> ``4M``, ``1024`` -> ``1K``, ``8`` -> ``8`` (axis labels)."""
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= div and size % div == 0:
            return "%d%s" % (size // div, unit)
    return str(int(size))


def nice_ceiling(value):
    """The axis top: 1, 2, 2.5 or 5 times a power of ten, at least ``value``."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * power + 1e-12:
            return step * power
    return 10 * power


def line_chart(series, title, x_label, y_label, width=640, height=320, x_format=human_bytes):
    """``series``: ``[(label, [(x, y), ...]), ...]`` with x > 0 (log2 axis) and y >= 0 (linear axis).

    The legend on the right is as wide as the longest label needs; the plot takes the rest of ``width``.
    """
    left, top, bottom = 78, 34, 46
    right = max(150, 44 + int(7 * max([len(str(label)) for label, dummy in series] or [0])))
    plot_w, plot_h = width - left - right, height - top - bottom
    points = [(x, y) for dummy, pts in series for x, y in pts if x and x > 0 and y is not None]
    chart = dict(font=FONT, title=_s(title), width=width, height=height, left=left, top=top, plot_w=plot_w,
                 plot_h=plot_h, x_label=_s(x_label), y_label=_s(y_label), no_data=None)
    if not points:
        chart["no_data"] = top + plot_h // 2
        return templates.fragment("line_chart.svg.j2", **chart)
    lo, hi = math.log2(min(x for x, y in points)), math.log2(max(x for x, y in points))
    if hi == lo:
        lo, hi = lo - 1, hi + 1
    y_top = nice_ceiling(max(y for x, y in points))

    def px(x):
        return left + (math.log2(x) - lo) / (hi - lo) * plot_w

    def py(y):
        return top + plot_h - y / y_top * plot_h

    chart["y_ticks"] = [(py(y_top * i / 4), _num(y_top * i / 4)) for i in range(5)]
    xs = sorted(set(x for x, y in points))
    step = max(1, int(math.ceil(len(xs) / 8.0)))
    chart["x_ticks"] = [(px(x), _s(x_format(x))) for x in xs[::step]]
    chart["lines"] = []
    for i, (label, pts) in enumerate(series):
        colour = SERIES_COLOURS[i % len(SERIES_COLOURS)]
        pts = sorted((x, y) for x, y in pts if x and x > 0 and y is not None)
        if not pts:
            continue
        chart["lines"].append(dict(
            colour=colour, label=_s(label), legend_y=top + 8 + i * 18,
            points=" ".join("%.1f,%.1f" % (px(x), py(y)) for x, y in pts),
            dots=[(px(x), py(y), "%s: %s %s" % (_s(label), _s(x_format(x)), _num(y))) for x, y in pts]))
    return templates.fragment("line_chart.svg.j2", **chart)


def category_matrix(title, rows, cols, cell, colours, legend=(), cell_w=64, cell_h=26, label_w=150):
    """A grid: ``cell(row, col)`` gives each cell's category (text), ``colours`` maps a category to its fill.

    ``legend``: ``[(category, text), ...]`` drawn below. Unknown categories are grey; empty cells blank.
    """
    width = max(label_w + cell_w * max(1, len(cols)) + 20, 360)
    # The legend wraps onto as many lines as the width needs.
    places, x, line = [], 8, 0
    for category, text in legend:
        label = "%s %s" % (category, text)
        item = 30 + int(7.6 * len(label))
        if x > 8 and x + item > width - 8:
            x, line = 8, line + 1
        places.append((x, line, category, label))
        x += item
    legend_h = 20 * (line + 1) if legend else 0
    height = 40 + cell_h * (len(rows) + 1) + legend_h + 10
    top = 34
    grid = []
    for i, row in enumerate(rows):
        y = top + cell_h * (i + 1)
        cells = []
        for j, col in enumerate(cols):
            value = cell(row, col)
            cells.append(dict(x=label_w + j * cell_w, col=_s(col), value=None if value in (None, "") else str(value),
                              fill=colours.get(value, "#f8f9fa") if value not in (None, "") else "#ffffff"))
        grid.append(dict(label=_s(row), y=y, text_y=y + cell_h - 8, cells=cells))
    base = top + cell_h * (len(rows) + 1) + 10
    return templates.fragment(
        "category_matrix.svg.j2", font=FONT, title=_s(title), width=width, height=height, cell_w=cell_w, cell_h=cell_h,
        head_y=top + cell_h - 8, label_x=label_w - 8, grid=grid,
        col_heads=[(label_w + j * cell_w + cell_w // 2, _s(col)) for j, col in enumerate(cols)],
        legend=[(x, base + 20 * line, colours.get(category, "#ced4da"), label) for x, line, category, label in places])


def allreduce_chart(runs, title="Allreduce bus bandwidth", width=640, height=320):
    """``runs``: ``[(label, rows)]`` with rows of ``bytes`` and ``busbw_gbps`` (the workload's ``sizes``)."""
    series = [(label, [(r.get("bytes"), r.get("busbw_gbps")) for r in rows or [] if isinstance(r, dict)])
              for label, rows in runs]
    return line_chart(series, title, "message size (bytes)", "bus bandwidth (Gb/s)", width=width, height=height)


def _relation_key(value):
    text = str(value or "")
    return "NV#" if text.startswith("NV") and text[2:].isdigit() else text


def gpu_topology_chart(host, matrix, nearest=None):
    """One host's GPU (rows) x NIC (columns) relations, as ``nvidia-smi topo -m`` labels them.

    ``matrix``: ``{gpu: {nic: relation}}`` (``ansible_facts.gpudirect.topology.matrix``); ``nearest``
    (``topology.nearest_nic``: ``{gpu: {name, relation}}`` or ``{gpu: text}``) is added as a last column when given.
    """
    rows = sorted(matrix or {})
    cols = sorted(set(c for r in rows if isinstance(matrix[r], dict) for c in matrix[r]))
    colours = dict((rel, colour) for rel, colour, dummy in TOPO_RELATIONS)
    extra = "nearest NIC" if nearest else None

    def cell(row, col):
        if col == extra:
            near = (nearest or {}).get(row)
            if isinstance(near, dict):
                return "%s (%s)" % (near.get("name"), near.get("relation")) if near.get("relation") else near.get("name")
            return near
        value = (matrix.get(row) or {}).get(col) if isinstance(matrix.get(row), dict) else None
        return value

    def colour_map():
        out = dict(colours)
        for row in rows:
            for col in cols:
                value = cell(row, col)
                if value is not None and _relation_key(value) in colours:
                    out[value] = colours[_relation_key(value)]
        return out

    return category_matrix("%s: GPU to NIC (nvidia-smi topo -m)" % host, rows, cols + ([extra] if extra else []),
                           cell, colour_map(), legend=[(rel, text) for rel, dummy, text in TOPO_RELATIONS[2:]],
                           cell_w=92, label_w=130)


# --------------------------------------------------------------------------
# host-pair grids
# --------------------------------------------------------------------------
# Numeric heatmaps, from the worst (left, red) to the best (right, green) figure.
GRADIENT = ("#d62828", "#f77f00", "#fcbf49", "#90be6d", "#2a9d8f")
# The ticks of a numeric heatmap's colour scale: fractions of the best figure (see :func:`closeness`).
SCALE_TICKS = (0.25, 0.5, 1.0)
# The height of that scale below the grid.
SCALE_HEIGHT = 58


def figure_text(value):
    """A measured figure for a label: 3 significant digits, whole numbers from 1000 up (no exponent)."""
    return "%d" % round(value) if abs(value) >= 1000 else "%.3g" % value


def block_span(names, block, i):
    """The hosts of row/column block ``i``: ``first .. last`` (one name for a one-host block)."""
    first, last = names[i * block], names[min(len(names), (i + 1) * block) - 1]
    return first if first == last else "%s .. %s" % (first, last)


def pair_label(names, block, row, col):
    """A cell's hosts: ``server -> client``, or ``servers a .. c -> clients d .. f`` for blocks."""
    if block == 1:
        return "%s -> %s" % (names[row], names[col])
    return "servers %s -> clients %s" % (block_span(names, block, row), block_span(names, block, col))


def host_grid(names, block, cells, label, size=720, scale=None, min_width=0):
    """The host-pair grid: a row per server, a column per client, in the order of ``names``.

    ``block``: hosts per row/column (consecutive names share one; the caller aggregates the cells).
    ``cells``: ``{(row, col): (fill, tooltip)}``. Every row and column is named while they fit (one-host
    blocks, up to 60), else every ``count / 12``-th. ``scale``: a numeric heatmap's colour scale, drawn
    below the grid (:func:`numeric_heatmap`). The grid fits about ``size`` pixels: cells 3 to 22 pixels wide.
    """
    count = int(math.ceil(len(names) / float(block)))
    cell = max(3, min(22, size // max(count, 1)))
    step = 1 if block == 1 and count <= 60 else max(1, int(math.ceil(count / 12.0)))
    margin = 8 + int(max(len(n) for n in names) * 6.2)
    side = margin + count * cell + 4
    width, height = max(side, min_width), side + (SCALE_HEIGHT if scale else 0)
    return templates.fragment(
        "host_grid.svg.j2", font=FONT, label=_s(label), width=width, height=height, margin=margin, count=count,
        cell=cell, side=side, scale=scale,
        heads=[(_s(names[i * block]), margin + i * cell + min(cell, 10) * 0.8) for i in range(0, count, step)],
        cells=[(margin + col * cell, margin + row * cell, _s(cells[(row, col)][0]), _s(cells[(row, col)][1]))
               for (row, col) in sorted(cells)])


def gradient_colour(fraction):
    """The colour at ``fraction`` (0: worst, red ... 1: best, green) of :data:`GRADIENT`, interpolated."""
    t = min(1.0, max(0.0, fraction)) * (len(GRADIENT) - 1)
    i = min(int(t), len(GRADIENT) - 2)
    a, b = GRADIENT[i], GRADIENT[i + 1]
    mix = [int(a[k:k + 2], 16) + (int(b[k:k + 2], 16) - int(a[k:k + 2], 16)) * (t - i) for k in (1, 3, 5)]
    return "#%02x%02x%02x" % tuple(int(round(v)) for v in mix)


def closeness(value, best, higher_is_better):
    """How close ``value`` is to ``best``, 0 to 1: ``value / best`` (bandwidth) or ``best / value`` (latency).

    Half the best bandwidth or twice the best latency is 0.5, whatever the figures' size, so a fabric whose
    pairs all measure alike is all green, and one slow pair stands out.
    """
    if higher_is_better:
        return 1.0 if value >= best else (value / best if best > 0 else 0.0)
    if value <= best:
        return 1.0
    return best / value if best > 0 else 0.0


def numeric_heatmap(names, block, values, label, unit, higher_is_better, size=720):
    """A host-pair grid of one figure per cell, coloured by :func:`closeness` to the best cell, with a legend.

    ``values``: ``{(row, col): (figure, detail)}``: the figure of the cell (the caller aggregates a block:
    its worst pair), ``detail`` text added to the cell's tooltip (which test and pair gave it).
    """
    if not values:
        return ""
    figures = [v for v, dummy in values.values()]
    best = max(figures) if higher_is_better else min(figures)
    worst = min(figures) if higher_is_better else max(figures)
    cells = {}
    for key, (value, detail) in values.items():
        cells[key] = (gradient_colour(closeness(value, best, higher_is_better)), "%s: %s %s%s" % (
            pair_label(names, block, key[0], key[1]), figure_text(value), unit, detail))
    bar_x, bar_w, steps = 8, 300, 30
    ticks = []
    for tick in SCALE_TICKS:
        figure = best * tick if higher_is_better else best / tick
        ticks.append((bar_x + bar_w * tick, "end" if tick == 1.0 else "middle", figure_text(figure)))
    scale = dict(
        x=bar_x, ticks=ticks,
        steps=[(bar_x + bar_w * i / float(steps), bar_w / float(steps) + 0.5, gradient_colour((i + 0.5) / steps))
               for i in range(steps)],
        caption="%s, a cell's worst pair: best %s, worst %s; ticks: the best, %s" % (
            unit, figure_text(best), figure_text(worst), "1/2 and 1/4 of it" if higher_is_better else "2 and 4 times it"))
    return host_grid(names, block, cells, label, size=size, scale=scale, min_width=bar_x + bar_w + 240)
