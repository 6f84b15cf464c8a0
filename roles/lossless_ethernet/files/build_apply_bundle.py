# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build the boot-time re-apply tool of rdma.fabric.lossless_ethernet.

Runs on the Ansible controller (with the controller's own Python, so that
``ansible.module_utils`` is importable). Writes one executable Python zip
application holding:

* ``__main__.py``: the re-apply entrypoint (``apply_lossless.py`` of this role);
* the ``rdma.fabric`` module named by ``--module`` (``roce_qos``) and the
  collection's ``plugins/module_utils`` tree, under their usual
  ``ansible_collections.rdma.fabric`` import names;
* ``ansible/module_utils`` of the controller's ansible-core, which is what
  AnsiballZ ships with every module run as well.

So the host can run the very module the role ran, without Ansible and
without a second copy of its logic:
``PYTHONPATH=<zip> python3 -m ansible_collections.rdma.fabric.plugins.modules.roce_qos ARGS.json``.

The zip is deterministic (sorted entries, fixed timestamps and modes), so an
unchanged collection gives byte-identical output and the copy to the host
reports no change. Prints one JSON line: ``status`` (``changed`` when it
(re)wrote ``--out``, else ``ok``) and ``sha1``, the SHA-1 of the zip, which the
role compares with the installed copy.
"""

from __future__ import absolute_import, division, print_function

import argparse
import hashlib
import io
import json
import os
import sys
import zipfile

FIXED_TIME = (1980, 1, 1, 0, 0, 0)
COLLECTION_PKG = "ansible_collections/rdma/fabric"


def _py_files(root, prefix):
    """(archive name, path) of every .py file under ``root``, archived under ``prefix``."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                out.append((prefix + "/" + os.path.relpath(path, root).replace(os.sep, "/"), path))
    return out


def collect(collection_root, module, main):
    """Mapping archive name -> bytes of everything the tool needs."""
    import ansible.module_utils  # the controller's ansible-core (this runs with ansible_playbook_python)

    entries = {}
    amu = os.path.dirname(os.path.abspath(ansible.module_utils.__file__))
    for arc, path in _py_files(amu, "ansible/module_utils"):
        entries[arc] = path
    mu = os.path.join(collection_root, "plugins", "module_utils")
    for arc, path in _py_files(mu, COLLECTION_PKG + "/plugins/module_utils"):
        entries[arc] = path
    mod = os.path.join(collection_root, "plugins", "modules", module + ".py")
    if not os.path.isfile(mod):
        raise SystemExit("build_apply_bundle: no module %s" % mod)
    entries[COLLECTION_PKG + "/plugins/modules/%s.py" % module] = mod
    entries["__main__.py"] = main

    data = {}
    for arc, path in entries.items():
        with open(path, "rb") as f:
            data[arc] = f.read()
    # Regular packages all the way down (zipimport and namespace packages do
    # not mix on every Python), and an empty ``ansible`` package as AnsiballZ has.
    for arc in list(data):
        parts = arc.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            init = "/".join(parts[:i]) + "/__init__.py"
            data.setdefault(init, b"")
    data["ansible/__init__.py"] = b""
    return data


def build(data, interpreter):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for arc in sorted(data):
            info = zipfile.ZipInfo(arc, date_time=FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3
            zf.writestr(info, data[arc])
    return ("#!%s\n" % interpreter).encode() + buf.getvalue()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--collection-root", required=True)
    ap.add_argument("--module", default="roce_qos")
    ap.add_argument("--main", required=True, help="the __main__.py of the tool")
    ap.add_argument("--interpreter", default="/usr/bin/python3")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)

    blob = build(collect(os.path.abspath(args.collection_root), args.module, args.main), args.interpreter)
    # The role compares the SHA-1 with the installed copy (host_state) before
    # it copies: the bundle is byte-for-byte reproducible, so an unchanged
    # collection costs no copy on a host that has it.
    sha1 = hashlib.sha1(blob).hexdigest()
    try:
        with open(args.out, "rb") as f:
            if f.read() == blob:
                print(json.dumps({"status": "ok", "sha1": sha1}))
                return 0
    except (IOError, OSError):
        pass
    tmp = args.out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(blob)
    os.chmod(tmp, 0o755)
    os.rename(tmp, args.out)
    print(json.dumps({"status": "changed", "sha1": sha1}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
