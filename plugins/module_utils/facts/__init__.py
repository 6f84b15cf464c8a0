# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading the host (host side only): every sysfs/procfs/configfs read goes through :mod:`.sysfs`.

* :mod:`.sysfs`      - rooted, non-blocking reads that degrade to "unknown" with a warning, never a traceback.
* :mod:`.pci`        - the PCI topology (bridges, NUMA, GPU-to-NIC relations, configuration space).
* :mod:`.rdma_facts` - the RDMA facts gatherer behind ``rdma_device_facts`` (schema: ``common.rdma_schema``).
* :mod:`.host_state` - what a role manages (files, folders, unit states), read in one call.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
