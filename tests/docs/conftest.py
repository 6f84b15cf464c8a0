# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the tests of the documentation's commands share (tests/docs/run starts them; make docs-run).

The collection is the built tarball installed the way README says, into a fresh HOME (so into
``$HOME/.ansible/collections``), and every command runs from there by the collection's installed names, with
the environment of a user: no ANSIBLE_CONFIG, no ANSIBLE_COLLECTIONS_PATH (the Makefile's are removed).

The "host" is this machine (localhost, local connection, Debian's /usr/bin/python3 as its Python), seen
through Linux namespaces so that nothing of the real machine is read or changed:

* a mount namespace with a sysfs fixture of the collection (``derived_roce_mlx5_ofed``: mlx5_0 port 1, a RoCE
  v2 port on the netdev ``ens1f0``), copied from the installed tarball's manifest, bind-mounted over /sys;
* a network namespace holding a veth netdev named ``ens1f0``: a real netdev without DCB (iproute2's ``dcb``
  says "Operation not supported", as on a VM's virtio NIC), or none (the netdev is not on the host).

Needs root (namespaces, mounts), as make test does.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from docblocks import doc_block  # noqa: E402  pylint: disable=wrong-import-position

VENV = os.environ.get("RDMA_DOCS_VENV") or os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
TARBALL = os.environ.get("RDMA_DOCS_TARBALL", "")
HOST_PYTHON = "/usr/bin/python3"
FIXTURE = "derived_roce_mlx5_ofed"
NETDEV = "ens1f0"


class Run(object):
    """A finished command: ``rc``, ``out`` (stdout and stderr), ``json`` (the JSON callback's document, if any)."""

    def __init__(self, argv, proc):
        self.argv = argv
        self.rc = proc.returncode
        self.out = proc.stdout
        self.json = None
        if "{" in self.out:
            try:
                self.json = json.loads(self.out[self.out.index("{"):])
            except ValueError:
                self.json = None

    def results(self, task):
        """The results of the task named ``task`` (role tasks as "role : name"), by host."""
        found = {}
        for play in (self.json or {}).get("plays", []):
            for t in play.get("tasks", []):
                name = t["task"]["name"]
                if name == task or name.endswith(" : " + task):
                    found.update(t["hosts"])
        return found

    def __repr__(self):
        return "rc=%s %s\n%s" % (self.rc, " ".join(self.argv), self.out[-6000:])


class User(object):
    """The user's side: HOME, the installed collection, and how commands run."""

    def __init__(self, base):
        self.base = base
        self.home = os.path.join(base, "home")
        self.tmp = os.path.join(base, "tmp")
        for d in (self.home, self.tmp):
            os.makedirs(d)
        self.collection = os.path.join(self.home, ".ansible", "collections", "ansible_collections", "rdma", "fabric")

    def env(self, **extra):
        env = dict((k, v) for k, v in os.environ.items() if not k.startswith("ANSIBLE_"))
        env.update({"HOME": self.home, "PATH": os.path.join(VENV, "bin") + os.pathsep + os.environ["PATH"],
                    "TMPDIR": self.tmp, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_LOCALHOST_WARNING": "false",
                    "ANSIBLE_PYTHON_INTERPRETER": HOST_PYTHON, "ANSIBLE_RETRY_FILES_ENABLED": "0"})
        env.update(extra)
        return env

    def sh(self, text, cwd, netdevs=None, sysfs=None, timeout=600, **env):
        """Run ``text`` with bash (-e, pipefail) in ``cwd``. ``netdevs``: in a network namespace of its own with
        these veth netdevs (none: an empty list); ``sysfs``: that folder bind-mounted over /sys in a mount
        namespace of its own."""
        argv = ["bash", "-euo", "pipefail", "-c", text]
        if netdevs is not None or sysfs is not None:
            setup = ["set -e"]
            if sysfs is not None:
                setup.append('mount --bind "$RDMA_DOCS_SYSFS" /sys')
            for name in netdevs or []:
                setup.append("ip link add %s type veth peer name %s-peer" % (name, name))
            setup.append('exec "$@"')
            argv = ["unshare", "--net"] + (["--mount"] if sysfs is not None else []) + \
                   ["bash", "-c", "\n".join(setup), "rdma-docs-ns"] + argv
            env["RDMA_DOCS_SYSFS"] = sysfs or ""
        proc = subprocess.run(argv, cwd=cwd, env=self.env(**env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=timeout, check=False)
        return Run(argv, proc)

    def sysfs_fixture(self, name=FIXTURE):
        """A fresh copy of a sysfs fixture tree of the installed collection (its JSON manifest, rebuilt with the
        collection's own tests/unit/fixtures/sysfs/trees.py); returns its ``sys`` folder."""
        dest = os.path.join(self.base, "sysfs-" + name)
        if not os.path.isdir(dest):
            fixtures = os.path.join(self.collection, "tests", "unit", "fixtures", "sysfs")
            code = ("import json, sys; sys.path.insert(0, %r); import trees; "
                    "trees.build(json.load(open(%r)), %r)" % (fixtures, os.path.join(fixtures, name + ".json"), dest))
            subprocess.run([sys.executable, "-c", code], check=True)
        return os.path.join(dest, "sys")


@pytest.fixture(scope="session")
def user(tmp_path_factory):
    """The collection installed from the tarball by README's install command, into a fresh HOME."""
    if not TARBALL or not os.path.isfile(TARBALL):
        raise AssertionError("RDMA_DOCS_TARBALL must name the built tarball (make docs-run sets it): %r" % TARBALL)
    if os.geteuid() != 0:
        raise AssertionError("tests/docs runs the docs' commands in Linux namespaces: run it as root (make test)")
    u = User(str(tmp_path_factory.mktemp("user")))
    block = doc_block("README.md", "ansible-galaxy collection install --no-deps rdma-fabric-0.1.0.tar.gz")
    named = block.first.split()[-1]
    if named != os.path.basename(TARBALL):
        raise AssertionError("README installs %s, the build wrote %s: README's install command is stale"
                             % (named, os.path.basename(TARBALL)))
    downloads = os.path.join(u.base, "downloads")
    os.makedirs(downloads)
    shutil.copy(TARBALL, downloads)
    run = u.sh(block.text, cwd=downloads)
    assert run.rc == 0, run
    assert os.path.isfile(os.path.join(u.collection, "MANIFEST.json")), run
    return u
