# rdma.fabric - developer entry points.
#
#   make demo   set up this Debian 12 machine, boot the Soft-RoCE VM lab,
#               run the main playbook, print where the report is, stop the lab
#   make test   lint, ansible-test sanity, the tarball (units and sanity from the
#               installed copy, ansible-core 2.17/2.18/2.19), EE, docs, changelog,
#               promtool rule tests, the Molecule scenarios of
#               molecule/ci-scenarios.txt
#   make test-all  the same checks and every Molecule scenario (molecule/*/), and what
#               is too heavy for CI's budget (ee_slices: the image built and run)
#   make ee-image  build the execution environment image (podman, ansible-builder)
#   make ee-lab    site.yml in that image on the lab, as AWX jobs: sliced vs unsliced
#
# Everything below installs what it needs (pinned): system packages via apt
# (tools/deps/apt-packages.txt), Python packages into .venv
# (tools/deps/requirements.txt + constraints.txt).

SHELL      := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
ROOT       := $(CURDIR)
VENV       := $(ROOT)/.venv
BIN        := $(VENV)/bin
STAMPS     := $(ROOT)/.cache/stamps
# ansible-test needs the collection under .../ansible_collections/rdma/fabric
COLL_ROOT  := $(ROOT)/build/collections
COLL_DIR   := $(COLL_ROOT)/ansible_collections/rdma/fabric
export ANSIBLE_COLLECTIONS_PATH := $(COLL_ROOT)
export ANSIBLE_CONFIG := $(ROOT)/ansible.cfg
export PATH := $(BIN):$(PATH)
LAB        := $(ROOT)/tools/lab/lab

.PHONY: help deps venv collection-link lint sanity unit host-checks molecule \
        molecule-all test test-all demo lab-image lab-up lab-down lab-status build clean \
        pack-venvs tools-venv core-venvs tarball-test matrix ee-test docs-test docs-run changelog-test host-python \
        bindep release promtool-test ee-image ee-lab

help:
	@sed -n '1,12p' Makefile

# --- installation ---------------------------------------------------------
deps: $(STAMPS)/apt
$(STAMPS)/apt: tools/deps/apt-packages.txt tools/deps/install-apt.sh
	tools/deps/install-apt.sh tools/deps/apt-packages.txt
	@mkdir -p $(STAMPS) && touch $@

venv: $(STAMPS)/venv
$(STAMPS)/venv: tools/deps/requirements.txt tools/deps/constraints.txt $(STAMPS)/apt
	test -x $(BIN)/python || /usr/bin/python3 -m venv $(VENV)
	$(BIN)/pip install --disable-pip-version-check -q -r tools/deps/requirements.txt -c tools/deps/constraints.txt
	@mkdir -p $(STAMPS) && touch $@

collection-link: $(COLL_DIR)
$(COLL_DIR):
	mkdir -p $(dir $(COLL_DIR))
	ln -sfn $(ROOT) $(COLL_DIR)

# --- checks ---------------------------------------------------------------
lint: venv collection-link
	cd $(COLL_DIR) && $(BIN)/ansible-lint --profile production

# ansible-test resolves symlinks in its working directory, so sanity runs on a
# copy of the tracked (and new, not ignored) files, outside this git work tree
# (whose .gitignore would hide it), under a real
# ansible_collections/rdma/fabric folder.
SANITY_ROOT := $(or $(TMPDIR),/tmp)/rdma-fabric-sanity-$(shell echo $(ROOT) | md5sum | cut -c1-8)
SANITY_DIR  := $(SANITY_ROOT)/ansible_collections/rdma/fabric
sanity: venv
	rm -rf $(SANITY_ROOT) && mkdir -p $(SANITY_DIR)
	git ls-files -co --exclude-standard -z | rsync -a --from0 --files-from=- ./ $(SANITY_DIR)/
	install -D -m 0644 tools/deps/ansible-test-get-pip.py $(HOME)/.ansible/test/cache/get_pip_24_2.py
	cd $(SANITY_DIR) && $(BIN)/ansible-test sanity --local --python 3.11 --color no

unit: venv collection-link
	cd $(COLL_DIR) && PYTHONPATH=$(COLL_ROOT) $(BIN)/pytest -q -p no:cacheprovider --ignore=tests/unit/fixtures tests/unit

# The lab scenarios. make test runs molecule/ci-scenarios.txt (every
# scenario but ee_slices), test-all every scenario under molecule/ (and what is too heavy for
# CI's budget). The runner keeps up to LAB_VMS lab VMs running at once
# (MOLECULE_VMS; tools/lab/run-molecule-all: scenarios side by side, in list
# order, as their VMs fit).
LAB_VMS ?= 3
molecule: venv collection-link lab-image
	MOLECULE_VMS=$(LAB_VMS) tools/lab/run-molecule-all --ci

