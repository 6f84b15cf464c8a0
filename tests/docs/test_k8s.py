# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes guide's commands and examples, run on what k8s_rdma_stack really renders (installed tarball).

* a one-port node pool: the role README's render-only playbook on localhost reading the sysfs fixture (one RoCE
  port, conftest.py); the role warns that the pool has no rdma_shared_device_b, naming it and why; check_pod,
  with the guide's command on the one RayCluster example, fails for that resource on that pool, saying why;
* a two-port pool: the role renders with the guide's settings (the default shared devices, and the per-pool
  list with its pool name made the two-port pool's), from fixture facts of a node that does not exist (a TEST
  DOUBLE of rdma_device_facts: set_fact from tests/unit/fixtures/k8s/facts, stored in a jsonfile fact cache as
  rdma.fabric.facts stores them); check_pod passes there for the RayCluster and every pod of the docs (validated
  as Pods too). (A one-port pool beside a two-port one: tests/unit/roles/k8s_rdma_stack/test_render.py.)

Changed from the docs' commands: the output folder (a temporary folder, not /srv/gitops/rdma), the spec of the
passing check (the docs' pods with the RayCluster in one file).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil

import kubernetes_validate
import yaml

from conftest import NETDEV
from docblocks import doc_block

CHECK_POD = "ansible-playbook -i inventory rdma.fabric.check_pod \\"
RENDER_ONLY = "- hosts: rdma_nodes"
SPEC = "docs/examples/raycluster-rdma.yaml"
GAP = ("[WARNING]: k8s_rdma_stack: the node pool of %s gives no ACTIVE RDMA port to rdma/rdma_shared_device_b: it "
       "has 1 RDMA port(s) to share out (mlx5_0:1) and part 2 of 2 is empty: a device is in at most one resource; pods "
       "asking for rdma/rdma_shared_device_b do not run on its nodes (they stay Pending).")

# TEST DOUBLE of rdma.fabric.rdma_device_facts for nodes that do not exist: their facts from the collection's
# fixtures (tests/unit/fixtures/k8s/facts, README there), cached as rdma.fabric.facts caches them.
DOUBLE = """---
- name: RDMA facts of the fixture nodes (test double, cached)
  hosts: rdma_nodes
  gather_facts: false
  tasks:
    - name: Set ansible_facts.rdma from the fixture file
      ansible.builtin.set_fact:
        rdma: "{{ lookup('ansible.builtin.file', fixtures ~ '/' ~ rdma_fixture ~ '.json') | from_json }}"
        cacheable: true

- name: Kubernetes RDMA stack, rendered with the guide's settings
  hosts: localhost
  gather_facts: false
  tasks:
    - name: The guide's per-pool list, for the two-port pool
      ansible.builtin.set_fact:
        k8s_rdma_stack_shared_devices_pools: "{{ {hostvars['gpu-7'].ansible_facts.rdma | rdma.fabric.rdma_node_pool: pool_list} }}"

    - name: Render
      ansible.builtin.include_role:
        name: rdma.fabric.k8s_rdma_stack
      vars:
        k8s_rdma_stack_apply: false
"""


def flat(text):
    return " ".join(text.split())


def spec_dir(user, name):
    """A working folder holding the installed collection's example as the docs' path names it."""
    cwd = os.path.join(user.base, name)
    os.makedirs(os.path.join(cwd, "docs", "examples"))
    shutil.copy(os.path.join(user.collection, SPEC), os.path.join(cwd, SPEC))
    return cwd


def check_pod_command(output):
    command = " ".join(doc_block("docs/k8s_rdma_stack.md", CHECK_POD).text.replace("\\\n", " ").split())
    assert "-e check_pod_spec=%s -e check_pod_rendered=rendered/k8s" % SPEC in command, command
    return command.replace("rendered/k8s", output)


def test_one_port_pool_render_warns_and_check_pod_says_why(user):
    cwd = spec_dir(user, "k8s-one")
    with open(os.path.join(cwd, "inventory"), "w") as f:
        f.write("[rdma_nodes]\nlocalhost ansible_connection=local\n")
    block = doc_block("roles/k8s_rdma_stack/README.md", RENDER_ONLY)
    assert "k8s_rdma_stack_output_dir: /srv/gitops/rdma" in block.text
    with open(os.path.join(cwd, "render.yml"), "w") as f:
        f.write(block.text.replace("/srv/gitops/rdma", os.path.join(cwd, "rendered", "k8s")))
    run = user.sh("ansible-playbook -i inventory render.yml", cwd, netdevs=[NETDEV], sysfs=user.sysfs_fixture())
    assert run.rc == 0, run
    assert GAP % "localhost" in flat(run.out), run
    assert os.path.isfile(os.path.join(cwd, "rendered", "k8s", "kustomization.yaml"))

    run = user.sh(check_pod_command("rendered/k8s"), cwd, netdevs=[NETDEV], sysfs=user.sysfs_fixture())
    assert run.rc == 2, run
    out = flat(run.out)
    assert "not advertised: roce1-" in out and " (localhost): rdma/rdma_shared_device_b: " in out, run
    assert "has 1 device(s) the RDMA shared device plugin can hand out (mlx5_0:1)" in out, run
    assert "rdma/rdma_shared_device_a:" not in out.split("not advertised:")[1], run


def test_two_port_pool_with_the_guides_settings_passes_every_docs_pod(user):
    cwd = spec_dir(user, "k8s-two")
    fixtures = os.path.join(user.collection, "tests", "unit", "fixtures", "k8s", "facts")
    with open(os.path.join(cwd, "inventory"), "w") as f:
        f.write("[rdma_nodes]\ngpu-7 rdma_fixture=roce-gid3\n")
    with open(os.path.join(cwd, "render.yml"), "w") as f:
        f.write(DOUBLE)
    defaults = yaml.safe_load(doc_block("docs/k8s_rdma_stack.md", "k8s_rdma_stack_shared_devices:").text)
    per_pool = yaml.safe_load(doc_block(
        "docs/k8s_rdma_stack.md", '# pool names as the role prints them ("for 2 node pool(s) (roce2-4c1d2f0a = gpu-7 '
        'and 11 more; ...)")').text)["k8s_rdma_stack_shared_devices_pools"]
    (pool_list,) = per_pool.values()
    settings = dict(defaults, pool_list=pool_list, fixtures=fixtures,
                    k8s_rdma_stack_output_dir=os.path.join(cwd, "rendered", "k8s"))
    with open(os.path.join(cwd, "settings.yml"), "w") as f:
        yaml.safe_dump(settings, f)
    cache = {"ANSIBLE_CACHE_PLUGIN": "jsonfile", "ANSIBLE_CACHE_PLUGIN_CONNECTION": os.path.join(cwd, "facts")}
    run = user.sh("ansible-playbook -i inventory render.yml -e @settings.yml", cwd, **cache)
    assert run.rc == 0, run
    out = flat(run.out)
    assert "rdma_shared_dev_plugin_config" not in out, run
    rendered = os.path.join(cwd, "rendered", "k8s")
    with open(os.path.join(rendered, "configmap-kube-system-rdma-devices.yaml")) as f:
        config = yaml.safe_load(yaml.safe_load(f)["data"]["config.json"])
    selectors = dict((e["resourceName"], e["selectors"]["ifNames"]) for e in config["configList"])
    # the per-pool list of the guide: mlx5_1 (ens1f1) is the pool's a, mlx5_0 (ens1f0) its b
    assert selectors == {"rdma_shared_device_a": ["ens1f1"], "rdma_shared_device_b": ["ens1f0"]}, config

    # every pod of the docs, with the RayCluster, in one spec: valid Pods, advertised on the two-port pool
    docs = [yaml.safe_load(doc_block("docs/k8s_rdma_stack.md", "apiVersion: v1").text)]
    fragments = [
        yaml.safe_load(doc_block("docs/k8s_rdma_stack.md", "nodeSelector: {rdma.fabric/nccl-pool: roce2-0123abcd}       "
                                 "# the node pool (same NIC layout)").text),
        yaml.safe_load(doc_block("roles/k8s_rdma_stack/README.md", "spec:").text)["spec"]]
    for i, spec in enumerate(fragments):
        docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "docs-%d" % i}, "spec": spec})
    for pod in docs:
        kubernetes_validate.validate(pod, "1.33.0", strict=True)
    with open(os.path.join(cwd, SPEC)) as f:
        docs = list(yaml.safe_load_all(f)) + docs
    with open(os.path.join(cwd, "all-pods.yaml"), "w") as f:
        yaml.safe_dump_all(docs, f)
    command = check_pod_command(rendered)
    run = user.sh(command.replace(SPEC, "all-pods.yaml"), cwd, **cache)
    assert run.rc == 0, run
    out = flat(run.out)
    assert "roce2-" in out and " (gpu-7): " in out and "missing" not in out, run
    assert "changed=0" in out and "failed=0" in out, run
