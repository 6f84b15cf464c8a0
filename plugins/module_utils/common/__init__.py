# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure rules, standard library only, no I/O: imported by host code (modules, the host runtime) AND by the
controller plugins (filters, actions, plugin_utils), so both sides decide with the same code.

Nothing here reads or changes a host, and nothing here imports from another package of module_utils.

* :mod:`.rdma_schema` - the facts schema: its version, the port rule (what kind a port is), the selectors.
* :mod:`.gid`         - GID text: normalisation, decoding to an IP address, GID types.
* :mod:`.qos_model`   - the QoS option model of ``roce_qos``: every option validated and normalised once.
* :mod:`.perftest`    - perftest/rping: limits, argv, output parsing, pass/fail.
* :mod:`.rdma_link`   - rxe/siw link requests: normaliser, plan.
* :mod:`.sriov`       - SR-IOV PF requests: normaliser, VF settings argv, the boot-time commands.
* :mod:`.host_state`  - the ``host_state`` record: does a path differ from what a write task makes; unit names.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
