# -*- coding: utf-8 -*-
"""The host runtime zip (plugins/plugin_utils/host_runtime.py), built from this
repository and run the way the host runs it: ``python3 -E -s rdma-fabric.pyz``,
here also with ``-S`` so that nothing installed (this venv's ansible-core) can
be imported. No test doubles: what runs is the real code; it fails on purpose
(bad saved settings, ports that are not there), which needs neither root nor
a DCB device."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from ansible_collections.rdma.fabric.plugins.plugin_utils import host_runtime

ROOT = host_runtime.default_root()


@pytest.fixture(scope="module")
def pyz(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle") / "rdma-fabric.pyz"
    assert host_runtime.main(["--out", str(out)]) == 0
    return str(out)


def _sha1(path):
    with open(path, "rb") as f:
        return hashlib.sha1(f.read()).hexdigest()


def run(pyz, *args):
    return subprocess.run([sys.executable, "-S", "-E", "-s", pyz] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120, check=False)


def test_the_zip_holds_module_utils_and_main_only(pyz):
    with zipfile.ZipFile(pyz) as zf:
        names = zf.namelist()
        infos = zf.infolist()
        assert zf.read("__main__.py") == host_runtime.MAIN
        with open(os.path.join(ROOT, "plugins", "module_utils", "qos", "engine.py"), "rb") as f:
            assert zf.read(host_runtime.PACKAGE + "/qos/engine.py") == f.read()
    assert names == sorted(names)
    stubs = ["ansible_collections/__init__.py", "ansible_collections/rdma/__init__.py",
             "ansible_collections/rdma/fabric/__init__.py", "ansible_collections/rdma/fabric/plugins/__init__.py"]
    others = [n for n in names if n != "__main__.py" and n not in stubs]
    assert all(n.startswith(host_runtime.PACKAGE + "/") and n.endswith(".py") for n in others)
    assert not [n for n in names if n.startswith("ansible/") or "__pycache__" in n or n.endswith(".pyc")]
    assert all(i.date_time == (1980, 1, 1, 0, 0, 0) and i.compress_type == zipfile.ZIP_STORED for i in infos)
    with open(pyz, "rb") as f:
        assert f.read(2) == b"PK"       # no shebang: /usr/sbin/rdma-fabric names the interpreter


def test_the_same_source_gives_the_same_sha1(pyz, tmp_path):
    """Another checkout (other mtimes, modes, folder, walk order) of the same files builds the same bytes."""
    copy = tmp_path / "checkout"
    shutil.copytree(os.path.join(ROOT, "plugins", "module_utils"), str(copy / "plugins" / "module_utils"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    for dirpath, _dirs, files in os.walk(str(copy)):
        for name in files:
            os.utime(os.path.join(dirpath, name), (1234567890, 1234567890))
            os.chmod(os.path.join(dirpath, name), 0o600)
    (copy / "plugins" / "module_utils" / "__pycache__").mkdir()
    (copy / "plugins" / "module_utils" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"junk")
    out = tmp_path / "again.pyz"
    assert host_runtime.main(["--collection-root", str(copy), "--out", str(out)]) == 0
    assert _sha1(str(out)) == _sha1(pyz)
    assert oct(os.stat(str(out)).st_mode & 0o777) == "0o644"


def test_prints_what_the_role_compares(pyz, tmp_path, capsys):
    assert host_runtime.main([]) == 0
    info = json.loads(capsys.readouterr().out)
    try:
        assert info["sha1"] == _sha1(pyz) == _sha1(info["path"]) and info["size"] == os.path.getsize(pyz)
        assert os.path.basename(info["path"]) == "rdma-fabric.pyz" and info["files"] > 20
    finally:
        shutil.rmtree(os.path.dirname(info["path"]))


def test_runs_without_ansible(pyz, tmp_path):
    proc = run(pyz, "--help")
    assert proc.returncode == 0 and "qos-apply" in proc.stdout
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / "dcbsim0.json").write_text('{"netdev": "dcbsim0", "dscp2prio": {"26": 3, "26": 5}}')
    (saved / "eth1.json").write_text('{"netdev": "eth1", "roce_tos": 106}')
    sysfs = tmp_path / "sys"
    (sysfs / "class" / "net" / "eth1").mkdir(parents=True)
    (sysfs / "class" / "infiniband").mkdir(parents=True)
    proc = run(pyz, "qos-apply", "--dir", str(saved), "--sysfs", str(sysfs), "--lock", str(tmp_path / "qos.lock"))
    assert proc.returncode == 2, proc.stderr
    out = proc.stdout.splitlines()
    assert out[0].startswith("dcbsim0: FAILED: unusable saved settings ") and "'26' is given twice" in out[0]
    assert out[1].startswith("eth1: skipped, not ready: eth1.netdev: interface 'eth1' is not an RDMA port")
