# -*- coding: utf-8 -*-
"""The lossless_ethernet role's re-apply tool, for real.

``build_apply_bundle.py`` zips the real ``roce_qos`` module, the collection's
module_utils and ansible-core's module_utils with the tool's entrypoint
(``apply_lossless.py``). These tests build that zip from this repository and
run it as the host does (``python3 <zip>``, and the module inside it with
``python3 -m``), with Python's ``-S`` so that nothing installed (this venv's
ansible-core) can be imported except from the zip. No test doubles: the
module that runs is the real one; it fails on purpose (bad input, missing
ports), which needs neither root nor DCB hardware.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import json
import os
import subprocess
import sys
import zipfile

import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
ROLE = os.path.join(REPO, "roles", "lossless_ethernet")
FILES = os.path.join(ROLE, "files")
MODULE = "ansible_collections.rdma.fabric.plugins.modules.roce_qos"


def _load(name):
    spec = importlib.util.spec_from_file_location("lossless_" + name, os.path.join(FILES, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


builder = _load("build_apply_bundle")
tool = _load("apply_lossless")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle") / "apply-lossless"
    rc = builder.main(["--collection-root", REPO, "--main", os.path.join(FILES, "apply_lossless.py"),
                       "--interpreter", "/usr/bin/env python3", "--out", str(out)])
    assert rc == 0
    return str(out)


def _run_tool(bundle, *args):
    # -S: no site-packages, so ansible can only come from the zip.
    return subprocess.run([sys.executable, "-S", bundle] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, check=False, timeout=120)


def _sysfs_tree(root, netdevs, rxe=None):
    """A minimal sysfs tree: netdevs, and an rxe device (name, parent netdev)."""
    for n in netdevs:
        os.makedirs(os.path.join(root, "class", "net", n))
        with open(os.path.join(root, "class", "net", n, "mtu"), "w") as f:
            f.write("1500\n")
    os.makedirs(os.path.join(root, "class", "infiniband"), exist_ok=True)
    if rxe:
        name, parent = rxe
        port = os.path.join(root, "class", "infiniband", name, "ports", "1")
        os.makedirs(os.path.join(port, "gid_attrs", "ndevs"))
        for rel, text in (("parent", parent), ("ports/1/link_layer", "Ethernet"),
                          ("ports/1/gid_attrs/ndevs/0", parent)):
            with open(os.path.join(root, "class", "infiniband", name, rel), "w") as f:
                f.write(text + "\n")
    return str(root)


def _save(folder, netdev, args):
    os.makedirs(str(folder), exist_ok=True)
    with open(os.path.join(str(folder), netdev + ".json"), "w") as f:
        json.dump({"ANSIBLE_MODULE_ARGS": args}, f)


def test_bundle_is_deterministic(bundle, tmp_path):
    again = tmp_path / "again"
    builder.main(["--collection-root", REPO, "--main", os.path.join(FILES, "apply_lossless.py"),
                  "--interpreter", "/usr/bin/env python3", "--out", str(again)])
    with open(bundle, "rb") as a, open(str(again), "rb") as b:
        assert a.read() == b.read()
    # Writing the same content again reports no change.
    assert builder.main(["--collection-root", REPO, "--main", os.path.join(FILES, "apply_lossless.py"),
                         "--interpreter", "/usr/bin/env python3", "--out", str(again)]) == 0


def test_bundle_holds_the_module_and_its_imports(bundle):
    with open(bundle, "rb") as f:
        assert f.readline() == b"#!/usr/bin/env python3\n"
    with zipfile.ZipFile(bundle) as zf:
        names = set(zf.namelist())
        assert zf.read("ansible/__init__.py") == b""
        with open(os.path.join(FILES, "apply_lossless.py"), "rb") as f:
            assert zf.read("__main__.py") == f.read()
        with open(os.path.join(REPO, "plugins", "modules", "roce_qos.py"), "rb") as f:
            assert zf.read("ansible_collections/rdma/fabric/plugins/modules/roce_qos.py") == f.read()
        infos = zf.infolist()
    for pkg in ("ansible_collections", "ansible_collections/rdma", "ansible_collections/rdma/fabric",
                "ansible_collections/rdma/fabric/plugins", "ansible_collections/rdma/fabric/plugins/modules",
                "ansible_collections/rdma/fabric/plugins/module_utils/qos"):
        assert pkg + "/__init__.py" in names
    assert "ansible/module_utils/basic.py" in names
    assert "ansible_collections/rdma/fabric/plugins/module_utils/qos/engine.py" in names
    assert "ansible_collections/rdma/fabric/plugins/module_utils/sysfs.py" in names
    # Only the one module, no other plugins, no bytecode.
    assert [n for n in names if "/plugins/modules/" in n and not n.endswith("__init__.py")] == [
        "ansible_collections/rdma/fabric/plugins/modules/roce_qos.py"]
    assert not [n for n in names if n.endswith(".pyc") or "__pycache__" in n]
    assert all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in infos)


def test_module_runs_from_the_bundle_without_ansible_installed(bundle):
    """The real roce_qos, started the way the tool starts it, validates its input."""
    env = dict(os.environ, PYTHONPATH=bundle)
    args = {"ANSIBLE_MODULE_ARGS": {"netdev": "eth1;reboot", "pfc": [3]}}
    proc = subprocess.run([sys.executable, "-S", "-m", MODULE], input=json.dumps(args).encode(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, check=False, timeout=120)
    assert proc.returncode == 1, proc.stderr
    result = json.loads(proc.stdout.decode())
    assert result["failed"] is True
    assert result["param"] == "netdev"
    assert "'eth1;reboot' is not a valid interface name" in result["msg"]
    assert result["commands"] == []


def test_tool_skips_ports_that_are_not_there_yet(bundle, tmp_path):
    saved = tmp_path / "saved"
    _save(saved, "dcbsim0", {"netdev": "dcbsim0", "pfc": [3]})
    _save(saved, "eth1", {"netdev": "eth1", "roce_tos": 106})
    sysfs = _sysfs_tree(tmp_path / "sys", ["eth1"])  # eth1 exists but has no RDMA device; no dcbsim0
    proc = _run_tool(bundle, "--dir", str(saved), "--sysfs", sysfs, "--lock", str(tmp_path / "lock"))
    out = proc.stdout.decode()
    assert proc.returncode == 0, out + proc.stderr.decode()
    assert "dcbsim0: skipped, not ready: netdev dcbsim0 does not exist (yet)" in out
    assert "eth1: skipped, not ready: netdev: interface 'eth1' is not an RDMA port" in out


def test_tool_runs_the_module_and_reports_its_failure(bundle, tmp_path):
    """A ready port: the real module runs (against the fixture tree) and its error is reported."""
    saved = tmp_path / "saved"
    sysfs = _sysfs_tree(tmp_path / "sys", ["dcbsim0"], rxe=("rxe9", "dcbsim0"))
    _save(saved, "dcbsim0", {"netdev": "dcbsim0", "pfc": [3, 9], "sysfs_path": sysfs})
    proc = _run_tool(bundle, "--dir", str(saved), "--sysfs", sysfs, "--lock", str(tmp_path / "lock"))
    out = proc.stdout.decode()
    assert proc.returncode == 1, out + proc.stderr.decode()
    assert "dcbsim0: FAILED: pfc: priority 9 is out of range; allowed 0-7" in out


def test_tool_only_named_ports_and_bad_files(bundle, tmp_path):
    saved = tmp_path / "saved"
    sysfs = _sysfs_tree(tmp_path / "sys", [])
    _save(saved, "eth1", {"netdev": "eth2"})
    proc = _run_tool(bundle, "--dir", str(saved), "--sysfs", sysfs, "--lock", str(tmp_path / "lock"))
    assert proc.returncode == 2
    assert "eth1: FAILED: " in proc.stdout.decode() and "is for netdev 'eth2'" in proc.stdout.decode()
    proc = _run_tool(bundle, "--dir", str(saved), "--sysfs", sysfs, "--lock", str(tmp_path / "lock"), "eth9")
    assert proc.returncode == 2
    assert "no saved settings for eth9" in proc.stderr.decode()
    proc = _run_tool(bundle, "--dir", str(tmp_path / "missing"), "--lock", str(tmp_path / "lock"))
    assert proc.returncode == 2


def test_load_saved_needs_module_args_with_a_netdev(tmp_path):
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"netdev": "eth1"}))
    with pytest.raises(ValueError):
        tool.load_saved(str(path))
    path.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {"netdev": "eth1", "mtu": 9000}}))
    assert tool.load_saved(str(path)) == {"netdev": "eth1", "mtu": 9000}


def test_warning_text_and_summary():
    # ansible-core 2.19 module results carry structured warnings; older ones strings.
    assert tool.warning_text({"event": {"msg": "eth1: skipped pfc"}, "__ansible_type": "WarningSummary"}) == "eth1: skipped pfc"
    assert tool.warning_text("plain") == "plain"
    assert tool.summary({"changed": True, "changes": {"pfc": True, "mtu": False, "trust": True},
                         "backend": "dcb"}) == "changed (pfc, trust) backend=dcb"
    assert tool.summary({"changed": False}) == "ok"


def test_argument_specs_mirror_defaults():
    with open(os.path.join(ROLE, "defaults", "main.yml")) as f:
        defaults = yaml.safe_load(f)
    with open(os.path.join(ROLE, "meta", "argument_specs.yml")) as f:
        options = yaml.safe_load(f)["argument_specs"]["main"]["options"]
    assert sorted(options) == sorted(defaults)
    types = {"str": str, "bool": bool, "int": int, "list": list, "dict": dict}
    for name, spec in options.items():
        assert name.startswith("lossless_ethernet_"), name
        assert spec.get("description"), name
        assert spec.get("default") == defaults[name], name
        if defaults[name] is not None and spec["type"] in types:
            assert isinstance(defaults[name], types[spec["type"]]), name
        if "choices" in spec:
            assert defaults[name] in spec["choices"], name
    # The profile the issue asks for.
    assert defaults["lossless_ethernet_pfc"] == [3]
    assert defaults["lossless_ethernet_dscp2prio"] == {26: 3, 48: 6}
    assert defaults["lossless_ethernet_cnp"] == {"dscp": 48, "priority": 6}
    assert defaults["lossless_ethernet_trust"] == "dscp"
    assert defaults["lossless_ethernet_roce_tos"] == 106 == (26 << 2) | 0b10
    assert defaults["lossless_ethernet_roce_mode"] == "v2"


def test_role_passes_every_qos_option_the_module_has():
    """The role's per-port keys are exactly roce_qos's port options (less the other names and the addressing),
    and the role passes its whole port list in one call."""
    from ansible_collections.rdma.fabric.plugins.module_utils.qos import model
    with open(os.path.join(ROLE, "vars", "main.yml")) as f:
        role_keys = set(yaml.safe_load(f)["lossless_ethernet__qos_keys"])
    assert role_keys == set(model.ALL_KEYS + model.RUN_KEYS)
    with open(os.path.join(ROLE, "tasks", "main.yml")) as f:
        tasks = [t for t in yaml.safe_load(f) if "rdma.fabric.roce_qos" in t]
    assert len(tasks) == 1 and "loop" not in tasks[0]
    assert tasks[0]["rdma.fabric.roce_qos"] == {"ports": "{{ lossless_ethernet_resolved_ports }}"}
