# -*- coding: utf-8 -*-
"""Unit tests for module_utils/rdma_link: link requests, the current links from facts, the plan, the commands."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common import rdma_link as rl
from ansible_collections.rdma.fabric.plugins.module_utils.facts.rdma_facts import gather_rdma_facts
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError

SYSFS_FIXTURES = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "fixtures", "sysfs"))


def test_normalise_fills_defaults_and_keeps_order():
    links = rl.normalise_links([{"name": "rxe0", "netdev": "eth1"}, {"name": "siw0", "netdev": "eth1", "type": "siw"},
                                {"name": "old", "state": "absent"}], default_state="present")
    assert links == [
        {"name": "rxe0", "type": "rxe", "netdev": "eth1", "state": "present"},
        {"name": "siw0", "type": "siw", "netdev": "eth1", "state": "present"},
        {"name": "old", "type": "rxe", "netdev": None, "state": "absent"},
    ]
    assert rl.normalise_links([{"name": "a", "netdev": "eth0"}], default_state="absent")[0]["state"] == "absent"


@pytest.mark.parametrize("links, needle", [
    ([{"name": "rxe9", "netdev": "eth1;reboot"}], "netdev 'eth1;reboot' is not an interface name"),
    ([{"name": "rxe9", "netdev": "-eth1"}], "is not an interface name"),
    ([{"name": "rxe9", "netdev": "a" * 16}], "is not an interface name"),
    ([{"name": "rxe9"}], "netdev '' is not an interface name"),
    ([{"name": "rx e", "netdev": "eth1"}], "name 'rx e' is not an RDMA device name"),
    ([{"name": "r" * 64, "netdev": "eth1"}], "is not an RDMA device name"),
    ([{"name": "rxe0\n", "netdev": "eth1"}], "is not an RDMA device name"),
    ([{"name": "x", "netdev": "eth1", "type": "roce"}], "type 'roce'; allowed: rxe, siw"),
    ([{"name": "x", "netdev": "eth1", "state": "gone"}], "state 'gone'; allowed: present, absent"),
    ([{"name": "x", "netdev": "eth1", "mtu": 9000}], "unknown key(s) mtu; allowed: name, type, netdev, state"),
    ([{"name": "x", "netdev": "eth1"}, {"name": "x", "netdev": "eth2"}], "given twice: x"),
    ([{"name": "a", "netdev": "eth1"}, {"name": "b", "netdev": "eth1"}], "more than one present link of a type on one netdev: eth1/rxe"),
    (["rxe0"], "must be a dict"),
    ("rxe0", "must be a list of links"),
])
def test_normalise_rejects_bad_input_naming_the_parameter(links, needle):
    with pytest.raises(RdmaFactsError) as err:
        rl.normalise_links(links, param="soft_roce_links")
    assert "Invalid soft_roce_links" in str(err.value)
    assert needle in str(err.value)


def test_one_link_of_each_type_on_a_netdev_is_allowed():
    links = rl.normalise_links([{"name": "rxe0", "netdev": "eth1"}, {"name": "siw0", "netdev": "eth1", "type": "siw"}])
    assert [link["type"] for link in links] == ["rxe", "siw"]


def test_current_links_from_real_and_derived_facts():
    rxe = gather_rdma_facts(os.path.join(SYSFS_FIXTURES, "lab_rxe_lab1", "sys"))
    assert rl.current_links(rxe) == [{"name": "rxe0", "type": "rxe", "netdev": "eth1"}]
    hw = gather_rdma_facts(os.path.join(SYSFS_FIXTURES, "derived_roce_mlx5_ofed", "sys"))
    assert rl.current_links(hw) == []  # hardware devices are never links


def test_current_links_siw_and_unknown_soft_device():
    facts = {"devices": [
        {"name": "siw0", "soft": True, "driver": "siw", "parent_netdev": None, "ports": [{"netdev": "eth1"}]},
        {"name": "odd0", "soft": True, "driver": None, "parent_netdev": None, "ports": []},
    ]}
    assert rl.current_links(facts) == [{"name": "siw0", "type": "siw", "netdev": "eth1"},
                                       {"name": "odd0", "type": "unknown", "netdev": None}]


def _want(*links):
    return rl.normalise_links(list(links))


CUR = [{"name": "rxe0", "type": "rxe", "netdev": "eth1"}]


@pytest.mark.parametrize("wanted, delete, create", [
    # already there: nothing
    (_want({"name": "rxe0", "netdev": "eth1"}), [], []),
    # missing
    (_want({"name": "siw0", "netdev": "eth1", "type": "siw"}), [], ["siw0"]),
    # on another netdev: recreated
    (_want({"name": "rxe0", "netdev": "eth2"}), ["rxe0"], ["rxe0"]),
    # another type under the same name: recreated
    (_want({"name": "rxe0", "netdev": "eth1", "type": "siw"}), ["rxe0"], ["rxe0"]),
    # same type on the same netdev under another name: replaced
    (_want({"name": "roce0", "netdev": "eth1"}), ["rxe0"], ["roce0"]),
    # absent
    (_want({"name": "rxe0", "state": "absent"}), ["rxe0"], []),
    (_want({"name": "rxe1", "state": "absent"}), [], []),
])
def test_plan(wanted, delete, create):
    d, c = rl.plan_changes(wanted, CUR)
    assert d == delete and [link["name"] for link in c] == create
    after = [cur for cur in CUR if cur["name"] not in d] + [dict((k, link[k]) for k in ("name", "type", "netdev")) for link in c]
    assert rl.mismatches(wanted, after) == []


def test_mismatches_say_what_is_wrong():
    wanted = _want({"name": "rxe0", "netdev": "eth2"}, {"name": "siw0", "netdev": "eth1", "type": "siw"},
                   {"name": "gone", "state": "absent"})
    current = CUR + [{"name": "gone", "type": "rxe", "netdev": "eth0"}]
    assert rl.mismatches(wanted, current) == ["rxe0: rxe on eth1", "siw0: missing", "gone: still present"]


def test_commands_argv_deletes_first():
    wanted = _want({"name": "rxe0", "netdev": "eth2"})
    delete, create = rl.plan_changes(wanted, CUR)
    assert rl.link_commands("/usr/bin/rdma", delete, create) == [
        ["/usr/bin/rdma", "link", "delete", "rxe0"],
        ["/usr/bin/rdma", "link", "add", "rxe0", "type", "rxe", "netdev", "eth2"],
    ]


def test_modules_to_load_and_missing_module_message():
    create = _want({"name": "siw0", "netdev": "eth1", "type": "siw"}, {"name": "rxe0", "netdev": "eth1"})
    assert rl.modules_to_load(create, {"rdma_rxe": True, "siw": False}) == ["siw"]
    assert rl.modules_to_load(create, {}) == ["siw", "rdma_rxe"]
    msg = rl.missing_module_message(["siw"], "6.1.0-56-amd64")
    assert "has no siw module" in msg and "CONFIG_RDMA_SIW" in msg and "6.1.0-56-amd64" in msg


def test_diff_view():
    assert rl.diff_view(CUR) == {"rxe0": "rxe on eth1"}
