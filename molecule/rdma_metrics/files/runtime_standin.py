# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""STAND-IN for the host runtime until the rdma.fabric.host_tools role lands (test helper).

The rdma_metrics role runs its collector and health check from the host
runtime, /usr/lib/rdma-fabric/rdma-fabric.pyz (docs/DESIGN.md, "Where code
runs"), which rdma.fabric.host_tools builds and installs. Where that role is
not in the collection yet, the scenario's prepare builds this stand-in with
the same contract: a zip application of the collection's plugins/module_utils
whose entry point maps a subcommand to a module_utils module and calls its
``cli_main(argv)`` (``metrics`` -> metrics, ``health-check`` -> health_check).
Deterministic (sorted entries, fixed times).

    python3 runtime_standin.py COLLECTION_ROOT OUT.pyz
"""

from __future__ import absolute_import, division, print_function

import os
import sys
import zipfile

MAIN = b'''import importlib
import sys

SUBCOMMANDS = {"metrics": "metrics", "health-check": "health_check"}


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in SUBCOMMANDS:
        sys.stderr.write("usage: rdma-fabric.pyz {%s} [ARGS]\\n" % "|".join(sorted(SUBCOMMANDS)))
        return 2
    module = importlib.import_module("ansible_collections.rdma.fabric.plugins.module_utils." + SUBCOMMANDS[sys.argv[1]])
    return module.cli_main(sys.argv[2:])


sys.exit(main())
'''
PKG = "ansible_collections/rdma/fabric/plugins/module_utils"


def build(root, out):
    mu = os.path.join(root, "plugins", "module_utils")
    data = {"__main__.py": MAIN}
    for dirpath, dirnames, filenames in os.walk(mu):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                with open(path, "rb") as f:
                    data[PKG + "/" + os.path.relpath(path, mu).replace(os.sep, "/")] = f.read()
    for arc in list(data):
        parts = arc.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            data.setdefault("/".join(parts[:i]) + "/__init__.py", b"")
    tmp = out + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for arc in sorted(data):
            info = zipfile.ZipInfo(arc, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data[arc])
    os.rename(tmp, out)


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2])
