# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A new user's first hour, run from the installed tarball (conftest.py: the install itself is README's command).

* README's first playbook (facts and the lossless dry run), with README's command, on localhost seeing a sysfs
  fixture: on a netdev without DCB it warns, naming what the port cannot do; with the role's default
  (``on_unsupported: fail``) it fails naming the port and the setting that gets past it, and the controller keeps
  no temporary file; with README's ``module_defaults`` (sysfs elsewhere, as in a container) and a netdev that is
  not on the host, it says that, not a DCB read error;
* the collection's playbooks by their installed names (facts, plan, report) with an inventory of localhost;
* the example inventory with the settings it ships (its ansible.cfg: the fact cache its groups read).

The commands are README's, changed only where stated: ``node1.example.com`` is localhost (local connection),
the plan covers the lossless stage only (``--tags lossless_ethernet``: the driver stage would plan this test
machine's own packages), and the example inventory's facts run on localhost (``-e rdma_fabric_hosts=localhost``:
its hosts do not exist).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import json
import os

import yaml

from conftest import NETDEV
from docblocks import doc_block

FIRST_COMMAND = "ansible-playbook -i node1.example.com, first.yml --check --diff"
JSON = {"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json"}
# what the lossless role would write on the host (check mode must leave them as they are)
HOST_PATHS = ("/etc/rdma-fabric", "/var/lib/rdma-fabric", "/usr/lib/rdma-fabric", "/usr/sbin/rdma-fabric",
              "/etc/systemd/system/rdma-fabric-lossless.service", "/etc/udev/rules.d/90-rdma-fabric-lossless.rules")


def commands(block):
    """The block's commands, continuation lines joined."""
    out, cur = [], ""
    for line in block.lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cur += line.rstrip()
        if cur.endswith("\\"):
            cur = cur[:-1].rstrip() + " "
            continue
        out.append(cur)
        cur = ""
    return out


def first_playbook(cwd, extra=None):
    """README's first.yml written to ``cwd``; ``extra``: keys added to its play (README's module_defaults)."""
    text = doc_block("README.md", "# first.yml").text
    if extra:
        plays = yaml.safe_load(text)
        plays[0].update(extra)
        text = yaml.safe_dump(plays, sort_keys=False)
    with open(os.path.join(cwd, "first.yml"), "w") as f:
        f.write(text)
    command = doc_block("README.md", FIRST_COMMAND).first
    assert "-i node1.example.com," in command
    return command.replace("-i node1.example.com,", "-i localhost, -c local")


def host_state():
    return dict((p, os.path.exists(p)) for p in HOST_PATHS)


def leftovers(user):
    return glob.glob(os.path.join(user.tmp, "rdma-fabric-host-tools.*"))


def workdir(user, name):
    path = os.path.join(user.base, name)
    os.makedirs(path)
    return path


def test_first_playbook_on_a_nic_without_dcb_warns(user):
    cwd = workdir(user, "first")
    before = host_state()
    run = user.sh(first_playbook(cwd), cwd, netdevs=[NETDEV], sysfs=user.sysfs_fixture(), **JSON)
    assert run.rc == 0, run
    assert run.results("Show them")["localhost"]["msg"] == "['mlx5_0']: RoCE ports ['ens1f0']", run
    configured = run.results("Configure lossless RoCE on every port (one call)")["localhost"]
    port = configured["ports"][NETDEV]
    assert [u["option"] for u in port["unsupported"]] == ["trust", "dscp2prio", "pfc"], port
    assert all("ens1f0 has no DCB support" in u["reason"] and "Operation not supported" in u["reason"]
               for u in port["unsupported"]), port
    assert any(w.startswith("ens1f0: skipped trust, dscp2prio, pfc: ens1f0 has no DCB support")
               for w in configured["warnings"]), configured
    # the rest of the profile is planned from the fixture's rdma_cm values (ToS 106 and RoCE v2 already)
    assert port["after"]["roce_tos"] == 106 and port["after"]["roce_mode"] == "v2"
    assert host_state() == before and not leftovers(user)


def test_first_playbook_with_the_roles_default_names_the_port_and_the_way_out(user):
    cwd = workdir(user, "first-fail")
    before = host_state()
    run = user.sh(first_playbook(cwd) + " -e lossless_ethernet_on_unsupported=fail", cwd, netdevs=[NETDEV],
                  sysfs=user.sysfs_fixture(), **JSON)
    assert run.rc == 2, run
    built = json.loads(run.results("Build the host runtime on the controller (module_utils in one deterministic zip)")
                       ["localhost"]["stdout"])["path"]
    assert built.startswith(os.path.join(user.tmp, "rdma-fabric-host-tools.")), built
    (failed,) = list(run.results("Stop, naming the ports that cannot do the profile and how to apply the rest").values())
    msg = " ".join(failed["msg"].split())
    assert msg.startswith("lossless_ethernet: 1 of 1 ports cannot be configured, nothing was changed on any port: "
                          "ports[0] (ens1f0): ens1f0 cannot do what was asked"), msg
    assert ("With this role, to skip (with a warning) what ens1f0 cannot do and apply the rest: "
            "lossless_ethernet_on_unsupported: warn (every port), or for these ports only "
            'lossless_ethernet_port_settings: {"ens1f0": {"on_unsupported": "warn"}}.') in msg, msg
    # the failed play removed the controller-side build of the host runtime (the role's always section)
    assert not os.path.exists(os.path.dirname(built)) and not leftovers(user)
    assert host_state() == before


def test_first_playbook_with_sysfs_elsewhere_and_a_netdev_not_on_the_host(user):
    """README's module_defaults (sysfs_path, as in a container that sees the host's /sys elsewhere), pointed at the
    fixture, in a network namespace without ens1f0: the port is said not to be on this host."""
    cwd = workdir(user, "first-container")
    block = doc_block("README.md", "module_defaults:")
    assert "sysfs_path: /host/sys" in block.text
    extra = yaml.safe_load(block.text.replace("/host/sys", user.sysfs_fixture()))
    run = user.sh(first_playbook(cwd, extra), cwd, netdevs=[], **JSON)
    assert run.rc == 0, run
    port = run.results("Configure lossless RoCE on every port (one call)")["localhost"]["ports"][NETDEV]
    assert [u["option"] for u in port["unsupported"]] == ["trust", "dscp2prio", "pfc"], port
    reason = port["unsupported"][0]["reason"]
    assert reason.startswith("ens1f0 is not a network interface of this host: `dcb pfc show` says "
                             "'Attribute read: No such device', although %s/class/net/ens1f0 lists it"
                             % user.sysfs_fixture()), reason


def test_facts_plan_and_report_by_their_installed_names(user):
    cwd = workdir(user, "playbooks")
    with open(os.path.join(cwd, "inventory"), "w") as f:
        f.write("[rdma_nodes]\nlocalhost ansible_connection=local lossless_ethernet_on_unsupported=warn\n")
    block = doc_block("README.md", "ansible-playbook -i inventory rdma.fabric.facts")
    facts, plan, report = commands(block)
    # docs/rollout.md gives the same plan command
    assert commands(doc_block("docs/rollout.md", "ANSIBLE_CALLBACKS_ENABLED=rdma.fabric.fabric_plan \\")) == [plan]

    run = user.sh(facts, cwd, netdevs=[NETDEV], sysfs=user.sysfs_fixture(), **JSON)
    assert run.rc == 0, run
    rdma = run.results("Read the RDMA devices, ports and GIDs")["localhost"]["ansible_facts"]["rdma"]
    assert [d["name"] for d in rdma["devices"]] == ["mlx5_0"] and rdma["netdevs"][NETDEV]["device"] == "mlx5_0"

    run = user.sh(plan + " --tags lossless_ethernet", cwd, netdevs=[NETDEV], sysfs=user.sysfs_fixture())
    assert run.rc == 0, run
    with open(os.path.join(cwd, "plan", "fabric-plan.json")) as f:
        planned = json.load(f)
    assert planned["check_mode"] is True, planned.keys()
    assert "localhost" in json.dumps(planned["hosts"]), planned["hosts"]
    assert os.path.isfile(os.path.join(cwd, "plan", "fabric-plan.html"))

    run = user.sh(report, cwd, netdevs=[NETDEV], sysfs=user.sysfs_fixture())
    assert run.rc == 0, run
    with open(os.path.join(cwd, "reports", "fabric-report.json")) as f:
        written = json.load(f)
    assert "localhost" in json.dumps(written["hosts"]) and "ens1f0" in json.dumps(written["hosts"])
    assert os.path.isfile(os.path.join(cwd, "reports", "fabric-report.html")) and not leftovers(user)


def test_the_example_inventory_with_its_settings(user):
    """From the installed collection's folder, with its ansible.cfg: the facts land in the fact cache and the
    constructed groups read them."""
    block = doc_block("inventories/example/README.md",
                      "export ANSIBLE_CONFIG=$PWD/inventories/example/ansible.cfg    # the fact cache the constructed "
                      "groups read")
    lines = block.text.split("\n")
    (i,) = [n for n, line in enumerate(lines) if line.startswith("ansible-playbook -i inventories/example rdma.fabric.facts")]
    lines[i] = lines[i].replace("rdma.fabric.facts", "rdma.fabric.facts -e rdma_fabric_hosts=localhost", 1)
    run = user.sh("\n".join(lines), user.collection, netdevs=[NETDEV], sysfs=user.sysfs_fixture())
    assert run.rc == 0, run
    assert glob.glob(os.path.join(user.home, ".cache", "rdma-fabric", "facts", "*localhost")), run
    graph = run.out[run.out.index("@all:"):]
    for group in ("rdma_link_layer_ethernet", "roce_v2_ready", "rdma_stack_inbox", "rdma_pool_roce1_"):
        section = graph[graph.index("@" + group):].split("\n")
        assert "localhost" in section[1], (group, graph)
