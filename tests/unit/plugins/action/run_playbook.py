# -*- coding: utf-8 -*-
"""Run a real ansible-playbook against localhost from a unit test (helper, not a test).

``run(tmp_path, playbook_text, extra_vars, *options)`` writes the playbook,
runs this venv's ``ansible-playbook`` on ``localhost`` (local connection,
this interpreter) with the collection under test on the collections path and
the JSON callback, and returns ``(rc, {task name: {host: result}}, text)``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys


def collections_path():
    """The folder that holds ansible_collections/ (the tests import the collection from there)."""
    import ansible_collections.rdma.fabric as pkg
    return os.path.abspath(os.path.join(list(pkg.__path__)[0], "..", "..", ".."))


def run(tmp_path, playbook_text, extra_vars=None, *options):
    path = tmp_path / "playbook.yml"
    path.write_text(playbook_text)
    env = dict(os.environ)
    env.update({
        "ANSIBLE_COLLECTIONS_PATH": collections_path(),
        "ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json",
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"),
        "ANSIBLE_CACHE_PLUGIN": "memory",
        "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
    })
    env.pop("ANSIBLE_CONFIG", None)
    ansible_playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    argv = [ansible_playbook, "-i", "localhost,", "-c", "local"] + list(options)
    if extra_vars:
        argv += ["-e", json.dumps(extra_vars)]
    proc = subprocess.run(argv + [str(path)], env=env, cwd=str(tmp_path), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=600, check=False)
    tasks = {}
    try:
        data = json.loads(proc.stdout[proc.stdout.index("{"):])
    except ValueError:
        data = {}
    for play in data.get("plays", []):
        for task in play.get("tasks", []):
            tasks[task["task"]["name"]] = task["hosts"]
    return proc.returncode, tasks, proc.stdout + proc.stderr
