#!/usr/bin/env bash
# Benchmark, on a lab VM: rdma_device_facts' sysfs gatherer against the
# shell-out pipeline people use to learn the same things
# (`ibv_devinfo -v` + `rdma -j link` + a show_gids-style loop that runs
# `cat` per GID slot), side by side on the same VM.
#
#   RDMA_LAB_NAME=<lab> benchmarks/facts_vs_shell.sh [HOST] [RUNS]
#
# Needs a running lab (tools/lab/lab up, or a Molecule scenario's lab, e.g.
# RDMA_LAB_NAME=mol-facts) whose HOST (default lab1) has an RDMA device.
# Prints, measured inside the VM (no SSH/Ansible overhead in either number):
#   1. in-process gather time (median of RUNS, default 15),
#   2. the shell pipeline's time (median of max(3, RUNS/5) runs),
#   3. the ratio (target: the gatherer at least 10x faster),
# then end to end through Ansible from this machine (median of E2E_RUNS
# interleaved runs each, default 1; 0 skips it: under TCG one pipeline run
# takes minutes):
#   `ansible HOST -m rdma.fabric.rdma_device_facts` vs the pipeline as an
#   `ansible.builtin.shell` task.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
host=${1:-lab1}
runs=${2:-15}
lab="$repo/tools/lab/lab"
inventory="$repo/.lab/${RDMA_LAB_NAME:-default}/inventory.yml"
if [[ ! -f $inventory ]] || ! "$lab" ssh "$host" -- true 2>/dev/null; then
  echo "lab '${RDMA_LAB_NAME:-default}' is not up (no $inventory or $host does not answer):" >&2
  echo "  start it with: RDMA_LAB_NAME=${RDMA_LAB_NAME:-default} tools/lab/lab up" >&2
  exit 2
fi

# The same show_gids-style loop for both measurements (one `cat` per file, as
# the MLNX_OFED show_gids script does).
read -r -d '' PIPELINE <<'EOF' || true
ibv_devinfo -v >/dev/null
rdma -j link show >/dev/null
for d in /sys/class/infiniband/*; do
  dev=${d##*/}
  for p in "$d"/ports/*; do
    port=${p##*/}
    for g in "$p"/gids/*; do
      i=${g##*/}
      gid=$(cat "$g")
      [ "$gid" = 0000:0000:0000:0000:0000:0000:0000:0000 ] && continue
      ndev=$(cat "$p/gid_attrs/ndevs/$i" 2>/dev/null)
      type=$(cat "$p/gid_attrs/types/$i" 2>/dev/null)
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$dev" "$port" "$i" "$gid" "$type" "$ndev"
    done
  done
done >/dev/null
EOF

# Ship the gatherer (module_utils' common/ and facts/ only: it has no other dependency) to the VM.
remote=/tmp/rdma-facts-bench
tar -C "$repo" --exclude=__pycache__ -cf - plugins/module_utils/common plugins/module_utils/facts \
  | "$lab" ssh "$host" -- "rm -rf $remote && mkdir -p $remote/ansible_collections/rdma/fabric && tar -x -C $remote/ansible_collections/rdma/fabric"

echo "== on $host (${RDMA_LAB_NAME:-default}): $("$lab" ssh "$host" -- uname -r), $("$lab" ssh "$host" -- nproc) vCPU"
printf '%s' "$PIPELINE" | "$lab" ssh "$host" -- "cat > $remote/pipeline.sh"
"$lab" ssh "$host" -- python3 - "$remote" "$runs" <<'EOF'
import statistics, subprocess, sys, time
remote, runs = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, remote)
from ansible_collections.rdma.fabric.plugins.module_utils.facts.rdma_facts import gather_rdma_facts

facts = gather_rdma_facts("/sys")
ports = sum(len(d["ports"]) for d in facts["devices"])
gids = sum(len(p["gids"]) for d in facts["devices"] for p in d["ports"])
slots = 0
import os
for d in facts["devices"]:
    for p in d["ports"]:
        slots += len(os.listdir("/sys/class/infiniband/%s/ports/%d/gids" % (d["name"], p["number"])))
print("host: %d RDMA devices, %d ports, %d GID slots, %d valid GIDs" % (len(facts["devices"]), ports, slots, gids))

def timed(fn, n):
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out), out

g_med, g_all = timed(lambda: gather_rdma_facts("/sys"), runs)
def pipeline():
    subprocess.run(["bash", remote + "/pipeline.sh"], check=True, stdout=subprocess.DEVNULL)
p_runs = max(3, runs // 5)
p_med, p_all = timed(pipeline, p_runs)
sys.stdout.flush()
print("in-VM gather (rdma_facts, in-process): median %.1f ms (min %.1f) over %d runs" % (g_med * 1e3, min(g_all) * 1e3, runs))
print("in-VM shell pipeline (ibv_devinfo -v + rdma -j link + show_gids-style loop): median %.0f ms (min %.0f) over %d runs"
      % (p_med * 1e3, min(p_all) * 1e3, p_runs))
print("ratio pipeline/gather: %.0fx (target >= 10x -> %s)" % (p_med / g_med, "MET" if p_med / g_med >= 10 else "NOT MET"))
EOF

# End to end through Ansible (what a play pays per host).
export ANSIBLE_COLLECTIONS_PATH=${ANSIBLE_COLLECTIONS_PATH:-$repo/build/collections}
export ANSIBLE_CONFIG=${ANSIBLE_CONFIG:-$repo/ansible.cfg}
export ANSIBLE_CACHE_PLUGIN=memory ANSIBLE_STDOUT_CALLBACK=minimal
ansible_bin=$repo/.venv/bin/ansible
[[ -x $ansible_bin ]] || ansible_bin=ansible
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
e2e_runs=${E2E_RUNS:-1}
if ((e2e_runs < 1)); then
  "$lab" ssh "$host" -- rm -rf "$remote"
  exit 0
fi
t_module=() t_shell=()
for _ in $(seq "$e2e_runs"); do
  t0=$(date +%s%N); "$ansible_bin" -i "$inventory" "$host" -m rdma.fabric.rdma_device_facts >/dev/null; t1=$(date +%s%N)
  "$ansible_bin" -i "$inventory" "$host" -m ansible.builtin.shell -a "$PIPELINE" >/dev/null; t2=$(date +%s%N)
  t_module+=($(((t1 - t0) / 1000000))) t_shell+=($(((t2 - t1) / 1000000)))
done
m=$(printf '%s\n' "${t_module[@]}" | median) s=$(printf '%s\n' "${t_shell[@]}" | median)
echo "through ansible: rdma_device_facts median ${m} ms, shell pipeline task median ${s} ms ($e2e_runs interleaved run(s) each)"
"$lab" ssh "$host" -- rm -rf "$remote"