molecule-all: venv collection-link lab-image
	MOLECULE_VMS=$(LAB_VMS) tools/lab/run-molecule-all --all

# make test in two steps, sized for a 2-core machine where the lab runs under
# TCG (a scenario's work is its VMs' CPU):
#   1. the venv and the lab image, side by side;
#   2. side by side: the host-side checks (one after the other, about one
#      core) and the lab scenarios (up to LAB_VMS VMs at once: a VM keeps a
#      core busy only while it works, and leaves it idle while it reboots,
#      waits or the controller works, so three VMs and the checks keep two
#      cores busy). benchmarks/lab_budget.py prints each scenario's steps.
test:
	$(MAKE) --no-print-directory -j2 venv collection-link lab-image pack-venvs
	$(MAKE) --no-print-directory -j2 --output-sync=target molecule host-checks

# Everything: the host-side checks beside every Molecule scenario.
test-all:
	$(MAKE) --no-print-directory -j2 venv collection-link lab-image pack-venvs
	$(MAKE) --no-print-directory -j2 --output-sync=target molecule-all host-checks

# The Prometheus alert and recording rules of roles/rdma_metrics: promtool
# (Debian's prometheus package, tools/deps/apt-packages.txt) checks them and
# runs their unit tests (rdma_fabric.test.yml).
PROM_RULES := roles/rdma_metrics/files/prometheus
promtool-test: deps
	promtool check rules $(PROM_RULES)/rdma_fabric_recording.rules.yml $(PROM_RULES)/rdma_fabric_alerts.rules.yml
	cd $(PROM_RULES) && promtool test rules rdma_fabric.test.yml

# unit: the unit tests run from the installed tarball (tarball-test), not a
# second time from the work tree (`make unit` stays for development).
host-checks:
	$(MAKE) --no-print-directory lint sanity changelog-test host-python tarball-test ee-test docs-test docs-run matrix \
	  promtool-test

# --- the lab --------------------------------------------------------------
# (MAKEFLAGS cleared: the dcbsim module's kernel build is a make of its own.)
lab-image: deps
	MAKEFLAGS= $(LAB) image

lab-up: lab-image
	$(LAB) up

lab-down:
	$(LAB) down

lab-status:
	$(LAB) status

# --- the demo -------------------------------------------------------------
demo: venv collection-link lab-image
	tools/lab/demo

# The collection tarball, built from a copy of the tracked (and new, not
# ignored) files, so nothing local (caches, rebuilt fixture folders, reports)
# can slip in; the extra docs (docs/*.md as RST) are generated into that copy.
# tests/packaging/tarball_contents.py prints it by top folder with sizes and
# fails on what must not ship or on what is missing. Two builds may run at
# once in one work tree (make test-all: the host checks' and molecule/ee_slices'
# make ee-image): each copies into a folder of its own and checks its tarball
# there, then renames it over $(TARBALL) (same file system: a reader sees the
# old tarball or the new one, never a part).
COLL_VERSION := $(shell awk '/^version:/{print $$2}' galaxy.yml)
TARBALL     := $(ROOT)/build/rdma-fabric-$(COLL_VERSION).tar.gz
build: venv
	@mkdir -p build
	set -e; \
	  src=$$(mktemp -d "$(or $(TMPDIR),/tmp)/rdma-fabric-build.XXXXXX"); out=$$(mktemp -d "$(ROOT)/build/.tarball.XXXXXX"); \
	  trap 'rm -rf "$$src" "$$out"' EXIT; \
	  mkdir -p "$$src/ansible_collections/rdma/fabric"; \
	  git ls-files -co --exclude-standard -z | rsync -a --ignore-missing-args --from0 --files-from=- ./ "$$src/ansible_collections/rdma/fabric/"; \
	  tools/docs/extra-docs "$$src/ansible_collections/rdma/fabric"; \
	  (cd "$$src/ansible_collections/rdma/fabric" && $(BIN)/ansible-galaxy collection build --output-path "$$out" >/dev/null); \
	  $(BIN)/python tests/packaging/tarball_contents.py "$$out/$(notdir $(TARBALL))"; \
	  mv -f "$$out/$(notdir $(TARBALL))" $(TARBALL)

