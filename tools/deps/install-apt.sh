#!/usr/bin/env bash
# Install the pinned Debian packages listed in $1 (name=version per line).
# Skips apt entirely when every pinned version is already installed, so
# `make` stays fast and works offline on a prepared machine.
set -euo pipefail
list=${1:?usage: install-apt.sh apt-packages.txt}
mapfile -t pins < <(grep -vE '^\s*(#|$)' "$list")
missing=()
for pin in "${pins[@]}"; do
  name=${pin%%=*} want=${pin#*=}
  have=$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null || true)
  [[ $have == "install ok installed $want" ]] || missing+=("$pin")
done
if ((${#missing[@]} == 0)); then
  echo "apt: all ${#pins[@]} pinned packages present"
  exit 0
fi
echo "apt: installing ${missing[*]}"
sudo_cmd=()
((EUID == 0)) || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
# Versions built for bookworm-backports (~bpo12) need that suite as a source:
# Debian's own mirror, signed by the archive key Debian ships.
if printf '%s\n' "${missing[@]}" | grep -q '~bpo12'; then
  bpo=/etc/apt/sources.list.d/rdma-fabric-bookworm-backports.sources
  if [[ ! -e $bpo ]]; then
    printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
      "${sudo_cmd[@]}" tee "$bpo" >/dev/null
  fi
fi
# Packages such as prometheus start their daemon from postinst (init.d) where
# systemd is not running; none of them may run here (they would listen on every
# address): without a policy of the machine's own, deny service starts for the install.
policy=/usr/sbin/policy-rc.d
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\n# tools/deps/install-apt.sh: no service starts during the install\nexit 101\n' |
    "${sudo_cmd[@]}" tee "$policy" >/dev/null
  "${sudo_cmd[@]}" chmod 0755 "$policy"
  trap '"${sudo_cmd[@]}" rm -f "$policy"' EXIT
fi
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
