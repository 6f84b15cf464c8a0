# rdma.fabric - developer entry points.
#
#   make demo   set up this Debian 12 machine, boot the Soft-RoCE VM lab,
#               run the main playbook, print where the report is, stop the lab
#   make test   lint, ansible-test sanity, unit tests, the collection build, promtool rule tests, the
#               Molecule scenarios of molecule/ci-scenarios.txt
#   make test-all  the same checks and every Molecule scenario (molecule/*/)
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

.PHONY: help deps venv collection-link lint sanity unit promtool-test host-checks molecule molecule-one-vm \
        molecule-two-vm molecule-all test test-all demo lab-image lab-up lab-down lab-status build clean

help:
	@sed -n '1,10p' Makefile

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

# make test runs the scenarios of molecule/ci-scenarios.txt; molecule-all runs every one.
molecule: venv collection-link lab-image
	tools/lab/run-molecule-all --ci

molecule-one-vm molecule-two-vm: molecule-%: venv collection-link lab-image
	tools/lab/run-molecule-all --ci $*

molecule-all: venv collection-link lab-image
	tools/lab/run-molecule-all

# make test in three steps, sized for a 2-core machine where the lab runs
# under TCG (a scenario's work is its VMs' CPU):
#   1. the venv and the lab image, side by side;
#   2. side by side: the one-VM scenarios of molecule/ci-scenarios.txt, which
#      leave a core idle, and the host-side checks, one after the other;
#   3. the two-VM scenarios, alone: two VMs keep both cores busy.
test:
	$(MAKE) --no-print-directory -j2 venv collection-link lab-image
	$(MAKE) --no-print-directory -j2 --output-sync=target molecule-one-vm host-checks
	$(MAKE) --no-print-directory molecule-two-vm

# Everything: the host-side checks beside the one-VM scenarios, then every
# other scenario (those make test leaves out for CI's time budget included).
test-all:
	$(MAKE) --no-print-directory -j2 venv collection-link lab-image
	$(MAKE) --no-print-directory -j2 --output-sync=target molecule-all-one-vm host-checks
	$(MAKE) --no-print-directory molecule-all-two-vm

molecule-all-one-vm molecule-all-two-vm: molecule-all-%: venv collection-link lab-image
	tools/lab/run-molecule-all --all $*

# The Prometheus alert and recording rules of roles/rdma_metrics: promtool
# (Debian's prometheus package, tools/deps/apt-packages.txt) checks them and
# runs their unit tests (rdma_fabric.test.yml).
PROM_RULES := roles/rdma_metrics/files/prometheus
promtool-test: deps
	promtool check rules $(PROM_RULES)/rdma_fabric_recording.rules.yml $(PROM_RULES)/rdma_fabric_alerts.rules.yml
	cd $(PROM_RULES) && promtool test rules rdma_fabric.test.yml

host-checks:
	$(MAKE) --no-print-directory lint sanity unit build promtool-test

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

# The collection tarball; fails if lab images, venvs or caches slipped in.
build: venv
	$(BIN)/ansible-galaxy collection build --force --output-path build/
	! tar tzf build/rdma-fabric-$$(awk '/^version:/{print $$2}' galaxy.yml).tar.gz \
	  | grep -E '^(\.venv|\.cache|\.lab|build|reports)/|\.(qcow2|raw|img)$$'

clean: lab-down
	rm -rf build .cache/stamps
