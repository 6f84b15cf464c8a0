# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Print a collection tarball's contents by top folder with sizes, and check them.

    python3 tarball_contents.py rdma-fabric-X.Y.Z.tar.gz

Fails (exit 1, naming the paths) when the tarball holds something of the
development setup (the VM lab, Molecule, benchmarks, tools, the lab inventory,
ansible.cfg, caches, build outputs, rebuilt sysfs fixture folders) or lacks
something a user or the shipped unit tests need.
"""

from __future__ import absolute_import, division, print_function

import fnmatch
import sys
import tarfile

# What must never ship: development-only paths and build or cache outputs.
FORBIDDEN = [
    ".ansible-lint", ".ci/*", ".config/*", ".gitignore", ".git/*", "ansible.cfg", "Makefile",
    "benchmarks/*", "molecule/*", "tools/*", "inventories/lab/*", "shared/*",
    "tests/dcbsim/*", "tests/docs/*", "tests/packaging/*", "tests/output/*",
    ".venv*", ".cache/*", ".lab/*", "build/*", "reports/*",
    "*.tar.gz", "*.qcow2", "*.img", "*.raw", "*.pyc", "*.ko", "*/__pycache__/*",
    # sysfs fixture folders are rebuilt from the JSON manifests by the tests
    "tests/unit/fixtures/sysfs/*/*",
]
# What must ship: the collection, its docs and metadata, the execution
# environment's dependency files, and the unit tests with their fixtures.
REQUIRED = [
    "MANIFEST.json", "FILES.json", "README.md", "CHANGELOG.rst", "COPYING",
    "meta/runtime.yml", "meta/execution-environment.yml", "requirements.txt", "bindep.txt",
    "changelogs/changelog.yaml", "changelogs/config.yaml",
    "docs/docsite/extra-docs.yml", "docs/docsite/links.yml",
    "plugins/modules/rdma_device_facts.py", "plugins/module_utils/common/rdma_schema.py",
    "plugins/plugin_utils/k8s_rdma.py", "plugins/filter/rdma_ports.py", "plugins/doc_fragments/sysfs.py",
    # the report's HTML and SVG templates (plugin_utils/report_templates.py reads them beside itself)
    "plugins/plugin_utils/templates/report/report.html.j2", "plugins/plugin_utils/templates/report/host_grid.svg.j2",
    "roles/mofed/tasks/main.yml", "roles/k8s_rdma_stack/README.md", "roles/gpudirect/README.md",
    "playbooks/site.yml", "inventories/example/01-hosts.yml", "inventories/example/ansible.cfg",
    "tests/unit/conftest.py", "tests/unit/fixtures/sysfs/trees.py", "tests/unit/fixtures/sysfs/lab_rxe_lab1.json",
    "tests/unit/fixtures/sysfs/synthetic_host.py", "tests/unit/fixtures/pci/pci_tree.py",
]


def main(path):
    with tarfile.open(path) as tar:
        members = [m for m in tar.getmembers() if m.isfile() or m.issym() or m.islnk()]
    names = [m.name[2:] if m.name.startswith("./") else m.name for m in members]
    by_top = {}
    for m, name in zip(members, names):
        top = name.split("/", 1)[0] + "/" if "/" in name else "(top-level files)"
        count, size = by_top.get(top, (0, 0))
        by_top[top] = (count + 1, size + m.size)
    total = sum(m.size for m in members)
    print("%-22s %6s %10s" % ("folder", "files", "bytes"))
    for top in sorted(by_top):
        print("%-22s %6d %10d" % (top, by_top[top][0], by_top[top][1]))
    print("%-22s %6d %10d (compressed: %d bytes)" % ("total", len(members), total, _size(path)))
    problems = ["ships %s (matches %s)" % (n, p) for n in names for p in FORBIDDEN if fnmatch.fnmatch(n, p)]
    problems += ["link %s (a tarball for Galaxy holds no links)" % n for m, n in zip(members, names)
                 if m.issym() or m.islnk()]
    problems += ["lacks %s" % r for r in REQUIRED if r not in names]
    for p in problems:
        print("tarball: " + p, file=sys.stderr)
    return 1 if problems else 0


def _size(path):
    with open(path, "rb") as f:
        f.seek(0, 2)
        return f.tell()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
