# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Blocks that cannot run here (they need GPUs, SR-IOV NICs, Slurm...; each says so) are still checked against
the installed collection, so that they do not rot:

* the role READMEs' playbooks pass ``ansible-playbook --syntax-check`` (every role and module name resolves) and
  the variables they give each role pass that role's argument spec (meta/argument_specs.yml, the check the role
  runs first);
* the NHC check of rdma_metrics' README parses (``bash -n``);
* the facts schema of docs/DESIGN.md has the keys that rdma_device_facts returns (the module run on the sysfs
  fixture of conftest.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from docblocks import doc_block


def test_role_readme_playbooks_parse_and_pass_the_roles_argument_specs(user):
    blocks = [
        doc_block("roles/gpudirect/README.md",
                  "# not run by the tests: needs GPUs (tests/docs checks its syntax and variables)", run=False),
        doc_block("roles/lossless_ethernet/README.md",
                  "# not run by the tests: needs RDMA NICs with DCB (tests/docs checks its syntax and variables)",
                  run=False),
        doc_block("roles/rdma_metrics/README.md", "# not run by the tests: needs RDMA NICs and a Prometheus host "
                  "(tests/docs checks its syntax and variables)", run=False),
        doc_block("roles/soft_roce/README.md", "# not run by the tests: needs the rdma_rxe kernel module (molecule "
                  "runs the role on the VM lab; tests/docs checks its syntax and variables)", run=False),
        doc_block("roles/sriov/README.md",
                  "# not run by the tests: needs a NIC with SR-IOV (tests/docs checks its syntax and variables)",
                  run=False)]
    plays = [play for block in blocks for play in yaml.safe_load(block.text)]
    cwd = os.path.join(user.base, "snippets")
    os.makedirs(cwd)
    with open(os.path.join(cwd, "readmes.yml"), "w") as f:
        yaml.safe_dump(plays, f, sort_keys=False)
    run = user.sh("ansible-playbook -i localhost, --syntax-check readmes.yml", cwd)
    assert run.rc == 0, run
    checked = []
    for play in plays:
        for entry in play.get("roles", []):
            name = entry["role"].split(".")[-1]
            with open(os.path.join(user.collection, "roles", name, "meta", "argument_specs.yml")) as f:
                spec = yaml.safe_load(f)["argument_specs"]["main"]["options"]
            result = ArgumentSpecValidator(spec).validate(dict(entry.get("vars") or {}))
            assert not result.error_messages, (name, result.error_messages)
            checked.append(name)
    assert sorted(set(checked)) == ["gpudirect", "lossless_ethernet", "rdma_metrics", "soft_roce", "sriov"]


def test_the_nhc_check_parses(user):
    block = doc_block("roles/rdma_metrics/README.md",
                      "# not run by the tests: an NHC check (no NHC here; bash -n checks its syntax)", run=False)
    run = user.sh("bash -n <<'NHC'\n%sNHC" % block.text, user.base)
    assert run.rc == 0 and "function check_rdma_fabric()" in block.text, run


def test_the_facts_schema_has_the_keys_rdma_device_facts_returns(user):
    block = doc_block("docs/DESIGN.md", "# not run by the tests: an annotated example (tests/docs compares its keys "
                      "with what rdma_device_facts returns)", run=False)
    doc = yaml.safe_load(block.text)["rdma"]
    run = user.sh("ansible localhost -c local -m rdma.fabric.rdma_device_facts -a sysfs_path=%s" % user.sysfs_fixture(),
                  user.base, ANSIBLE_LOAD_CALLBACK_PLUGINS="1", ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json")
    assert run.rc == 0, run
    (result,) = [t["hosts"]["localhost"] for play in run.json["plays"] for t in play["tasks"]]
    real = result["ansible_facts"]["rdma"]
    dev, port = real["devices"][0], real["devices"][0]["ports"][0]
    doc_dev, doc_port = doc["devices"][0], doc["devices"][0]["ports"][0]
    assert sorted(doc) == sorted(real)
    assert sorted(doc_dev) == sorted(dev)
    assert sorted(doc_port) == sorted(port)
    assert sorted(doc_port["gids"][0]) == sorted(port["gids"][0])
    assert sorted(doc["netdevs"]["ens1f0"]) == sorted(real["netdevs"]["ens1f0"])
    assert set(doc["modules"]) <= set(real["modules"]) and sorted(doc["stack"]) == sorted(real["stack"])
