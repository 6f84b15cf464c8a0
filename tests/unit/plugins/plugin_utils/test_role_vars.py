# -*- coding: utf-8 -*-
"""Unit tests for plugin_utils/role_vars.py and the role_var_errors filter (mofed, gpudirect, job_env, rdma_metrics,
k8s_rdma_stack).

Each malformed input is one a hostile user or a careless inventory gives: a
newline that would add a deb822 field (``Trusted: yes``, ``Signed-By:``), a
second line in a modules-load.d file, an option where a package name goes, a
key fetched over plain http without a pin. Every one must come back as a
sentence naming the variable, with the role's defaults and the lab's real
settings giving none.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter import role_var_errors as role_var_errors_filter
from ansible_collections.rdma.fabric.plugins.filter.role_var_errors import role_var_errors
from ansible_collections.rdma.fabric.plugins.plugin_utils import k8s_rdma, role_vars
from ansible_collections.rdma.fabric.plugins.plugin_utils.role_vars import has_credentials, masked

ROLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "roles")
KEYS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "openpgp")
PIN = "D5D11BF1DA28B94C29D2E8A8D8BE17AB4A0A3C53"


def defaults(role):
    with open(os.path.join(ROLES, role, "defaults", "main.yml")) as handle:
        return yaml.safe_load(handle)


def mofed(**changes):
    values = defaults("mofed")
    values.update(changes)
    return role_var_errors(values, "mofed")


def a_public_key():
    for name in sorted(os.listdir(KEYS)):
        if name.endswith(".asc"):
            with open(os.path.join(KEYS, name)) as handle:
                text = handle.read()
            if "PUBLIC KEY BLOCK" in text:
                return text
    raise AssertionError("no armoured public key among the OpenPGP fixtures")


def test_defaults_and_real_settings_pass():
    assert mofed() == []
    # the lab's settings (molecule/site/converge.yml), DOCA from NVIDIA, a mirror with a pinned http key
    assert mofed(mofed_flavor="doca") == []
    assert mofed(mofed_repo_url="http://10.0.2.100/debian", mofed_repo_key_url="http://10.0.2.100/keys/lab-mirror.asc",
                 mofed_repo_key_fingerprints=[PIN]) == []
    assert mofed(mofed_flavor="doca", mofed_repo_url="http://10.0.2.100/doca-standin/debian12/x86_64/",
                 mofed_repo_key_url="http://10.0.2.100/doca-standin/GPG-KEY-standin.pub",
                 mofed_repo_key_fingerprints=["d5d1 1bf1 da28 b94c 29d2  e8a8 d8be 17ab 4a0a 3c53"]) == []
    assert mofed(mofed_flavor="mlnx_ofed", mofed_mlnx_ofed_url="http://10.0.2.100/MLNX_OFED_LINUX-0.0-x-debian12-x86_64.tgz",
                 mofed_mlnx_ofed_checksum="sha256:" + "0" * 64, mofed_mlnx_ofed_extra_args=["--with-nvmf", "--kernel-sources", "/usr/src/x"]) == []
    assert mofed(mofed_repo_url="https://user:pw@mirror.example/debian", mofed_repo_keyring="/usr/share/keyrings/debian-archive-keyring.gpg",
                 mofed_repo_suite="bookworm-backports", mofed_repo_components=["main", "contrib"], mofed_proxy="http://proxy:3128",
                 mofed_inbox_packages=["rdma-core", "libibverbs1", "python3-pyverbs:amd64"], mofed_kernel_release="6.1.0-18-amd64",
                 mofed_repo_key="") == []
    assert mofed(mofed_repo_url="file:///srv/mirror/debian", mofed_repo_key=a_public_key()) == []


@pytest.mark.parametrize("changes,expected", [
    # a newline adds deb822 fields: "Trusted: yes" would turn signature checking off
    ({"mofed_repo_url": "http://10.0.2.100/debian\nTrusted: yes", "mofed_repo_keyring": "/k.gpg"},
     "mofed_repo_url: 'http://10.0.2.100/debian\\nTrusted: yes' is not allowed; allowed: empty or a URL starting with http://"),
    ({"mofed_repo_url": "http://m/debian", "mofed_repo_keyring": "/k.gpg", "mofed_repo_suite": "bookworm\nTrusted: yes"},
     "mofed_repo_suite: 'bookworm\\nTrusted: yes' is not allowed"),
    ({"mofed_repo_url": "http://m/debian", "mofed_repo_keyring": "/k.gpg", "mofed_repo_components": ["main\nSigned-By: /tmp/evil.gpg"]},
     "mofed_repo_components[0]: 'main\\nSigned-By: /tmp/evil.gpg' is not allowed"),
    ({"mofed_repo_url": "http://m/debian", "mofed_repo_keyring": "/k.gpg", "mofed_repo_suite": "./", "mofed_repo_components": ["main"]},
     "mofed_repo_components: must be empty when mofed_repo_suite is a flat repository path"),
    ({"mofed_repo_url": "ftp://m/debian", "mofed_repo_keyring": "/k.gpg"}, "mofed_repo_url: 'ftp://m/debian' is not allowed"),
    ({"mofed_repo_url": "http:///debian", "mofed_repo_keyring": "/k.gpg"}, "mofed_repo_url: 'http:///debian' is not allowed"),
    ({"mofed_repo_url": "http://m:notaport/debian", "mofed_repo_keyring": "/k.gpg"}, "mofed_repo_url: 'http://m:notaport/debian' is not allowed"),
    ({"mofed_repo_url": "http://m/deb ian", "mofed_repo_keyring": "/k.gpg"}, "mofed_repo_url: 'http://m/deb ian' is not allowed"),
    ({"mofed_repo_url": "http://m/debian"}, "mofed_repo_url: a repository needs its signing key"),
    # a key over plain http without a pin: trust on first use
    ({"mofed_flavor": "doca", "mofed_repo_key_url": "http://mirror/GPG-KEY.pub"},
     "mofed_repo_key_url: 'http://mirror/GPG-KEY.pub' is plain http and no fingerprint is pinned"),
    ({"mofed_repo_url": "http://m/d", "mofed_repo_key_url": "http://m/k.asc"}, "mofed_repo_key_url: 'http://m/k.asc' is plain http"),
    ({"mofed_repo_url": "http://m/d", "mofed_repo_key_url": "https://m/k.asc", "mofed_repo_keyring": "/k.gpg"},
     "mofed_repo_key_url, mofed_repo_keyring: give at most one of"),
    ({"mofed_repo_url": "http://m/d", "mofed_repo_key": "-----BEGIN PGP PUBLIC KEY BLOCK-----\nnot a key\n"},
     "mofed_repo_key: not an ASCII-armoured OpenPGP public key"),
    ({"mofed_repo_url": "http://m/d", "mofed_repo_keyring": "keyrings/x.gpg"},
     "mofed_repo_keyring: 'keyrings/x.gpg' is not allowed; allowed: an absolute path"),
    ({"mofed_repo_url": "http://m/d", "mofed_repo_keyring": "/etc/apt/k\0.gpg"}, "mofed_repo_keyring: '/etc/apt/k\\x00.gpg' is not allowed"),
    ({"mofed_repo_key_fingerprints": ["D5D11BF1DA28B94C29D2E8A8D8BE17AB4A0A3C5"]}, "mofed_repo_key_fingerprints[0]: "),
    ({"mofed_repo_key_fingerprints": "D5D11BF1DA28B94C29D2E8A8D8BE17AB4A0A3C53"}, "mofed_repo_key_fingerprints: "),
    # credentials: one word each, both or neither, in one place
    ({"mofed_repo_username": "me", "mofed_repo_password": "pw word"}, "mofed_repo_password: holds a blank or control character"),
    ({"mofed_repo_username": "me\nmachine evil", "mofed_repo_password": "pw"}, "mofed_repo_username: holds a blank or control character"),
    ({"mofed_repo_username": "me"}, "mofed_repo_username, mofed_repo_password: give both or neither"),
    ({"mofed_repo_url": "https://a:b@m/d", "mofed_repo_keyring": "/k.gpg", "mofed_repo_username": "a", "mofed_repo_password": "b"},
     "mofed_repo_url, mofed_repo_username: give the credentials in one place"),
    ({"mofed_proxy": "socks5://proxy:1080"}, "mofed_proxy: 'socks5://proxy:1080' is not allowed"),
    # names that end up in files and command lines
    ({"mofed_kernel_modules": ["ib_uverbs", "rdma_ucm\nevil_module"]}, "mofed_kernel_modules[1]: 'rdma_ucm\\nevil_module' is not allowed"),
    ({"mofed_kernel_modules": ["ib_uverbs\n"]}, "mofed_kernel_modules[0]: 'ib_uverbs\\n' is not allowed"),
    ({"mofed_inbox_packages": ["rdma-core", "--allow-unauthenticated"]}, "mofed_inbox_packages[1]: '--allow-unauthenticated' is not allowed"),
    ({"mofed_dkms_required_modules": ["mlnx-ofed-kernel\n"]}, "mofed_dkms_required_modules[0]: "),
    ({"mofed_doca_profile": "doca-ofed\n"}, "mofed_doca_profile: 'doca-ofed\\n' is not allowed"),
    ({"mofed_doca_version": "../../evil"}, "mofed_doca_version: '../../evil' is not allowed"),
    ({"mofed_doca_distro": "debian12/../x"}, "mofed_doca_distro: 'debian12/../x' is not allowed"),
    ({"mofed_kernel_release": "6.1.0/../../etc"}, "mofed_kernel_release: '6.1.0/../../etc' is not allowed"),
    # the MLNX_OFED bundle
    ({"mofed_mlnx_ofed_workdir": "/"}, "mofed_mlnx_ofed_workdir: '/' is not allowed; allowed: an absolute path below /"),
    ({"mofed_mlnx_ofed_workdir": "/var/cache/../../etc"}, "mofed_mlnx_ofed_workdir: '/var/cache/../../etc' is not allowed"),
    ({"mofed_mlnx_ofed_extra_args": ["--with-fw-update"]}, "mofed_mlnx_ofed_extra_args[0]: '--with-fw-update' is not allowed"),
    ({"mofed_mlnx_ofed_extra_args": ["--ok\n--with-fw-update"]}, "mofed_mlnx_ofed_extra_args[0]: '--ok\\n--with-fw-update' is not allowed"),
    ({"mofed_mlnx_ofed_url": "gopher://x/MLNX_OFED_LINUX-1-a-b.tgz"}, "mofed_mlnx_ofed_url: "),
    ({"mofed_mlnx_ofed_install_timeout": 0}, "mofed_mlnx_ofed_install_timeout: 0 is not allowed; allowed: a whole number from 60 to 86400"),
    ({"mofed_reboot_timeout": float("nan")}, "mofed_reboot_timeout: nan is not allowed"),
    ({"mofed_reboot_timeout": -1}, "mofed_reboot_timeout: -1 is not allowed"),
])
def test_malformed_inputs_are_named(changes, expected):
    errors = mofed(**changes)
    assert any(e.startswith(expected) or expected in e for e in errors), errors


def test_opt_out_accepts_an_unpinned_http_key():
    changes = dict(mofed_flavor="doca", mofed_repo_key_url="http://mirror/GPG-KEY.pub")
    assert mofed(mofed_repo_key_trust_unpinned_http=True, **changes) == []
    assert mofed(mofed_repo_key_trust_unpinned_http="true", **changes) == []   # as -e name=true gives it
    assert mofed(mofed_repo_key_fingerprints=[PIN], **changes) == []
    over_https = dict(changes)
    over_https["mofed_repo_key_url"] = "https://mirror/GPG-KEY.pub"
    assert mofed(**over_https) == []


def test_credentials_are_never_shown():
    errors = mofed(mofed_repo_url="http://user:s3cret@m/de bian", mofed_repo_keyring="/k.gpg",
                   mofed_repo_username="u", mofed_repo_password="s3cret pw")
    assert errors and not [e for e in errors if "s3cret" in e]
    assert "'http://***@m/de bian'" in errors[0]
    assert masked("https://u:p@h:8443/x") == "https://***@h:8443/x" and masked("https://h/x") == "https://h/x"
    assert has_credentials("https://u@h/") and not has_credentials("https://h/") and not has_credentials("")


def test_timeouts_given_as_text_from_the_command_line():
    assert mofed(mofed_reboot_timeout="900") == []
    assert mofed(mofed_reboot_timeout="900s") != []


def test_gpudirect_paths_and_check_mode_rule():
    values = defaults("gpudirect")
    assert role_var_errors(values, "gpudirect") == []
    copy = dict(values, gpudirect_sysfs_path="/srv/node17/sys", gpudirect_procfs_path="/srv/node17/proc")
    assert role_var_errors(copy, "gpudirect", check_mode=True) == []
    errors = role_var_errors(copy, "gpudirect")
    assert [e.split(":")[0] for e in errors] == ["gpudirect_procfs_path", "gpudirect_sysfs_path"]
    assert "would hit this host; allowed: /sys, or any other folder in check mode" in errors[1]
    assert role_var_errors(dict(values, gpudirect_sysfs_path="/sys\0"), "gpudirect") == [
        "gpudirect_sysfs_path: '/sys\\x00' is not allowed; allowed: a path without NUL or other control characters",
        "gpudirect_sysfs_path: '/sys\\x00' redirects what the role reads, but the role's changes (modprobe, ACS, the boot "
        "unit and files under /etc) would hit this host; allowed: /sys, or any other folder in check mode (to report on "
        "a copy of a host's tree)"]
    assert role_var_errors(dict(values, gpudirect_sysfs_path="/sys/"), "gpudirect") == []


def test_filter_refuses_what_is_not_a_dict():
    with pytest.raises(AnsibleFilterError, match="rdma.fabric.role_var_errors: the input must be a dict of the mofed variables"):
        role_var_errors(["mofed_flavor"], "mofed")
    with pytest.raises(AnsibleFilterError, match="must be a dict of the gpudirect variables, got str"):
        role_var_errors("x", "gpudirect")


@pytest.mark.parametrize("role", ["soft_roce", "", None, ["mofed"], "Mofed"])
def test_filter_refuses_a_role_without_checks_naming_the_allowed_ones(role):
    with pytest.raises(AnsibleFilterError) as e:
        role_var_errors({}, role)
    assert str(e.value) == ("rdma.fabric.role_var_errors: role: %r has no variable checks; "
                            "allowed: gpudirect, host_tools, job_env, k8s_rdma_stack, mofed, rdma_metrics" % (role,))


def test_filter_registered_and_documented_with_every_role():
    filters = role_var_errors_filter.FilterModule().filters()
    assert filters == {"role_var_errors": role_var_errors}
    doc = yaml.safe_load(role_var_errors_filter.DOCUMENTATION)
    assert doc["name"] == "role_var_errors"
    assert doc["options"]["role"]["choices"] == sorted(role_vars.ROLE_CHECKS)
    # every role with checks runs the filter on its variables, by its own name
    for role in role_vars.ROLE_CHECKS:
        folder = os.path.join(ROLES, role, "tasks")
        text = "".join(open(os.path.join(folder, name)).read() for name in os.listdir(folder) if name.endswith(".yml"))
        assert "rdma.fabric.role_var_errors('%s'" % role in text, role


def test_each_role_gets_its_own_rules():
    """The role name picks the checker: one role's bad value is nothing to another role's check."""
    bad = {"mofed_kernel_modules": ["rdma_ucm\nib_umad"], "gpudirect_sysfs_path": "/srv/sys",
           "k8s_rdma_stack_namespace": "Kube System"}
    mofed_errors = role_var_errors(dict(defaults("mofed"), **bad), "mofed")
    assert [e.split(":")[0] for e in mofed_errors] == ["mofed_kernel_modules[0]"]
    gpudirect_errors = role_var_errors(dict(defaults("gpudirect"), **bad), "gpudirect")
    assert [e.split(":")[0] for e in gpudirect_errors] == ["gpudirect_sysfs_path"]
    assert role_var_errors(dict(defaults("gpudirect"), **bad), "gpudirect", check_mode=True) == []
    k8s_values = dict(defaults("k8s_rdma_stack"), **bad)
    k8s_errors = role_var_errors(k8s_values, "k8s_rdma_stack")
    assert k8s_errors == k8s_rdma.check_role_vars(k8s_values)
    assert [e.split(":")[0] for e in k8s_errors] == ["k8s_rdma_stack_namespace"]
    # check_mode changes nothing for the roles without a check-mode rule
    assert role_var_errors(k8s_values, "k8s_rdma_stack", check_mode=True) == k8s_errors
    assert role_var_errors(dict(defaults("mofed"), **bad), "mofed", check_mode=True) == mofed_errors


def job_env(**changes):
    values = defaults("job_env")
    values.update(changes)
    return role_var_errors(values, "job_env")


def test_job_env_defaults_and_real_settings_pass():
    assert job_env() == []
    assert job_env(job_env_tc=106, job_env_gid_index=3, job_env_devices=["mlx5_*", "rxe0"],
                   job_env_nccl_socket_ifname="=eth1", job_env_ucx_transports=["rc", "sm", "self"],
                   job_env_nccl_extra={"NCCL_DEBUG": "INFO", "NCCL_IB_TC": None, "NCCL_NET_GDR_LEVEL": 2},
                   job_env_ucx_extra={"UCX_LOG_LEVEL": "warn"}, job_env_ucx_conf_path="",
                   job_env_openmpi_mca={"pml": "ucx", "btl": "^openib"}) == []
    assert job_env(job_env_tc="106", job_env_gid_index="3") == []  # -e name=value gives text


@pytest.mark.parametrize("changes, expected", [
    # a key that is no environment name adds a line (LD_PRELOAD) or a command to the files a job sources
    ({"job_env_nccl_extra": {"NCCL_X\nLD_PRELOAD": "/tmp/x.so"}}, "job_env_nccl_extra: the key 'NCCL_X\\nLD_PRELOAD'"),
    ({"job_env_ucx_extra": {"X=$(reboot)": 1}}, "job_env_ucx_extra: the key 'X=$(reboot)'"),
    ({"job_env_nccl_extra": {"nccl_debug": "INFO"}}, "job_env_nccl_extra: the key 'nccl_debug'"),
    ({"job_env_nccl_extra": {"NCCL_DEBUG": "INFO\nLD_PRELOAD=/tmp/x.so"}}, "job_env_nccl_extra[NCCL_DEBUG]: "),
    ({"job_env_ucx_extra": {"UCX_TLS": "rc $(reboot)"}}, "job_env_ucx_extra[UCX_TLS]: 'rc $(reboot)'"),
    ({"job_env_nccl_extra": {"NCCL_IB_TIMEOUT": float("nan")}}, "job_env_nccl_extra[NCCL_IB_TIMEOUT]: nan"),
    # paths: '..' leaves the folder meant; a relative path or a blank is no file the role can own
    ({"job_env_env_file_path": "/etc/../root/.bashrc"}, "job_env_env_file_path: '/etc/../root/.bashrc'"),
    ({"job_env_nccl_conf_path": "etc/nccl.conf"}, "job_env_nccl_conf_path: 'etc/nccl.conf'"),
    ({"job_env_profile_path": "/etc/profile.d/x y.sh"}, "job_env_profile_path: "),
    ({"job_env_profile_path": "/etc/nccl.conf"}, "job_env_profile_path: '/etc/nccl.conf' is also job_env_nccl_conf_path"),
    ({"job_env_tc": 300}, "job_env_tc: 300 is not allowed; allowed: a whole number from 0 to 255"),
    ({"job_env_tc": "106; reboot"}, "job_env_tc: "),
    ({"job_env_gid_index": "three"}, "job_env_gid_index: 'three'"),
    ({"job_env_devices": ["mlx5_0", "rxe9;x"]}, "job_env_devices[1]: 'rxe9;x'"),
    ({"job_env_nccl_socket_ifname": "eth0 eth1"}, "job_env_nccl_socket_ifname: 'eth0 eth1'"),
    ({"job_env_ucx_transports": "rc; reboot"}, "job_env_ucx_transports: transports: unknown UCX transport"),
    ({"job_env_ucx_tcp_netdevs": ["eth0\n"]}, "job_env_ucx_tcp_netdevs: tcp_netdevs: "),
    ({"job_env_openmpi_mca": {"btl tcp": "self"}}, "job_env_openmpi_mca: the key 'btl tcp'"),
    ({"job_env_openmpi_mca": {"pml": "ucx; reboot"}}, "job_env_openmpi_mca[pml]: 'ucx; reboot'"),
])
def test_job_env_malformed_inputs_are_named(changes, expected):
    errors = job_env(**changes)
    assert len(errors) == 1 and errors[0].startswith(expected), errors


def metrics(warnings=None, **changes):
    values = defaults("rdma_metrics")
    values.update(changes)
    return role_vars.role_var_errors(values, "rdma_metrics", warnings=warnings)


def test_rdma_metrics_defaults_and_real_settings_pass():
    warnings = []
    assert metrics(warnings) == [] and warnings == []
    assert metrics(warnings, rdma_metrics_textfile_dir="/var/lib/node_exporter/textfile_collector",
                   rdma_metrics_rules_dir="/etc/prometheus/rules.d", rdma_metrics_interval=20,
                   rdma_metrics_expected_ports=[{"match": "mlx5_*", "rate_gbps": 400}, {"match": "rxe0/1"},
                                                {"match": "mlx5_1/1", "rate_gbps": None}]) == []
    assert warnings == []


@pytest.mark.parametrize("changes, expected", [
    # ReadWritePaths= of the collector's unit: a blank adds a folder, / or /etc opens the system to it
    ({"rdma_metrics_textfile_dir": "/var/lib/prometheus/node-exporter /etc"}, "rdma_metrics_textfile_dir: "),
    ({"rdma_metrics_textfile_dir": "/"}, "rdma_metrics_textfile_dir: '/'"),
    ({"rdma_metrics_textfile_dir": "/etc"}, "rdma_metrics_textfile_dir: '/etc' is not allowed; allowed: a folder below"),
    ({"rdma_metrics_textfile_dir": "/var/lib/../../etc"}, "rdma_metrics_textfile_dir: '/var/lib/../../etc'"),
    ({"rdma_metrics_textfile_dir": "/var/lib/%h"}, "rdma_metrics_textfile_dir: '/var/lib/%h'"),
    ({"rdma_metrics_lossless_saved_dir": "/etc/rdma-fabric/../x"}, "rdma_metrics_lossless_saved_dir: "),
    ({"rdma_metrics_rules_dir": "rules"}, "rdma_metrics_rules_dir: 'rules'"),
    ({"rdma_metrics_lossless_unit": "rdma fabric.service"}, "rdma_metrics_lossless_unit: 'rdma fabric.service'"),
    ({"rdma_metrics_interval": 5}, "rdma_metrics_interval: 5"),
    ({"rdma_metrics_interval": 10 ** 9}, "rdma_metrics_interval: 1000000000"),
    ({"rdma_metrics_expected_ports": "mlx5_0"}, "rdma_metrics_expected_ports: 'mlx5_0'"),
    ({"rdma_metrics_expected_ports": [{"match": "mlx5_0/1"}, {"match": 'mlx5"0}'}]},
     "rdma_metrics_expected_ports[1].match: 'mlx5\"0}'"),
    ({"rdma_metrics_expected_ports": [{"device": "mlx5_0"}]}, "rdma_metrics_expected_ports[0]: {'device': 'mlx5_0'}"),
    ({"rdma_metrics_expected_ports": [{"match": "mlx5_0", "colour": 1}]}, "rdma_metrics_expected_ports[0]: unknown key"),
    ({"rdma_metrics_expected_ports": [{"match": "mlx5_0", "rate_gbps": -100}]}, "rdma_metrics_expected_ports[0].rate_gbps: -100"),
    ({"rdma_metrics_expected_ports": [{"match": "mlx5_0", "rate_gbps": 0}]}, "rdma_metrics_expected_ports[0].rate_gbps: 0"),
    ({"rdma_metrics_expected_ports": [{"match": "mlx5_0", "rate_gbps": float("nan")}]},
     "rdma_metrics_expected_ports[0].rate_gbps: nan"),
    ({"rdma_metrics_expected_ports": [{"match": "mlx5_0", "rate_gbps": float("inf")}]},
     "rdma_metrics_expected_ports[0].rate_gbps: inf"),
    ({"rdma_metrics_expected_ports": [{"match": "mlx5_0", "rate_gbps": True}]},
     "rdma_metrics_expected_ports[0].rate_gbps: True"),
])
def test_rdma_metrics_malformed_inputs_are_named(changes, expected):
    errors = metrics(**changes)
    assert len(errors) == 1 and errors[0].startswith(expected), errors


def test_rdma_metrics_long_interval_is_a_warning_shown_by_the_filter(monkeypatch):
    warnings = []
    assert metrics(warnings, rdma_metrics_interval=900) == []
    assert warnings == ["rdma_metrics_interval: 900 s between two runs: a port that goes down is seen that late, and "
                        "the alert RdmaFabricCollectorStale (last run older than 600 s) fires between runs"]
    shown = []
    monkeypatch.setattr(role_var_errors_filter.Display, "warning", lambda self, msg, *a, **kw: shown.append(msg))
    values = dict(defaults("rdma_metrics"), rdma_metrics_interval=900)
    assert role_var_errors(values, "rdma_metrics") == []
    assert shown == ["rdma.fabric.rdma_metrics: " + warnings[0]]


def test_host_tools_python_goes_into_exec_lines_unquoted():
    assert role_var_errors(defaults("host_tools"), "host_tools") == []
    assert role_var_errors({"host_tools_python": "/opt/python3.11/bin/python3"}, "host_tools") == []
    for bad in ("/usr/bin/python3 -c evil", "python3", "/usr/bin/../../tmp/python3", "/usr/bin/python3\nExecStartPre=x"):
        errors = role_var_errors({"host_tools_python": bad}, "host_tools")
        assert len(errors) == 1 and errors[0].startswith("host_tools_python: %r is not allowed" % bad), errors


@pytest.mark.parametrize("checksum", ["sha256:abc", "md5:" + "0" * 32, "sha256:" + "0" * 64 + "\nx", "0" * 64])
def test_mofed_mlnx_ofed_checksum_form(checksum):
    errors = mofed(mofed_mlnx_ofed_checksum=checksum)
    assert len(errors) == 1 and errors[0].startswith("mofed_mlnx_ofed_checksum: %r is not allowed" % checksum), errors
