# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build the host runtime: the collection's ``plugins/module_utils`` as one zip application.

Runs on the controller, once per play (the ``rdma.fabric.host_tools`` role's
``build`` entry point runs this file with ``ansible_playbook_python``,
delegated to localhost). The zip holds ONLY:

* every ``.py`` file of ``plugins/module_utils`` (standard library only, no
  ``ansible.*`` import), under its usual import name
  ``ansible_collections/rdma/fabric/plugins/module_utils/...``;
* empty ``__init__.py`` files for the packages on that path that have none
  (zipimport needs regular packages);
* ``__main__.py``, which calls ``host_cli.main`` (:data:`MAIN`).

No ansible-core, no modules, no bytecode. The bytes depend on nothing but the
source files: entries sorted by name, stored uncompressed (deflate output
differs between zlib builds), fixed timestamps (1980-01-01), modes 0644, no
extra fields, no shebang (``/usr/sbin/rdma-fabric`` names the interpreter),
so its SHA-1 is the same on every controller and every run, and the role's
one ``host_state`` read sees whether the host already has it.

    python3 host_runtime.py [--collection-root DIR] [--out FILE]

writes the zip (by default into a new temporary folder) and prints one JSON
line: ``path``, ``sha1``, ``size``, ``files`` (the number of entries).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import hashlib
import io
import json
import os
import tempfile
import zipfile

FIXED_TIME = (1980, 1, 1, 0, 0, 0)
PACKAGE = "ansible_collections/rdma/fabric/plugins/module_utils"
NAME = "rdma-fabric.pyz"
MAIN = (b"# rdma.fabric host runtime (plugins/plugin_utils/host_runtime.py): rdma-fabric SUBCOMMAND [ARGS...]\n"
        b"import sys\n\n"
        b"from ansible_collections.rdma.fabric.plugins.module_utils.runtime.host_cli import main\n\n"
        b"sys.exit(main(sys.argv[1:]))\n")


def default_root():
    """The collection this file belongs to (plugins/plugin_utils/ -> the root)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def collect(collection_root):
    """``{archive name: bytes}``: module_utils, package stubs, ``__main__.py``."""
    top = os.path.join(collection_root, "plugins", "module_utils")
    if not os.path.isdir(top):
        raise SystemExit("host_runtime: no plugins/module_utils under %s" % collection_root)
    entries = {}
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                arc = PACKAGE + "/" + os.path.relpath(path, top).replace(os.sep, "/")
                with open(path, "rb") as f:
                    entries[arc] = f.read()
    for arc in list(entries):
        parts = arc.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            entries.setdefault("/".join(parts[:i]) + "/__init__.py", b"")
    entries["__main__.py"] = MAIN
    return entries


def build(entries):
    """The zip's bytes (deterministic: see the module docstring)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for arc in sorted(entries):
            info = zipfile.ZipInfo(arc, date_time=FIXED_TIME)
            info.compress_type = zipfile.ZIP_STORED
            info.create_system = 3
            info.external_attr = 0o100644 << 16
            zf.writestr(info, entries[arc])
    return buf.getvalue()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--collection-root", default=default_root())
    ap.add_argument("--out", help="where to write the zip (default: %s in a new temporary folder)" % NAME)
    args = ap.parse_args(argv)
    entries = collect(args.collection_root)
    data = build(entries)
    out = args.out or os.path.join(tempfile.mkdtemp(prefix="rdma-fabric-host-tools."), NAME)
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o644)
    os.rename(tmp, out)
    print(json.dumps({"path": out, "sha1": hashlib.sha1(data).hexdigest(), "size": len(data), "files": len(entries)},
                     sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
