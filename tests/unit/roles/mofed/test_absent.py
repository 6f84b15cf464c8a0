# -*- coding: utf-8 -*-
"""mofed_state: absent, the real role run by ansible-playbook (check mode) on this machine.

TEST DOUBLES, said so: the host's facts are the constructed ones of
tests/unit/fixtures/network/constructed_mlx5_bond_facts.json (a management VLAN on a bond of
two ConnectX ports, a virtio NIC on the default route) plus the OS facts the role dispatches on;
the package query (``__mofed_pkg_query``) is a script that answers like ``dpkg-query -W`` for a
fixed set of installed packages (this machine has no RDMA stack); the record of added packages
is a file under the test's folder. The role's own tasks decide; apt runs in check mode.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.rdma.fabric.tests.unit.plugins.action.run_playbook import run

HERE = os.path.dirname(os.path.abspath(__file__))
FACTS = os.path.join(HERE, "..", "..", "fixtures", "network", "constructed_mlx5_bond_facts.json")

PLAY = """
- name: mofed_state absent
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Set the facts (TEST DOUBLE for setup and rdma_device_facts)
      fixture_facts:
        path: "{{ facts_file }}"

    - name: Remove
      ansible.builtin.include_role:
        name: rdma.fabric.mofed
"""

# TEST DOUBLE module: the fixture as ansible_facts (as setup returns them), with the OS facts added.
FIXTURE_FACTS_MODULE = """#!/usr/bin/python
import json
from ansible.module_utils.basic import AnsibleModule
module = AnsibleModule(argument_spec=dict(path=dict(type="path", required=True)), supports_check_mode=True)
with open(module.params["path"]) as f:
    facts = json.load(f)
facts.pop("_comment", None)
facts.update(os_family="Debian", distribution="Debian", distribution_major_version="12",
             distribution_release="bookworm", kernel="6.1.0-99-test", architecture="x86_64")
module.exit_json(changed=False, ansible_facts=facts)
"""

# TEST DOUBLE for dpkg-query -W: the packages in INSTALLED are installed, the others are not.
FAKE_QUERY = """#!/bin/sh
shift 2
rc=0
for name in "$@"; do
  case " $INSTALLED " in
    *" $name "*) printf '%s\\t1.0\\tinstalled\\n' "$name" ;;
    *) echo "dpkg-query: no packages found matching $name" >&2; rc=1 ;;
  esac
