# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpudirect on a real NVIDIA H200 host: CAPTURED REAL OUTPUT (tests/unit/fixtures/device_h200, see its README).

The module ran there (check and diff mode); these tests hold its result against what the NVIDIA tools and sysfs
of the same host said, and feed it to the report as a GPU host's facts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.rdma.fabric.plugins.plugin_utils import report

HERE = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "device_h200")


def load(name):
    with open(os.path.join(HERE, name)) as f:
        return json.load(f) if name.endswith(".json") else f.read()


def smi_gpus():
    """(bus id in sysfs form, driver version) of every GPU in nvidia-smi's csv (host.txt)."""
    lines = load("host.txt").splitlines()
    start = lines.index("name, pci.bus_id, driver_version") + 1
    out = []
    for line in lines[start:]:
        name, bus, version = [v.strip() for v in line.split(",")]
        out.append((bus[-12:].lower(), version))
    return out


def test_the_gpus_and_driver_are_what_nvidia_smi_and_sysfs_say():
    gd = load("gd_check_present.json")["ansible_facts"]["gpudirect"]
    pci = load("pci.json")
    assert [(g["pci_address"], gd["driver"]["version"]) for g in gd["gpus"]] == smi_gpus()
    for gpu in gd["gpus"]:
        assert (pci[gpu["pci_address"]]["vendor"], pci[gpu["pci_address"]]["device"]) == ("0x10de", gpu["device_id"])
        assert pci[gpu["pci_address"]]["driver"] == gpu["driver"] == "nvidia"
        # sysfs says -1 (no NUMA information in this VM): the facts say unknown, not node -1
        assert pci[gpu["pci_address"]]["numa_node"] == "-1" and gpu["numa_node"] is None
    # nvidia-smi topo -m lists the one GPU and no NIC; the module's matrices agree
    topo = load("nvidia-smi-topo.txt")
    assert "GPU0\t X " in topo and "NIC0" not in topo
    assert gd["topology"]["matrix"] == {"0000:00:06.0": {}} and gd["topology"]["nearest_nic"] == {"0000:00:06.0": None}


def test_open_driver_580_means_dmabuf_and_no_peer_memory_module():
    gd = load("gd_check_present.json")["ansible_facts"]["gpudirect"]
    assert gd["driver"] == {"loaded": True, "version": "580.159.04", "flavour": "open", "ships_nvidia_peermem": True}
    assert gd["dmabuf"]["possible"] is True and gd["dmabuf"]["missing"] == []
    assert gd["peermem"]["needed"] is False and gd["peermem"]["loaded"] == []
    # not ready: the host has no RDMA NIC (mlx5 is loaded, but no device), and says so
    assert gd["ready"] is False
    assert gd["reasons"] == ["no RDMA NIC on a PCI device under /sys/class/infiniband (soft RDMA such as rxe or "
                             "siw cannot reach GPU memory)"]
    facts = load("facts.json")["ansible_facts"]["rdma"]
    assert facts["devices"] == [] and facts["modules"]["mlx5_core"] and facts["modules"]["mlx5_ib"]


def test_check_mode_apply_and_removal_plan_nothing_on_this_host():
    for name in ("gd_check_present.json", "gd_check_absent.json"):
        res = load(name)
        assert res["changed"] is False and res["actions"] == []
        assert res["diff"]["before"] == res["diff"]["after"]
    assert load("gd_check_absent.json")["invocation"]["module_args"]["peermem"] == "absent"


def test_the_report_shows_the_real_gpu_host():
    gd = load("gd_check_present.json")["ansible_facts"]["gpudirect"]
    rdma = load("facts.json")["ansible_facts"]["rdma"]
    data = report.build_report({"h200": {"reachable": True, "facts_source": "live", "rdma": rdma, "gpudirect": gd}})
    view = data["hosts"]["h200"]["gpudirect"]
    assert view["gpu_count"] == 1 and view["driver"] == "580.159.04 (open)" and view["dmabuf"] is True
    assert view["ready"] is False and "no RDMA NIC" in view["reasons"][0]
    html = report.render_html(data)
    assert "580.159.04 (open)" in html and "0000:00:06.0" in html
