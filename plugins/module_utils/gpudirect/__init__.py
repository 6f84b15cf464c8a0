# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPUDirect RDMA on a host (host side only): the logic behind ``rdma.fabric.gpudirect`` and the host
runtime's ``rdma-fabric gpudirect-acs``.

* :mod:`.acs`       - the PCIe ACS capability: read a bridge's ACS words, write the control word (checked).
* :mod:`.probes`    - what the host has: GPUs, driver, DMA-BUF, peer memory, IOMMU, ACS, GPU-NIC matrix (``gather``).
* :mod:`.readiness` - the rules: ready or not, and why.
* :mod:`.plan`      - the changes (peer-memory module, modules-load.d file, ACS words) as steps with undo.
* :mod:`.acs_boot`  - the ACS boot record and ``rdma-fabric gpudirect-acs``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