done
exit $rc
"""

ADDED = ("doca-ofed", "mlnx-ofed-kernel-dkms", "mlnx-tools", "python3-debian", "removed-since")


def remove(tmp_path, address, record=ADDED, installed=("doca-ofed", "mlnx-ofed-kernel-dkms", "mlnx-tools", "python3-debian", "rdma-core"),
           **values):
    (tmp_path / "library").mkdir()
    (tmp_path / "library" / "fixture_facts.py").write_text(FIXTURE_FACTS_MODULE)
    query = tmp_path / "dpkg-query"
    query.write_text(FAKE_QUERY.replace("$INSTALLED", " ".join(installed)))
    query.chmod(0o755)
    added_file = tmp_path / "mofed-added.json"
    if record is not None:
        added_file.write_text(json.dumps({"schema": 1, "added": record}))
    extra = dict({"facts_file": os.path.abspath(FACTS), "ansible_host": address, "mofed_state": "absent",
                  "__mofed_added_file": str(added_file), "__mofed_pkg_query": [str(query), "-W", "-f=x"]}, **values)
    return run(tmp_path, PLAY, extra, "--check")


def result(tasks, name):
    return tasks["rdma.fabric.mofed : " + name]["localhost"]


def test_only_the_added_packages_still_installed_are_removed(tmp_path):
    """SSH over the virtio NIC: the driver packages may go. rdma-core was there before (not recorded): it stays."""
    rc, tasks, out = remove(tmp_path, "198.51.100.7")
    assert rc == 0, out[-4000:]
    decided = result(tasks, "Work out what removal takes away")["ansible_facts"]
    assert decided["__mofed_remove"] == ["doca-ofed", "mlnx-ofed-kernel-dkms", "mlnx-tools", "python3-debian"]
    assert decided["__mofed_remove_drivers"] == ["mlnx-ofed-kernel-dkms"]
    apt = result(tasks, "Remove the packages this role added (apt)")
    assert apt["invocation"]["module_args"]["name"] == decided["__mofed_remove"]
    assert apt["invocation"]["module_args"]["state"] == "absent" and apt["invocation"]["module_args"]["autoremove"] is False
    removed = result(tasks, "Remove the modules-load.d file, the ib_core option file, the record of added packages and "
                            "the record of the last run")["results"]
    record = [r for r in removed if r["item"] == str(tmp_path / "mofed-added.json")][0]
    assert record["changed"] is True                        # check mode: says so, keeps it
    assert (tmp_path / "mofed-added.json").exists()
    assert result(tasks, "Install, check, load and activate the driver stack of flavour inbox").get("skipped") is True


def test_removal_under_the_management_connection_is_refused(tmp_path):
    rc, tasks, out = remove(tmp_path, "10.20.0.5")
    assert rc != 0
    failed = result(tasks, "Refuse to remove the driver stack under the management connection")
    assert failed["failed"] is True
    assert ("mofed: refusing mofed_state=absent on localhost: removing mlnx-ofed-kernel-dkms unloads or replaces the "
            "driver stack, and the management connection (10.20.0.5, found by address) runs over "
            "bond0.100 > bond0 > ens1f0 > ens1f1 (drivers mlx5_core). Nothing was removed. Set "
            "mofed_allow_management_restart: true") in " ".join(failed["msg"].split())
    assert "rdma.fabric.mofed : Remove the packages this role added (apt)" not in tasks


def test_opt_in_allows_it(tmp_path):
    rc, tasks, out = remove(tmp_path, "10.20.0.5", mofed_allow_management_restart=True)
    assert rc == 0, out[-4000:]
    assert result(tasks, "Remove the packages this role added (apt)")["invocation"]["module_args"]["name"][1] == "mlnx-ofed-kernel-dkms"


def test_user_space_only_removal_is_not_refused(tmp_path):
    """Nothing of the driver stack in the record: removing tools never drops the connection."""
    rc, tasks, out = remove(tmp_path, "10.20.0.5", record=["mlnx-tools", "perftest"], installed=("mlnx-tools", "perftest"))
    assert rc == 0, out[-4000:]
    assert result(tasks, "Work out what removal takes away")["ansible_facts"]["__mofed_remove_drivers"] == []


def test_no_record_removes_no_package(tmp_path):
    """A host the role never installed on (or installed with a version before the record): no package is touched."""
    rc, tasks, out = remove(tmp_path, "10.20.0.5", record=None)
    assert rc == 0, out[-4000:]
    assert result(tasks, "Read the packages this role added").get("skipped") is True
    assert result(tasks, "Work out what removal takes away")["ansible_facts"]["__mofed_remove"] == []
    assert result(tasks, "Remove the packages this role added (apt)").get("skipped") is True


def test_absent_with_mlnx_ofed_is_refused_naming_the_variable(tmp_path):
    rc, tasks, out = remove(tmp_path, "198.51.100.7", mofed_flavor="mlnx_ofed", mofed_mlnx_ofed_url="https://example.invalid/MLNX_OFED_LINUX-1-x-y.tgz",
                            mofed_mlnx_ofed_checksum="sha256:" + "0" * 64)
    assert rc != 0
    failed = result(tasks, "Check the variables before touching anything")
    assert "mofed_state: 'absent' is not allowed with mofed_flavor: mlnx_ofed" in failed["msg"]


RECORD_PLAY = """
- name: The record an install run keeps
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Record
      ansible.builtin.include_role:
        name: rdma.fabric.mofed
        tasks_from: record_added.yml
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the record is written root-owned, as on a host")
def test_an_install_run_records_what_appeared_and_keeps_earlier_records(tmp_path):
    """The package list before the install is given (as packages.yml took it); the one after is a TEST DOUBLE
    script. rdma-core was there before: never recorded. mlnx-tools came from an earlier run: kept."""
    after = tmp_path / "list-after"
    after.write_text("#!/bin/sh\nprintf 'bash\\tinstalled\\nrdma-core\\tinstalled\\ndoca-ofed\\tinstalled\\n"
                     "mlnx-ofed-kernel-dkms\\tinstalled\\nold-conf\\tconfig-files\\n'\n")
    after.chmod(0o755)
    added_file = tmp_path / "var" / "mofed-added.json"
    added_file.parent.mkdir()
    added_file.write_text(json.dumps({"schema": 1, "added": ["mlnx-tools"]}))
    extra = {"__mofed_pkg_list": [str(after)], "__mofed_added_file": str(added_file),
             "__mofed_all_before": {"stdout": "bash\tinstalled\nrdma-core\tinstalled\nold-conf\tconfig-files"},
             "__mofed_state": {"paths": {str(added_file): {"exists": True}}}}
    rc, tasks, out = run(tmp_path, RECORD_PLAY, extra)
    assert rc == 0, out[-4000:]
    assert json.loads(added_file.read_text()) == {"schema": 1, "added": ["doca-ofed", "mlnx-ofed-kernel-dkms", "mlnx-tools"]}
    # the same again: nothing new, the file is not rewritten
    rc, tasks, out = run(tmp_path, RECORD_PLAY, extra)
    assert rc == 0 and tasks["rdma.fabric.mofed : Record the packages this role added"]["localhost"]["changed"] is False
