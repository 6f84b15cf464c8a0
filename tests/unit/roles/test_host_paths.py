# -*- coding: utf-8 -*-
"""The collection's paths on a host are written once, in plugins/module_utils/common/paths.py.

The roles and the lab scenarios read them through the ``rdma.fabric.host_path`` lookup. Here:

* no YAML, template or script under roles/, molecule/, playbooks/ or inventories/ spells out a path under the
  folders the collection owns (``paths.OWNED_DIRS``) or its command, outside comments, except the user-facing
  defaults below, which argument specs need as literals: each must equal its constant, in defaults/main.yml and
  in meta/argument_specs.yml;
* every name given to the lookup is a constant of paths.py;
* the paths the docs name (the roles' READMEs, argument specs and comments, docs/, README.md) are the constants
  or files inside the constant folders, so renaming a constant without the docs fails here;
* the lookup, run by a real ansible-playbook, gives the roles' variables the constants.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re

import yaml

from ansible_collections.rdma.fabric.plugins.module_utils.common import paths
from ansible_collections.rdma.fabric.plugins.module_utils.runtime import metrics
from ansible_collections.rdma.fabric.tests.unit.roles.role_specs import ROLES

ROOT = os.path.abspath(os.path.join(ROLES, ".."))
CODE_DIRS = ("roles", "molecule", "playbooks", "inventories")
CODE_EXTS = (".yml", ".yaml", ".j2", ".py", ".sh", ".cfg")
DOC_FILES = ("README.md", os.path.join("docs", "*.md"), os.path.join("roles", "*", "README.md"),
             os.path.join("roles", "*", "meta", "*.yml"), os.path.join("roles", "*", "defaults", "main.yml"))
# A path under an owned folder, or the command (a longer name such as /var/lib/rdma-fabric-standin is not one).
OWNED = re.compile(r"(?:%s)(?![\w-])[\w./<>*-]*" % "|".join(
    re.escape(p) for p in paths.OWNED_DIRS + (paths.HOST_RUNTIME_COMMAND,)))
LOOKUP = re.compile(r"""lookup\(\s*['"]rdma\.fabric\.host_path['"]\s*,([^)]*)\)""")
# User-facing defaults that are one of the paths: (role, variable) -> constant.
USER_DEFAULTS = {
    ("job_env", "job_env_env_file_path"): "JOB_ENV_FILE",
    ("rdma_metrics", "rdma_metrics_lossless_saved_dir"): "LOSSLESS_SAVED_DIR",
}


def _files(top, exts):
    for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in sorted(filenames):
            if name.endswith(exts):
                yield os.path.join(dirpath, name)


def _code_lines(path):
    """``(number, text)`` of a file's lines without comments (YAML, Jinja2, Python and shell comments)."""
    with open(path) as f:
        for number, line in enumerate(f, 1):
            stripped = line.strip()
            if stripped.startswith("#") or stripped.startswith("{#"):
                continue
            yield number, re.sub(r"\s#\s.*\Z", "", line.rstrip("\n"))


def test_no_code_spells_out_a_path_the_collection_owns():
    allowed = set()
    for (role, var), name in USER_DEFAULTS.items():
        allowed.add((os.path.join("roles", role, "defaults", "main.yml"), "%s: %s" % (var, paths.host_paths()[name])))
    found = []
    for top in CODE_DIRS:
        for path in _files(top, CODE_EXTS):
            rel = os.path.relpath(path, ROOT)
            if os.sep + "meta" + os.sep in rel:
                continue   # the role's description and argument specs: docs (and defaults), checked below
            for number, text in _code_lines(path):
                if OWNED.search(text) and (rel, text.strip()) not in allowed:
                    found.append("%s:%d: %s" % (rel, number, text.strip()))
    assert found == [], "use lookup('rdma.fabric.host_path', NAME) (plugins/module_utils/common/paths.py):\n" + \
        "\n".join(found)


def test_user_defaults_are_the_constants():
    for (role, var), name in sorted(USER_DEFAULTS.items()):
        with open(os.path.join(ROLES, role, "defaults", "main.yml")) as f:
            defaults = yaml.safe_load(f)
        with open(os.path.join(ROLES, role, "meta", "argument_specs.yml")) as f:
            specs = yaml.safe_load(f)["argument_specs"]
        assert defaults[var] == paths.host_paths()[name], var
        for entry, spec in specs.items():
            if var in spec["options"]:
                assert spec["options"][var]["default"] == paths.host_paths()[name], (entry, var)


def test_every_lookup_names_a_constant():
    known = paths.host_paths()
    used = set()
    for top in CODE_DIRS:
        for path in _files(top, CODE_EXTS):
            with open(path) as f:
                for args in LOOKUP.findall(f.read()):
                    names = [a.strip().strip("'\"") for a in args.split(",") if "=" not in a]
                    assert names and all(n in known for n in names), (path, names)
                    used.update(names)
    # what the roles write or read
    assert {"LOSSLESS_SAVED_DIR", "LOSSLESS_BEFORE_DIR", "HOST_RUNTIME", "HOST_RUNTIME_DIR", "HOST_RUNTIME_COMMAND",
            "METRICS_CONFIG", "GPUDIRECT_ACS_BOOT_CONFIG", "GPUDIRECT_ACS_SAVED", "MOFED_ADDED", "MOFED_APPLIED"} <= used
    # and what only the lab scenarios read (molecule/ is not in the Galaxy tarball, where this test also runs)
    if os.path.isdir(os.path.join(ROOT, "molecule")):
        assert "QOS_LOCK" in used


def test_the_docs_name_the_constants():
    known = paths.host_paths()
    folders = [v for k, v in known.items() if k.endswith("_DIR") and v not in paths.OWNED_DIRS]
    # files the host runtime keeps under its state folder by a name of its own
    files = set(known.values()) | {paths.STATE_DIR + "/" + metrics.APPLY_STAMP}
    wrong = []
    for pattern in DOC_FILES:
        for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
            with open(path) as f:
                for number, line in enumerate(f, 1):
                    for found in OWNED.findall(line):
                        text = found.rstrip("/.")
                        if text in files or any(text.startswith(d + "/") for d in folders):
                            continue
                        wrong.append("%s:%d: %s" % (os.path.relpath(path, ROOT), number, found))
    assert wrong == []


def test_the_lookup_gives_the_roles_the_constants(tmp_path):
    from ansible_collections.rdma.fabric.tests.unit.plugins.action.run_playbook import run
    names = sorted(paths.host_paths())
    playbook = """
- hosts: localhost
  gather_facts: false
  vars_files:
    - %s
    - %s
  tasks:
    - name: Paths
      ansible.builtin.debug:
        msg:
          lookup: "{{ dict(names | zip(lookup('rdma.fabric.host_path', *names, wantlist=true))) }}"
          roles: "{{ [host_tools_pyz, host_tools_wrapper, __lossless_ethernet_saved_dir, __lossless_ethernet_before_dir] }}"
    - name: Unknown
      ansible.builtin.debug:
        msg: "{{ lookup('rdma.fabric.host_path', 'LOSSLESS_DIR') }}"
      ignore_errors: true
""" % (os.path.join(ROLES, "host_tools", "vars", "main.yml"), os.path.join(ROLES, "lossless_ethernet", "vars", "main.yml"))
    rc, tasks, text = run(tmp_path, playbook, {"names": names, "host_tools_python": "/usr/bin/python3"})
    assert rc == 0, text
    msg = tasks["Paths"]["localhost"]["msg"]
    assert msg["lookup"] == paths.host_paths()
    assert msg["roles"] == [paths.HOST_RUNTIME, paths.HOST_RUNTIME_COMMAND, paths.LOSSLESS_SAVED_DIR,
                            paths.LOSSLESS_BEFORE_DIR]
    failed = tasks["Unknown"]["localhost"]
    assert failed["failed"] is True
    assert "unknown name(s) LOSSLESS_DIR; allowed: CONFIG_DIR" in failed["msg"]
