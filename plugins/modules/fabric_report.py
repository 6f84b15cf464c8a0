#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: fabric_report
short_description: Write the RDMA fabric report (JSON, Markdown, self-contained HTML)
version_added: 0.1.0
description:
  - Builds the fleet report from per-host RDMA facts (M(rdma.fabric.rdma_device_facts)), GPUDirect facts
    (M(rdma.fabric.gpudirect)), QoS state and the validation results of the C(rdma.fabric.rdma_validate) role,
    and writes C(fabric-report.json), C(fabric-report.md) and C(fabric-report.html) into O(dest).
  - The JSON has a top-level C(hosts) dictionary keyed by host and a C(validation) list (one entry per test per
    host pair). Every host shows its devices, ports, link state, rate, RoCE v2 GID index, QoS state, GPUDirect
    readiness with reasons and the GPU-NIC topology matrix; unreachable hosts and other problems are marked.
  - The HTML is one file with inline CSS, no scripts and no external resources.
  - Usually run on the controller (C(delegate_to=localhost), C(run_once=true)); see C(playbooks/report.yml).
  - Files are written atomically, only when their content differs.
author:
  - rdma.fabric developers (@rdma-fabric)
attributes:
  check_mode:
    description: Can run in check mode and return changed status prediction without modifying target.
    support: full
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: full
    details: The diff shows the JSON report before and after.
options:
  dest:
    description: Folder to write the reports into; created (mode C(0755)) when missing.
    type: path
    required: true
  hosts:
    description:
      - Per-host input, keyed by inventory host name. Each value may hold C(reachable) (bool, default true),
        C(failed_earlier) (bool, default false; a task failed on the host earlier in the run, so its later stages
        did not run, and the report marks it C(failed)),
        C(message) (why a host is unreachable or anything else worth saying), C(facts_source) (C(live) or C(cache)),
        C(rdma) (the C(ansible_facts.rdma) dictionary), C(gpudirect) (the C(ansible_facts.gpudirect) dictionary) and
        C(qos) (a dictionary keyed by netdev of QoS settings, each optionally with C(problems), a list of sentences).
    type: dict
    required: true
  validation:
    description: Validation results, one dictionary per test per pair, as the C(rdma.fabric.rdma_validate) role returns them.
    type: list
    elements: dict
    default: []
  formats:
    description: Which files to write.
    type: list
    elements: str
    choices: [json, md, html]
    default: [json, md, html]
  basename:
    description: File name without extension.
    type: str
    default: fabric-report
  title:
    description: Title of the report.
    type: str
    default: RDMA fabric report
  generated_at:
    description: Time stamp written into the report; the current UTC time (ISO 8601) when omitted.
    type: str
  mode:
    description: File mode of the written reports.
    type: raw
    default: "0644"
notes:
  - The report is a controller-side artifact. Its content includes measurements that differ between runs, so
    C(changed) is true whenever a figure moved; playbooks that count changes on managed hosts mark the task
    C(changed_when=false).
seealso:
  - module: rdma.fabric.rdma_device_facts
  - module: rdma.fabric.gpudirect
  - module: rdma.fabric.perftest
"""

EXAMPLES = r"""
- name: Write the fabric report on the controller
  rdma.fabric.fabric_report:
    dest: "{{ playbook_dir }}/../reports"
    hosts: >-
      {{ dict(ansible_play_hosts_all | zip(ansible_play_hosts_all | map('extract', hostvars, 'rdma_report_input'))) }}
    validation: "{{ rdma_validate_results | default([]) }}"
  delegate_to: localhost
  run_once: true
  register: report

- name: Print the summary
  ansible.builtin.debug:
    msg: "{{ report.summary_lines }}"
  run_once: true
"""

RETURN = r"""
paths:
  description: Paths of the report files by format.
  returned: always
  type: dict
  sample: {json: /srv/reports/fabric-report.json, md: /srv/reports/fabric-report.md, html: /srv/reports/fabric-report.html}
changed_files:
  description: Formats whose file was (or in check mode would be) written.
  returned: always
  type: list
  elements: str
  sample: [json, md, html]
summary:
  description:
    - Counts over the fleet. C(hosts), C(reachable), C(unreachable) (host names), C(failed) (names of the hosts that
      failed earlier in the run), C(hosts_with_problems) (host names),
      C(devices), C(ports), C(ports_active), C(gpu_hosts), C(gpudirect_ready), C(validation) (C(total), C(passed),
      C(failed), C(not_run)) and C(ok) (no problem and no failed test).
  returned: always
  type: dict
  sample: {hosts: 2, reachable: 2, unreachable: [], failed: [], ports: 2, ports_active: 2, ok: true}
