# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """Options of the filters that select RDMA ports from C(ansible_facts.rdma), and of the environment filters.

    A filter whose option differs only in its default restates just C(default) (ansible-doc merges the rest);
    an option whose meaning differs in a filter stays written in that filter.
    """

    # nccl_env, nccl_pod_env, ucx_env, rdma_selectors, rdma_node_labels.
    DOCUMENTATION = r"""
options:
  devices:
    description: Only RDMA devices whose name matches one of these shell globs (for example C(mlx5_*)). Empty means all.
    type: list
    elements: str
    default: []
"""

    # nccl_env, nccl_pod_env, rdma_selectors, rdma_node_labels (ucx_env selects by port kind instead). The meaning
    # in kinds is rdma_schema.LINK_LAYER_KINDS; rdma_shared_dev_plugin_config and k8s_rdma_stack's argument specs
    # say the same of their link_layers.
    LINK_LAYERS = r"""
options:
  link_layers:
    description:
      - Only ports whose link layer reads one of these. In the port kinds of P(rdma.fabric.rdma_ports#filter),
        C(Ethernet) selects C(roce) and C(iwarp) ports (an iWARP port reads Ethernet too; RoCE settings such as the
        GID index and traffic class still come from the RoCE ports only), C(InfiniBand) selects C(infiniband) ports.
      - Empty means all (ports whose link layer is unknown included).
    type: list
    elements: str
    default: []
"""

    # nccl_env, nccl_pod_env, ucx_env (include_soft on by default), rdma_ports (both on by default).
    SOFT_AND_VFS = r"""
options:
  include_soft:
    description: Also use soft devices (Soft-RoCE C(rxe), Soft-iWARP C(siw)).
    type: bool
    default: false
  include_vfs:
    description: Also use SR-IOV virtual functions.
    type: bool
    default: false
"""

    # The environment filters nccl_env, nccl_pod_env and ucx_env. Each filter's description names its GID index
    # and traffic class variables and the rule behind C(auto).
    ENV = r"""
options:
  gid_index:
    description:
      - C(auto) applies the rule in the description (the GID index variable, C(NCCL_IB_GID_INDEX) or
        C(UCX_IB_GID_INDEX), is set when every selected RoCE port has the same C(roce_v2_ipv4_gid_index)).
      - C(omit) never sets the GID index variable (always per-port selection; use it for pods on macvlan secondary
        networks, whose GID index is not the host's).
      - An integer forces that index.
    type: raw
    default: auto
  tc:
    description:
      - Value for the traffic class variable (C(NCCL_IB_TC), C(UCX_IB_TRAFFIC_CLASS)), the whole ToS byte (0-255),
        for example C(lossless_ethernet_roce_tos), instead of the C(roce.default_tos) the RoCE ports agree on.
    type: int
  extra:
    description: Variables merged last (they win). A null value removes a derived variable.
    type: dict
    default: {}
"""