# --- packaging checks (issue 21) --------------------------------------------
# Pinned virtualenvs beside .venv (ansible 12 / ansible-core 2.19):
#   .cache/venv-tools      antsibull-docs, antsibull-changelog, ansible-builder,
#                          sphinx, vermin (tools/deps/tools-requirements.txt)
#   .cache/venv-core2.17   ansible 10 / ansible-core 2.17 (tools/deps/ansible-core-2.17.txt)
#   .cache/venv-core2.18   ansible 11 / ansible-core 2.18 (tools/deps/ansible-core-2.18.txt)
# Each file pins the full set (pip freeze); the controller Python is 3.11 for
# all three cores (2.17: 3.10-3.12; 2.18 and 2.19: 3.11-3.13).
TOOLS_VENV    := $(ROOT)/.cache/venv-tools
TOOLS         := $(TOOLS_VENV)/bin
CORE_VERSIONS := 2.17 2.18
pack-venvs: tools-venv core-venvs
tools-venv: $(STAMPS)/venv-tools
core-venvs: $(CORE_VERSIONS:%=$(STAMPS)/venv-core%)
$(STAMPS)/venv-tools: tools/deps/tools-requirements.txt $(STAMPS)/apt
	rm -rf $(TOOLS_VENV) && /usr/bin/python3 -m venv $(TOOLS_VENV)
	$(TOOLS)/pip install --disable-pip-version-check -q -r $<
	@mkdir -p $(STAMPS) && touch $@
$(STAMPS)/venv-core%: tools/deps/ansible-core-%.txt $(STAMPS)/apt
	rm -rf $(ROOT)/.cache/venv-core$* && /usr/bin/python3 -m venv $(ROOT)/.cache/venv-core$*
	$(ROOT)/.cache/venv-core$*/bin/pip install --disable-pip-version-check -q -r $<
	@mkdir -p $(STAMPS) && touch $@

# The built tarball installed with ansible-galaxy into a fresh folder; the
# shipped unit tests and a sanity selection run from there (ansible-core 2.19).
tarball-test: build
	tests/packaging/tarball $(VENV) $(TARBALL)

# ansible-core 2.17 and 2.18: the unit tests and the version-dependent sanity
# tests from the installed tarball (tests/packaging/matrix says which).
matrix: build core-venvs
	tests/packaging/matrix $(TARBALL) $(CORE_VERSIONS:%=$(ROOT)/.cache/venv-core%)

# Execution environment: bindep.txt current, `ansible-builder create` offline
# and its context, the merged requirements (no container engine here).
ee-test: build tools-venv
	tests/packaging/ee $(TOOLS_VENV) $(TARBALL)

bindep:
	$(BIN)/python tests/packaging/bindep.py .

# The execution environment image, built for real (podman, ansible-builder):
# a local Debian 12 base (mmdebstrap + podman import; no registry is
# reachable), Python packages from PyPI pinned by tools/deps/ee-constraints.txt,
# the collection from the tarball above. Prints its size and build times
# (build/ee/image.json). tools/ee/build-image says how.
ee-image: build tools-venv
	$(TOOLS)/python tools/ee/build-image $(TARBALL)

# site.yml in that image on the lab, as AWX jobs (molecule/ee_slices, also in
# make test-all): two slices and the fleet job, then the unsliced run; the
# reports compared. The image is built first, before the VMs boot.
ee-lab: venv collection-link lab-image ee-image
	MOLECULE_SCENARIOS=ee_slices tools/lab/run-molecule-all

# antsibull-docs lint-collection-docs and the docsite (RST + Sphinx HTML)
# from the installed tarball.
docs-test: build tools-venv
	tests/packaging/docs $(TOOLS_VENV) $(TARBALL)

# The docs' commands (tests/docs, as root: Linux namespaces): every command
# block of README.md, docs/*.md, roles/*/README.md and inventories/*/README.md
# run from the installed tarball, or marked `# not run by the tests: <why>`;
# the Markdown whole (fences, no sentence cut). `python3 tests/docs/docblocks.py`
# lists the blocks.
docs-run: build
	tests/docs/run $(VENV) $(TARBALL)

# Fragments and changelog.yaml lint; CHANGELOG.rst is what changelog.yaml gives
# and is valid RST.
changelog-test: tools-venv
	tests/packaging/changelog $(TOOLS_VENV)

# The host-side code (modules, module_utils, the boot-time re-apply tool) needs
# no newer Python than the managed-host minimum that README and
# tests/config.yml state (vermin, a static check: no older Python here).
host-python: tools-venv
	tests/packaging/host-python $(TOOLS_VENV)

# make release VERSION=x.y.z: galaxy.yml's version, changelog.yaml's release
# from the fragments, CHANGELOG.rst, all linted. Commit the result.
release: tools-venv
	@[[ "$(VERSION)" =~ ^[0-9]+\.[0-9]+\.[0-9]+$$ ]] || { echo "usage: make release VERSION=x.y.z" >&2; exit 2; }
	sed -i 's/^version: .*/version: $(VERSION)/' galaxy.yml
	cd $(ROOT) && $(TOOLS)/antsibull-changelog release --version $(VERSION)
	tests/packaging/changelog $(TOOLS_VENV)

clean: lab-down
	rm -rf build .cache/stamps .cache/venv-tools .cache/venv-core*
