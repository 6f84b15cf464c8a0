# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Count the remote module calls of rdma.fabric.lossless_ethernet on a host where nothing changes.

    python3 benchmarks/lossless_calls.py --inventory .lab/NAME/inventory.yml [--collection-root DIR] [--runs 2]

Runs molecule/lossless_ethernet/apply.yml (the role with the scenario's
settings: rxe9 on dcbsim0 and rxe0 on eth1, so two RoCE ports) of the
collection at --collection-root (default: this checkout; give an export of
an older commit to measure it) against a running lab (after the scenario's
prepare) --runs times with the json callback, and prints for each run: wall
time, changed count, and remote module calls per host, counted as
benchmarks/converge.py counts them (task results and loop items that ran a
module on the host: not skipped, not delegated to the controller, not a
controller-only action), with the tasks that made them. The last run is the
one where nothing changes (the first converges).

A measurement, not a pass/fail test: the exit status is 0 when the runs
completed, whatever the figures.
"""

from __future__ import absolute_import, division, print_function

import argparse
import os
import sys
import tempfile

# The playbook runner and the remote-call count are converge.py's.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from converge import CONTROLLER_ACTIONS, ROOT, env_for, figures, playbook  # noqa: E402  pylint: disable=wrong-import-position


def remote_tasks(data):
    """``{host: [task names]}`` of the task results figures() counts as remote calls."""
    out = {}
    for play in (data or {}).get("plays", []):
        for task in play.get("tasks", []):
            for host, res in (task.get("hosts") or {}).items():
                if res.get("skipped") or res.get("_ansible_delegated_vars") or res.get("action") in CONTROLLER_ACTIONS:
                    continue
                items = [i for i in res.get("results") or [res] if isinstance(i, dict) and not i.get("skipped")]
                out.setdefault(host, []).extend([task["task"]["name"]] * len(items))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--inventory", required=True, help="inventory of a running lab (after the scenario's prepare)")
    parser.add_argument("--collection-root", default=ROOT, help="the collection to run (default: this checkout)")
    parser.add_argument("--runs", type=int, default=2, help="runs of the role (default 2)")
    args = parser.parse_args()
    root = os.path.abspath(args.collection_root)
    # The collection under test must be importable as ansible_collections.rdma.fabric from a folder of its own.
    colls = tempfile.mkdtemp(prefix="bench-lossless-")
    os.makedirs(os.path.join(colls, "ansible_collections", "rdma"))
    os.symlink(root, os.path.join(colls, "ansible_collections", "rdma", "fabric"))
    env = env_for(tempfile.mkdtemp(prefix="bench-lossless-eph-"), os.environ.get("RDMA_LAB_NAME", "bench-lossless"))
    env["ANSIBLE_COLLECTIONS_PATH"] = colls
    apply = os.path.join(root, "molecule", "lossless_ethernet", "apply.yml")
    print("collection: %s" % root)
    for i in range(args.runs):
        wall, rc, data, text = playbook(os.path.abspath(args.inventory), apply, env, json_out=True)
        fig = figures(data)
        print("run %d: rc %d, %.0f s, changed %d, remote module calls per host: %s" % (
            i + 1, rc, wall, fig["changed"], ", ".join("%s %d" % hc for hc in sorted(fig["remote_calls"].items()))))
        for host, names in sorted(remote_tasks(data).items()):
            for name in names:
                print("    %s: %s" % (host, name))
        if data is None or rc != 0:
            print(text[-3000:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
