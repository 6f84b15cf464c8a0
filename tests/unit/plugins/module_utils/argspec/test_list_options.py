# -*- coding: utf-8 -*-
"""plugins/module_utils/argspec/list_options.py, and the three options declared raw that it checks.

rdma_link ``links``, roce_qos ``ets`` and sriov_vfs ``pfs[].vfs`` are declared ``type: raw`` so that text
is refused naming the option (Ansible's own list/dict check says "dictionary requested, could not parse
JSON or key=value" and names none). ansible-test's validate-modules compares DOCUMENTATION with the
argument spec, but not the suboptions of a raw option: this test does, against the spec each module
checks the option with.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
import yaml

from ansible_collections.rdma.fabric.plugins.module_utils.argspec.list_options import ListOptionError, list_of_dicts
from ansible_collections.rdma.fabric.plugins.modules import rdma_link, roce_qos, sriov_vfs

OPTIONS = dict(tc=dict(type="int", required=True), tsa=dict(type="str", choices=["ets", "strict"], default="ets"),
               bw=dict(type="int"))
FORM = "[{tc: 3, bw: 100}]"


def test_a_list_of_mappings_is_read_as_ansible_reads_it():
    assert list_of_dicts("ets", None, OPTIONS, FORM) is None
    assert list_of_dicts("ets", [], OPTIONS, FORM) == []
    assert list_of_dicts("ets", [{"tc": "3", "bw": "100"}], OPTIONS, FORM) == [{"tc": 3, "tsa": "ets", "bw": 100}]
    assert list_of_dicts("ets", ({"tc": 0, "tsa": "strict"},), OPTIONS, FORM) == [{"tc": 0, "tsa": "strict", "bw": None}]


@pytest.mark.parametrize("value, message", [
    ("50,0,0,50", "ets: got the text '50,0,0,50'; allowed: a list of mappings (keys: tc, tsa, bw), e.g. [{tc: 3, bw: 100}]"),
    ("tc=3 bw=100", "ets: got the text 'tc=3 bw=100'; allowed: a list of mappings (keys: tc, tsa, bw), e.g. [{tc: 3, bw: 100}]"),
    ("", "ets: got the text ''; allowed: "),
    (5, "ets: got int 5; allowed: "),
    ({"tc": 3}, "ets: got dict {'tc': 3}; allowed: "),
    ([{"tc": 3, "bw": 100}, "tc=0"], "ets[1]: got the text 'tc=0', not a mapping; allowed: a list of mappings"),
    ([None], "ets[0]: got NoneType None, not a mapping; allowed: "),
    ([{"bw": 100}], "ets: missing required arguments: tc found in ets"),
    ([{"tc": 3, "tsa": "wrr"}], "ets: value of tsa must be one of: ets, strict, got: wrr found in ets"),
    # (ansible-core 2.17 writes the type as <class 'str'>)
    ([{"tc": "three"}], "ets: argument 'tc' is of type "),
    ([{"tc": 3, "weight": 2}], "ets.weight. Supported parameters include: bw, tc, tsa"),
])
def test_other_forms_are_refused_naming_the_option(value, message):
    with pytest.raises(ListOptionError) as e:
        list_of_dicts("ets", value, OPTIONS, FORM)
    assert str(e.value).startswith(message), str(e.value)
    assert e.value.param == "ets"


def _doc_options(module):
    return yaml.safe_load(module.DOCUMENTATION)["options"]


@pytest.mark.parametrize("doc, spec", [
    (_doc_options(rdma_link)["links"], rdma_link.LINKS_OPTIONS),
    (_doc_options(roce_qos)["ets"], roce_qos.ETS_OPTIONS),
    (_doc_options(sriov_vfs)["pfs"]["suboptions"]["vfs"], sriov_vfs.VF_OPTIONS),
])
def test_documentation_matches_the_suboptions_checked(doc, spec):
    assert doc["type"] == "raw" and "elements" not in doc
    assert sorted(doc["suboptions"]) == sorted(spec)
    for name, entry in spec.items():
        documented = doc["suboptions"][name]
        assert documented.get("type", "str") == entry.get("type", "str"), name
        assert documented.get("required", False) == entry.get("required", False), name
        assert documented.get("choices") == entry.get("choices"), name
        assert documented.get("default") == entry.get("default"), name
