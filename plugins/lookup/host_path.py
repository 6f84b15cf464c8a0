# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: host_path
short_description: A path the collection owns on a host, by its name
version_added: 0.2.0
author:
  - rdma.fabric developers (@rdma-fabric)
description:
  - Returns the path constants of C(plugins/module_utils/common/paths.py), the one place where the collection's
    paths on a host (its configuration, state, lock and runtime) are written. The roles read their paths through
    this lookup, the modules and the host runtime import the same constants, so the two cannot disagree.
  - Runs on the controller only, without a call to the host.
options:
  _terms:
    description: >-
      Constant names, for example C(LOSSLESS_SAVED_DIR), C(LOSSLESS_BEFORE_DIR), C(HOST_RUNTIME), C(QOS_LOCK),
      C(METRICS_CONFIG), C(CONFIG_DIR), C(STATE_DIR). An unknown name fails, listing the names.
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Where lossless_ethernet saves each port's settings
  ansible.builtin.debug:
    msg: "{{ lookup('rdma.fabric.host_path', 'LOSSLESS_SAVED_DIR') }}"
"""

RETURN = r"""
_raw:
  description: One path per term, in the order of the terms.
  type: list
  elements: str
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.rdma.fabric.plugins.module_utils.common.paths import host_paths


class LookupModule(LookupBase):
    """rdma.fabric's paths on a host (see DOCUMENTATION)."""

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        known = host_paths()
        unknown = [str(t) for t in terms if t not in known]
        if unknown:
            raise AnsibleLookupError("rdma.fabric.host_path: unknown name(s) %s; allowed: %s"
                                     % (", ".join(unknown), ", ".join(sorted(known))))
        return [known[t] for t in terms]
