# -*- coding: utf-8 -*-
"""Every module that takes ``sysfs_path`` takes the same option: one argument spec (argspec/sysfs_path.py),
one doc fragment (rdma.fabric.sysfs; gpudirect documents its own default, <host_root>/sys) and one rule
(facts.sysfs.check_sysfs_root), which refuses a folder that is not a sysfs root before anything is read,
with the same message in every module."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
import yaml

from ansible.module_utils import basic

from ansible_collections.rdma.fabric.plugins.module_utils.argspec.sysfs_path import SYSFS_PATH
from ansible_collections.rdma.fabric.plugins.modules import gpudirect, rdma_device_facts, rdma_link, roce_qos, sriov_vfs

# The least each module needs besides sysfs_path to get as far as reading it.
MODULES = {
    "rdma_device_facts": (rdma_device_facts, {}),
    "rdma_link": (rdma_link, {"name": "rxe9", "netdev": "eth9"}),
    "roce_qos": (roce_qos, {"netdev": "eth9", "trust": "dscp"}),
    "sriov_vfs": (sriov_vfs, {"pfs": [{"netdev": "eth9", "numvfs": 1}]}),
    "gpudirect": (gpudirect, {}),
}


@pytest.fixture(name="spec_of")
def fixture_spec_of(monkeypatch):
    """The argument spec a module's main() builds (AnsibleModule stopped right after it is given one)."""
    class Stop(Exception):
        pass

    def spec_of(module):
        seen = {}

        def init(self, argument_spec=None, **kwargs):
            seen.update(argument_spec or {})
            raise Stop()

        monkeypatch.setattr(basic.AnsibleModule, "__init__", init)
        with pytest.raises(Stop):
            module.main()
        monkeypatch.undo()
        return seen
    return spec_of


@pytest.mark.parametrize("name", sorted(MODULES))
def test_one_spec_and_one_fragment(name, spec_of):
    module = MODULES[name][0]
    spec = spec_of(module)["sysfs_path"]
    doc = yaml.safe_load(module.DOCUMENTATION)
    if name == "gpudirect":
        assert spec == dict(SYSFS_PATH, default=None)
        assert "sysfs_path" in doc["options"]       # its default is <host_root>/sys
    else:
        assert spec == SYSFS_PATH
        assert "rdma.fabric.sysfs" in doc["extends_documentation_fragment"]
        assert "sysfs_path" not in doc["options"]   # the fragment's text, not a copy


@pytest.mark.parametrize("name", sorted(MODULES))
@pytest.mark.parametrize("shape, message", [
    ("missing", "sysfs_path: %r is not a directory; expected the host's sysfs root (e.g. /sys, or /host/sys in a container)"),
    ("not_sysfs", "sysfs_path: %r does not look like a sysfs root (it has no class/, devices/ or module/ folder); "
                  "expected e.g. /sys, not /sys/class/infiniband"),
])
def test_one_rule_one_message(name, shape, message, run_main, tmp_path):
    module, args = MODULES[name]
    path = tmp_path / "sys"
    if shape == "not_sysfs":
        (path / "infiniband").mkdir(parents=True)
    ok, result = run_main(module.main, dict(args, sysfs_path=str(path), host_root="/") if name == "gpudirect"
                          else dict(args, sysfs_path=str(path)))
    assert not ok and result["failed"] is True
    assert result["msg"] == message % str(path)
