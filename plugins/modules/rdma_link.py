#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: rdma_link
short_description: Create and remove software RDMA links (Soft-RoCE rxe, Soft-iWARP siw)
version_added: 0.2.0
description:
  - Makes the host's software RDMA links match the request, with C(rdma link add NAME type TYPE netdev NETDEV) and
    C(rdma link delete NAME) (iproute2), run as argument lists.
  - Reads the current links from sysfs through the collection's facts gatherer (the same read as
    M(rdma.fabric.rdma_device_facts)); changes only what differs. A present link that is missing, or exists on another
    netdev or with another type, is (re)created; a link of the same type on the same netdev under another name is
    replaced, with a warning naming the link deleted (whatever uses it loses it); an absent link that exists is
    deleted. Hardware RDMA devices are never touched.
  - Loads the kernel module a link type needs (C(rdma_rxe), C(siw)) before creating a link. Fails before anything is
    touched when the kernel has no such module (naming the module and the kernel option), when a netdev does not
    exist, or on bad input (naming the parameter and the allowed values).
  - Returns the RDMA facts read after the changes in C(ansible_facts.rdma), so later tasks see the new devices without
    another read.
  - Links made here live until the next reboot; the P(rdma.fabric.soft_roce#role) role adds a boot unit per link.
author:
  - rdma.fabric developers (@rdma-fabric)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - rdma.fabric.sysfs
attributes:
  check_mode:
    support: full
    details: Reads the links and reports what would change; runs only C(modinfo) (read-only).
  diff_mode:
    support: full
    details: The links before and after, as C(NAME) -> C(TYPE on NETDEV).
  platform:
    platforms: posix
    details: Linux with iproute2's C(rdma) tool and C(kmod).
options:
  name:
    description:
      - RDMA device name of one link (letters, digits, underscore; up to 63). Mutually exclusive with O(links).
    type: str
  type:
    description:
      - V(rxe) (Soft-RoCE, RoCE v2 over the netdev; kernel module C(rdma_rxe)) or V(siw) (Soft-iWARP; module C(siw)).
      - With O(links), the type of the links that give none.
    type: str
    choices: [rxe, siw]
    default: rxe
  netdev:
    description:
      - The network interface the link runs on. Required for a present link.
    type: str
  state:
    description:
      - Whether the link should exist. With O(links), the state of the links that give none.
    type: str
    choices: [present, absent]
    default: present
  links:
    description:
      - Several links at once (one read, one plan). Mutually exclusive with O(name).
      - A list of mappings with the keys below. Anything else (text such as V(rxe0) or V(name=rxe0), a single mapping,
        an entry that is not a mapping) is refused before anything runs, naming O(links) and showing this form.
    type: raw
    suboptions:
      name:
        description: RDMA device name.
        type: str
        required: true
      type:
        description: V(rxe) or V(siw); default O(type).
        type: str
        choices: [rxe, siw]
      netdev:
        description: The network interface; required when present.
        type: str
      state:
        description: V(present) or V(absent); default O(state).
        type: str
        choices: [present, absent]
notes:
  - Debian 12's kernel has C(rdma_rxe) but no C(siw); the collection's VM lab builds C(siw) from Debian's kernel source.
seealso:
  - module: rdma.fabric.rdma_device_facts
"""

EXAMPLES = r"""
- name: Soft-RoCE on eth1
  rdma.fabric.rdma_link:
    name: rxe0
    netdev: eth1

- name: Soft-iWARP on eth1, and no old link rxe_old
  rdma.fabric.rdma_link:
    links:
      - {name: siw0, type: siw, netdev: eth1}
      - {name: rxe_old, state: absent}
"""

RETURN = r"""
links:
  description: The software RDMA links after the run (in check mode, as they would be).
  returned: always
  type: list
  elements: dict
  contains:
    name: {description: RDMA device name., type: str}
    type: {description: "V(rxe), V(siw), or V(unknown) for another soft device.", type: str}
    netdev: {description: The netdev it runs on., type: str}
  sample: [{name: rxe0, type: rxe, netdev: eth1}]
deleted:
  description: Names of the links deleted (in check mode, that would be).
  returned: always
  type: list
  elements: str
created:
  description: Names of the links created (in check mode, that would be).
  returned: always
  type: list
  elements: str
commands:
  description: The commands run (in check mode, that would run), each an argument list.
  returned: always
  type: list
  elements: list
ansible_facts:
  description: Facts returned to the host.
  returned: always
  type: complex
  contains:
    rdma:
      description: The RDMA facts read after the changes, as M(rdma.fabric.rdma_device_facts) returns them.
      type: dict
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.argspec.list_options import ListOptionError, list_of_dicts
from ansible_collections.rdma.fabric.plugins.module_utils.argspec.sysfs_path import SYSFS_PATH
from ansible_collections.rdma.fabric.plugins.module_utils.facts.rdma_facts import gather_rdma_facts
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_link import (
    KERNEL_MODULE,
    LINK_TYPES,
    STATES,
    current_links,
    diff_view,
    link_commands,
    mismatches,
    missing_module_message,
    modules_to_load,
    normalise_links,
    plan_changes,
    replacements,
)
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError


# links: a list of mappings with these keys (declared raw, checked by list_of_dicts: a refusal names links).
LINKS_OPTIONS = dict(
    name=dict(type="str", required=True),
    type=dict(type="str", choices=list(LINK_TYPES)),
    netdev=dict(type="str"),
    state=dict(type="str", choices=list(STATES)),
)
LINKS_FORM = "[{name: siw0, type: siw, netdev: eth1}, {name: rxe_old, state: absent}]"


def wanted_links(params):
    """The request as checked links (raises RdmaFactsError naming the parameter)."""
    if params["links"] is not None:
        return normalise_links(params["links"], params["type"], params["state"], param="links")
    one = {"name": params["name"], "type": params["type"], "netdev": params["netdev"], "state": params["state"]}
    try:
        return normalise_links([one], params["type"], params["state"])
    except RdmaFactsError as e:
        raise RdmaFactsError(str(e).replace("Invalid links[0]", "Invalid link"))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type="str"),
            type=dict(type="str", choices=list(LINK_TYPES), default="rxe"),
            netdev=dict(type="str"),
            state=dict(type="str", choices=list(STATES), default="present"),
            links=dict(type="raw"),
            sysfs_path=SYSFS_PATH,
        ),
        mutually_exclusive=[["name", "links"]],
        required_one_of=[["name", "links"]],
        supports_check_mode=True,
    )
    sysfs = module.params["sysfs_path"]
    try:
        links = list_of_dicts("links", module.params["links"], LINKS_OPTIONS, LINKS_FORM)
    except ListOptionError as e:
        module.fail_json(msg=str(e))
    try:
        wanted = wanted_links(dict(module.params, links=links))
        facts = gather_rdma_facts(sysfs)
    except RdmaFactsError as e:
        module.fail_json(msg=str(e))

    # Before anything is touched: the netdevs exist, the kernel has the modules.
    gone = sorted(set(w["netdev"] for w in wanted if w["state"] == "present"
                      and not os.path.lexists(os.path.join(sysfs, "class", "net", w["netdev"]))))
    if gone:
        module.fail_json(msg="netdev: no such netdev on this host: %s" % ", ".join(gone))
    unloaded = [t for t in LINK_TYPES if not facts["modules"].get(KERNEL_MODULE[t])
                and any(w["state"] == "present" and w["type"] == t for w in wanted)]
    absent_types = []
    for link_type in unloaded:
        modinfo = module.get_bin_path("modinfo", required=True)
        rc, dummy, dummy = module.run_command([modinfo, "-F", "filename", KERNEL_MODULE[link_type]])
        if rc != 0:
            absent_types.append(link_type)
    if absent_types:
        module.fail_json(msg=missing_module_message(absent_types, os.uname()[2]))

    before = current_links(facts)
    delete, create = plan_changes(wanted, before)
    for text in replacements(wanted, before):
        module.warn(text)
    load = modules_to_load(create, facts["modules"])
    changed = bool(delete or create)
    rdma, modprobe = "rdma", "modprobe"
    if changed and not module.check_mode:
        rdma = module.get_bin_path("rdma", required=True)
        modprobe = module.get_bin_path("modprobe", required=True) if load else modprobe
    commands = [[modprobe, m] for m in load] + link_commands(rdma, delete, create)
    result = dict(changed=changed, deleted=delete, created=[link["name"] for link in create], commands=commands)

    after = before
    if changed and not module.check_mode:
        done = []
        for argv in commands:
            rc, out, err = module.run_command(argv)
            if rc != 0:
                module.fail_json(msg="%s failed (rc %d): %s; done before it: %s; not done: %s" % (
                    " ".join(argv), rc, (err or out).strip(), [" ".join(a) for a in done] or "nothing",
                    [" ".join(a) for a in commands[len(done) + 1:]] or "nothing"), **result)
            done.append(argv)
        facts = gather_rdma_facts(sysfs)
        after = current_links(facts)
        wrong = mismatches(wanted, after)
        if wrong:
            module.fail_json(msg="software RDMA links not as wanted after the changes: %s" % "; ".join(wrong), **result)
    elif changed:
        after = [cur for cur in before if cur["name"] not in delete] + [
            dict((k, link[k]) for k in ("name", "type", "netdev")) for link in create]

    result["links"] = after
    result["ansible_facts"] = {"rdma": facts}
    if module._diff:
        result["diff"] = {"before": diff_view(before), "after": diff_view(after)}
    module.exit_json(**result)


if __name__ == "__main__":
    main()