summary_lines:
  description: A one-screen text summary (report path, per-host state, every test result, the first problems).
  returned: always
  type: list
  elements: str
problems:
  description: Every problem found, as sentences prefixed with the host name.
  returned: always
  type: list
  elements: str
  sample: ["lab2: rxe0 port 1 (eth1) is DOWN, not ACTIVE"]
report:
  description: The report data written to the JSON file (C(schema_version), C(title), C(generated_at), C(summary), C(problems), C(hosts), C(validation)).
  returned: always
  type: dict
"""

import datetime
import os
import re
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes

from ansible_collections.rdma.fabric.plugins.module_utils import report as rpt

EXTENSIONS = {"json": "json", "md": "md", "html": "html"}


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except (IOError, OSError):
        return None


def _write_atomic(module, path, data, mode):
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        module.atomic_move(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    module.set_mode_if_different(path, mode, False)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            dest=dict(type="path", required=True),
            hosts=dict(type="dict", required=True),
            validation=dict(type="list", elements="dict", default=[]),
            formats=dict(type="list", elements="str", choices=list(EXTENSIONS), default=list(EXTENSIONS)),
            basename=dict(type="str", default="fabric-report"),
            title=dict(type="str", default="RDMA fabric report"),
            generated_at=dict(type="str"),
            mode=dict(type="raw", default="0644"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    base = p["basename"]
    if not base or "/" in base or base.startswith(".") or "\x00" in base:
        module.fail_json(msg="basename: %r is not a plain file name; allowed: a name without '/' that does not start with '.'" % base)
    for name, value in p["hosts"].items():
        if value is not None and not isinstance(value, dict):
            module.fail_json(msg="hosts: the value for %s must be a dictionary (reachable, message, rdma, gpudirect, qos)" % name)
    mode = p["mode"]
    if isinstance(mode, int) and not isinstance(mode, bool):
        mode_ok = 0 <= mode <= 0o7777
    else:
        mode_ok = isinstance(mode, str) and re.match(r"^0?[0-7]{3,4}$", mode) is not None
    if not mode_ok:
        module.fail_json(msg="mode: %r is not an octal file mode; allowed: a string such as '0644' or an integer 0-07777" % (mode,))
    dest = p["dest"]
    if os.path.exists(dest) and not os.path.isdir(dest):
        module.fail_json(msg="dest: %s exists and is not a folder" % dest)

    generated_at = p["generated_at"] or datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
    report = rpt.build_report(p["hosts"], p["validation"], generated_at=generated_at, title=p["title"])
    paths = dict((fmt, os.path.join(dest, "%s.%s" % (base, EXTENSIONS[fmt]))) for fmt in p["formats"])
    contents = dict((fmt, to_bytes(rpt.render(report, fmt))) for fmt in p["formats"])
    changed_files = [fmt for fmt in p["formats"] if _read(paths[fmt]) != contents[fmt]]

    result = dict(
        changed=bool(changed_files), paths=paths, changed_files=changed_files, summary=report["summary"],
        summary_lines=rpt.summary_lines(report, paths.get("html") or next(iter(paths.values()), None)),
        problems=report["problems"], report=report,
    )
    if module._diff:
        before = _read(os.path.join(dest, "%s.json" % base))
        result["diff"] = {
            "before_header": os.path.join(dest, "%s.json" % base),
            "after_header": os.path.join(dest, "%s.json" % base),
            "before": before.decode("utf-8", "replace") if before is not None else "",
            "after": rpt.render_json(report),
        }
    if module.check_mode or not changed_files:
        module.exit_json(**result)

    if not os.path.isdir(dest):
        try:
            os.makedirs(dest, 0o755)
        except OSError as e:
            module.fail_json(msg="dest: cannot create %s: %s" % (dest, e), **result)
    written = []
    for fmt in changed_files:
        try:
            _write_atomic(module, paths[fmt], contents[fmt], p["mode"])
        except (IOError, OSError) as e:
            module.fail_json(msg="cannot write %s: %s (written before the error: %s)"
                             % (paths[fmt], e, ", ".join(written) or "none"), **result)
        written.append(paths[fmt])
    module.exit_json(**result)


if __name__ == "__main__":
    main()
