# -*- coding: utf-8 -*-
"""Unit tests for the rdma.fabric.k8s_manifests action: file names from identity, one pass,
only changed files written, atomic writes, pruning of the role's own files only, check and
diff mode, state absent. The files are written for real into pytest's tmp_path."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import stat

import pytest
import yaml

from ansible_collections.rdma.fabric.plugins.action.k8s_manifests import run_manifests
from ansible_collections.rdma.fabric.plugins.plugin_utils import manifests

MARK = "# Rendered by rdma.fabric.k8s_rdma_stack"


def cm(name, ns="kube-system", data=None):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}, "data": data or {"a": "1"}}


CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "network-attachment-definitions.k8s.cni.cncf.io"}, "spec": {"group": "k8s.cni.cncf.io"}}


def args(dest, **kw):
    out = {"dest": str(dest), "objects": [CRD, cm("rdma-devices")], "node_labels": {"n1": {"rdma.fabric/capable": "true"}},
           "files": {}, "kustomization": {}, "header": MARK + " from the RDMA facts of group g. Do not edit.",
           "kustomization_header": MARK + ".", "marker": MARK, "state": "present", "mode": "0644"}
    out.update(kw)
    return out


def listing(dest):
    out = []
    for root, _dirs, names in os.walk(str(dest)):
        out.extend(os.path.relpath(os.path.join(root, n), str(dest)) for n in names)
    return sorted(out)


def test_names_from_identity_and_kustomization_in_apply_order(tmp_path):
    res = run_manifests(args(tmp_path))
    assert res["changed"] and res["unchanged"] == 0
    assert res["files"] == ["customresourcedefinition-network-attachment-definitions.k8s.cni.cncf.io.yaml",
                            "configmap-kube-system-rdma-devices.yaml", "node-labels/node-n1.yaml", "kustomization.yaml"]
    assert listing(tmp_path) == sorted(res["files"])
    with open(str(tmp_path / "configmap-kube-system-rdma-devices.yaml")) as f:
        text = f.read()
    assert text.startswith(MARK + " from the RDMA facts of group g. Do not edit.\napiVersion: v1\n")
    assert yaml.safe_load(text) == cm("rdma-devices")
    node = yaml.safe_load((tmp_path / "node-labels" / "node-n1.yaml").read_text())
    assert node == {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"rdma.fabric/capable": "true"}}}
    kust = yaml.safe_load((tmp_path / "kustomization.yaml").read_text())
    assert kust["resources"] == res["files"][:2]
    for name in res["files"]:
        assert stat.S_IMODE(os.stat(str(tmp_path / name)).st_mode) == 0o644


def test_second_run_writes_nothing_and_a_new_node_renames_nothing(tmp_path):
    run_manifests(args(tmp_path))
    before = dict((n, os.stat(str(tmp_path / n)).st_ino) for n in listing(tmp_path))
    again = run_manifests(args(tmp_path))
    assert again["changed"] is False and again["written"] == [] and again["unchanged"] == 4
    more = run_manifests(args(tmp_path, node_labels={"n0": {"x": "1"}, "n1": {"rdma.fabric/capable": "true"}}))
    assert more["written"] == ["node-labels/node-n0.yaml"] and more["removed"] == []
    # every other file is the same file (not rewritten: same inode)
    for name, ino in before.items():
        assert os.stat(str(tmp_path / name)).st_ino == ino, name


def test_prunes_only_the_roles_files_and_replaces_old_numbered_ones(tmp_path):
    (tmp_path / "node-labels").mkdir()
    (tmp_path / "003-configmap-kube-system-rdma-devices.yaml").write_text(MARK + " from X. Do not edit.\nold: 1\n")
    (tmp_path / "node-labels" / "001-node-gone.yaml").write_text(MARK + " from X. Do not edit.\nold: 1\n")
    (tmp_path / "user-notes.yaml").write_text("# mine\nkeep: true\n")
    (tmp_path / "README.md").write_text("not ours\n")
    res = run_manifests(args(tmp_path))
    assert sorted(res["removed"]) == ["003-configmap-kube-system-rdma-devices.yaml", "node-labels/001-node-gone.yaml"]
    assert "user-notes.yaml" in listing(tmp_path) and "README.md" in listing(tmp_path)
    gone = run_manifests(args(tmp_path, objects=[CRD], node_labels={}))
    assert sorted(gone["removed"]) == ["configmap-kube-system-rdma-devices.yaml", "node-labels/node-n1.yaml"]


def test_check_mode_and_diff(tmp_path):
    dest = tmp_path / "out"
    res = run_manifests(args(dest), check_mode=True, diff=True)
    assert not dest.exists()
    assert res["changed"] and len(res["written"]) == 4
    assert res["diff"][1]["after"].startswith(MARK) and res["diff"][1]["before"] == ""
    run_manifests(args(dest))
    changed = args(dest, objects=[CRD, cm("rdma-devices", data={"a": "2"})])
    res = run_manifests(changed, check_mode=True, diff=True)
    assert res["written"] == ["configmap-kube-system-rdma-devices.yaml"]
    assert "a: '1'" in res["diff"][0]["before"] and "a: '2'" in res["diff"][0]["after"]
    assert "a: '1'" in (dest / "configmap-kube-system-rdma-devices.yaml").read_text()  # untouched


def test_state_absent_removes_every_own_file_keeps_folders(tmp_path):
    run_manifests(args(tmp_path))
    (tmp_path / "mine.yaml").write_text("keep: 1\n")
    res = run_manifests(args(tmp_path, state="absent"))
    assert len(res["removed"]) == 4 and res["files"] == []
    assert listing(tmp_path) == ["mine.yaml"] and (tmp_path / "node-labels").is_dir()


def test_mode_change_rewrites(tmp_path):
    run_manifests(args(tmp_path))
    res = run_manifests(args(tmp_path, mode="0600"))
    assert len(res["written"]) == 4
    assert stat.S_IMODE(os.stat(str(tmp_path / "kustomization.yaml")).st_mode) == 0o600


@pytest.mark.parametrize("kw, message", [
    ({"objects": [cm("a"), cm("a")]}, "ConfigMap/a and ConfigMap/a would both be written to configmap-kube-system-a.yaml"),
    ({"objects": [cm("a", ns="b-c"), cm("c-a", ns="b")]}, "would both be written to configmap-b-c-a.yaml"),
    ({"objects": [cm("../etc")]}, "metadata.name of object ConfigMap/../etc is '../etc': not usable in a file name"),
    ({"objects": [{"kind": "ConfigMap"}]}, "every object needs apiVersion, kind and metadata.name"),
    ({"header": "# another tool"}, "header: must begin with the marker"),
    ({"files": {"x.yaml": "no marker\n"}}, "x.yaml: its text does not begin with the marker"),
    ({"files": {"../x.yaml": MARK + "\n"}}, "files: '../x.yaml' is not allowed; allowed: a file name"),
    ({"files": {"x\n.yaml": MARK + "\n"}}, "files: 'x\\n.yaml' is not allowed"),
    ({"objects": [cm("a\nb")]}, "metadata.name of object ConfigMap/a\nb is 'a\\nb': not usable in a file name"),
    ({"mode": "rw"}, "mode: 'rw' is not allowed; allowed: an octal file mode"),
    # setuid with write for everyone; execute bits: a manifest is never a program
    ({"mode": "4777"}, "mode: '4777' is not allowed"),
    ({"mode": "0755"}, "mode: '0755' is not allowed"),
    ({"mode": "0666"}, "mode: '0666' is not allowed"),
    ({"node_labels": {"node1": {"a b": "x"}}}, "node_labels[node1]: the label key 'a b' is not allowed"),
    ({"node_labels": {"node1": {"rdma.fabric/pool": "a b"}}}, "node_labels[node1][rdma.fabric/pool]: 'a b' is not allowed"),
    ({"node_labels": {"node1": "x"}}, "node_labels[node1]: must be a mapping"),
    ({"node_labels": {"node 1": {}}}, "metadata.name of object Node/node 1 is 'node 1'"),
    # an empty marker would make every file of the folder "ours" (replaced, removed)
    ({"marker": "", "header": "", "kustomization_header": ""}, "marker: '' is not allowed"),
    ({"marker": "#", "header": "#", "kustomization_header": "#"}, "marker: '#' is not allowed"),
])
def test_bad_input_writes_nothing(tmp_path, kw, message):
    with pytest.raises(manifests.ManifestError, match=re.escape(message)):
        run_manifests(args(tmp_path / "out", **kw))
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("dest", ["out/../../elsewhere", "out\n"])
def test_dest_with_dot_dot_or_a_line_break_is_refused(tmp_path, dest):
    with pytest.raises(manifests.ManifestError, match="dest: .* is not allowed; allowed: a folder path"):
        run_manifests(args(str(tmp_path) + "/" + dest))
    assert listing(tmp_path) == []


def test_dest_that_is_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(manifests.ManifestError, match="exists and is not a folder"):
        run_manifests(args(tmp_path / "f"))
