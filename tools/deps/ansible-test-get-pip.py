# -*- coding: utf-8 -*-
"""Local stand-in for ansible-test's pip bootstrap script (get-pip.py).

ansible-test bootstraps pip into each sanity-test virtualenv by downloading
get-pip-<ver>.py from ci-files.testing.ansible.com, a site this project's
machines cannot reach. `make sanity` copies this file to the cache path that
ansible-test checks first (~/.ansible/test/cache/get_pip_<ver>.py). It does the
same job with what is here: Python's bundled ``ensurepip`` puts a pip into the
virtualenv, then that pip installs the exact packages ansible-test asked for
(e.g. ``pip==24.2``) from the package index, like get-pip.py would.
"""
import ensurepip
import subprocess
import sys

# get-pip.py's own flags; the rest are plain `pip install` arguments.
OWN_FLAGS = {"--no-setuptools": "setuptools", "--no-wheel": "wheel"}
args = [a for a in sys.argv[1:] if a not in OWN_FLAGS]
unwanted = [OWN_FLAGS[a] for a in sys.argv[1:] if a in OWN_FLAGS]

ensurepip.bootstrap(upgrade=True)
pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
rc = subprocess.call(pip + ["install", "--quiet"] + args)
if rc == 0 and unwanted:
    # ensurepip brings setuptools along on Python 3.11; get-pip.py would not.
    rc = subprocess.call(pip + ["uninstall", "--quiet", "--yes"] + unwanted)
sys.exit(rc)
