# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What is wrong with the variables of the mofed, gpudirect, job_env, rdma_metrics and k8s_rdma_stack roles (controller only).

The roles' ``meta/argument_specs.yml`` check types and choices before the
first task; these functions check what types cannot say (values, ranges,
URL schemes, names, paths, combinations) and return one sentence per
problem, each naming the variable (and the item of a list or mapping) and
what is allowed. The roles run them before they read or change anything on
the host, through the one ``role_var_errors`` filter (``role_var_errors``,
below: the role's name picks its checker; k8s_rdma_stack's rules are those of
the objects it renders, in ``k8s_rdma.check_role_vars``). Settings that are
valid but risky are not errors: the checker says the setting and the risk in
a warning (``warnings``), which the filter shows as Ansible's warnings.

Why each rule exists, in short: every value ends up in a file the host
trusts (a deb822 source, a modules-load.d list, apt's auth.conf) or in a
command line, where a newline adds a field or a line (``Trusted: yes``), a
leading ``-`` becomes an option, and a ``/`` leaves the folder meant; a key
fetched over plain http without a pinned fingerprint is whatever the network
path hands over. Messages never show credentials: a URL's user and password
are masked. A path the role writes or removes is absolute, without ``.``
or ``..`` parts, blanks, quotes or ``%`` (systemd expands it in unit files),
and where it goes into a unit file (``ReadWritePaths=``) it is confined to
the folders such data belongs in.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import os
import re

try:  # Python 3
    from urllib.parse import urlsplit, urlunsplit
except ImportError:  # pragma: no cover
    from urlparse import urlsplit, urlunsplit  # type: ignore

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import DEVICE_GLOB_RE, DEVICE_GLOB_RULE, RdmaFactsError
from ansible_collections.rdma.fabric.plugins.plugin_utils.k8s_rdma import check_role_vars as k8s_rdma_stack_var_errors
from ansible_collections.rdma.fabric.plugins.plugin_utils.nccl import (
    SOCKET_IFNAME_RE,
    SOCKET_IFNAME_RULE,
    check_extra,
    check_gid_index,
)
from ansible_collections.rdma.fabric.plugins.plugin_utils.ucx import check_tcp_netdevs, check_transports
from ansible_collections.rdma.fabric.plugins.plugin_utils.openpgp import OpenPGPError, normalize_fingerprint, parse_keys

# All used with re.fullmatch: "$" would let a trailing newline through.
PACKAGE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+.:~-]*")
PROFILE_RE = re.compile(r"[a-z0-9][a-z0-9+.-]+")
KMOD_RE = re.compile(r"[A-Za-z0-9_-]{1,55}")                 # MODULE_NAME_LEN is 56 with the NUL
RELEASE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+~-]{0,127}")  # kernel release, DOCA version, distro folder
SUITE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+~/-]*|\./")
COMPONENT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+/-]*")
TOKEN_RE = re.compile(r"[^\s\x00-\x1f\x7f]+")                   # no blank, no control character
# A file or folder the role writes, removes, or names in a unit file: absolute, each part of these characters
# (no blank, quote, backslash or '%', which systemd expands in unit files); '.' and '..' parts are refused apart.
SAFE_PATH_RE = re.compile(r"(/[A-Za-z0-9_@+,.:=-]{1,255})+")
SAFE_PATH_RULE = ("an absolute path of letters, digits and _ @ + , . : = - without '.' or '..' parts, at most 4095 "
                  "characters")
# Values that go into an environment file and a shell snippet unquoted.
ENV_VALUE_RE = re.compile(r"[A-Za-z0-9_.,:=^/@+-]*")
ENV_VALUE_RULE = "letters, digits and _ . , : = ^ / @ + - (read alike by a shell and an environment file)"
MCA_NAME_RE = re.compile(r"[a-z][a-z0-9_]*")
SERVICE_RE = re.compile(r"[A-Za-z0-9@_.:-]{1,247}[.]service")

CHECKSUM_RE = re.compile(r"sha256:[0-9a-fA-F]{64}|sha384:[0-9a-fA-F]{96}|sha512:[0-9a-fA-F]{128}")
MOFED_TIMEOUTS = {"mofed_mlnx_ofed_install_timeout": (60, 86400), "mofed_reboot_timeout": (60, 86400)}
GPUDIRECT_ROOTS = {"gpudirect_sysfs_path": "/sys", "gpudirect_procfs_path": "/proc"}
JOB_ENV_PATHS = ("job_env_nccl_conf_path", "job_env_ucx_conf_path", "job_env_env_file_path", "job_env_profile_path")
# The collector's unit makes its textfile folder writable (ReadWritePaths=) to a root process under
# ProtectSystem=strict: only a folder below one of these, where such data lives, is accepted.
METRICS_TEXTFILE_ROOTS = ("/var/lib", "/var/spool", "/var/cache", "/run", "/srv", "/opt")
METRICS_INTERVAL = (10, 86400)
# RdmaFabricCollectorStale fires when the last run is older than this (files/prometheus/rdma_fabric_alerts.rules.yml).
METRICS_STALE_AFTER = 600


def masked(url):
    """``url`` with any user and password replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<not a URL>"
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))


def has_credentials(url):
    """True when ``url`` carries a user or password (``https://user:pass@host/``)."""
    try:
        return bool(url) and "@" in urlsplit(url).netloc
    except ValueError:
        return False


def _text(value):
    return isinstance(value, str)


def _controls(value):
    return any(ord(c) < 32 or ord(c) == 127 for c in value)


class _Checker(object):
    def __init__(self, values):
        self.values = values
        self.errors = []
        self.warnings = []

    def warn(self, name, risk):
        """A valid but risky setting: the variable and the risk."""
        self.warnings.append("%s: %s" % (name, risk))

    def get(self, name, default=None):
        return self.values.get(name, default)

    def bad(self, name, shown, allowed):
        self.errors.append("%s: %s is not allowed; allowed: %s" % (name, shown, allowed))

    def url(self, name, schemes, empty_ok=True):
        """A URL with one of ``schemes``, no blank or control character; the parsed parts, or None."""
        value = self.get(name, "")
        allowed = "%s a URL starting with %s, without blanks or control characters" % (
            "empty or" if empty_ok else "", " or ".join(s + "://" for s in schemes))
        if value == "" and empty_ok:
            return None
        if not _text(value) or not TOKEN_RE.fullmatch(value):
            self.bad(name, "%r" % masked(value) if _text(value) else repr(value), allowed.strip())
            return None
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018 - raises on a port that is not a number
        except ValueError:
            self.bad(name, "%r" % masked(value), allowed.strip())
            return None
        if parts.scheme not in schemes or (parts.scheme != "file" and not parts.hostname):
            self.bad(name, "%r" % masked(value), allowed.strip())
            return None
        return parts

    def pattern(self, name, regex, allowed, empty_ok=False):
        value = self.get(name, "")
        if empty_ok and value == "":
            return
        if not _text(value) or not regex.fullmatch(value) or ".." in value:
            self.bad(name, repr(value), allowed)

    def names(self, name, regex, allowed):
        value = self.get(name, [])
        if not isinstance(value, (list, tuple)):
            self.bad(name, repr(value), "a list of " + allowed)
            return
        for i, item in enumerate(value):
            if not _text(item) or not regex.fullmatch(item) or ".." in item:
                self.bad("%s[%d]" % (name, i), repr(item), allowed)

    def path(self, name, empty_ok=True, absolute=True):
        value = self.get(name, "")
        if empty_ok and value == "":
            return
        if not _text(value) or not value or "\0" in value or _controls(value):
            self.bad(name, repr(value), "a path without NUL or other control characters")
        elif absolute and (not value.startswith("/") or "/../" in value + "/" or os.path.normpath(value) == "/"):
            self.bad(name, repr(value), "an absolute path below / without '..'")

    def safe_path(self, name, empty_ok=True, value=None, below=None):
        """A path the role writes, removes or names in a unit file (:data:`SAFE_PATH_RE`); True when usable.

        ``below``: the folders it must be strictly inside (confinement), named in the message.
        """
        value = self.get(name, "") if value is None else value
        if empty_ok and value == "":
            return True
        allowed = ("empty or " if empty_ok else "") + SAFE_PATH_RULE
        if not _text(value) or len(value) > 4095 or not SAFE_PATH_RE.fullmatch(value) \
                or any(part in (".", "..") for part in value.split("/")):
            self.bad(name, repr(value), allowed)
            return False
        if below and not any(value.startswith(root + "/") for root in below):
            self.bad(name, repr(value), "a folder below %s" % ", ".join(below))
            return False
        return True

    def integer(self, name, low, high):
        """A whole number (or its digits as text, as ``-e name=3600`` gives it) from ``low`` to ``high``."""
        if name not in self.values:
            return
        value = self.values[name]
        number = value if isinstance(value, int) and not isinstance(value, bool) else None
        if _text(value) and re.fullmatch(r"[0-9]{1,9}", value.strip()):
            number = int(value)
        if number is None or not low <= number <= high:
            self.bad(name, repr(value), "a whole number from %d to %d" % (low, high))
            return None
        return number


def mofed_var_errors(values):
    """Problems of the ``mofed_*`` variables in ``values`` (``{name: value}``; other names are ignored)."""
    c = _Checker(values)
    flavor = c.get("mofed_flavor", "inbox")

    # -- the repository -----------------------------------------------------------------------
    repo = c.url("mofed_repo_url", ("http", "https", "file"))
    c.url("mofed_proxy", ("http", "https"))
    c.pattern("mofed_repo_suite", SUITE_RE, "empty (the flavour's default), a suite or codename such as bookworm, "
              "or a flat repository path ending in / such as ./", empty_ok=True)
    c.names("mofed_repo_components", COMPONENT_RE, "component names such as main or contrib")
    suite = c.get("mofed_repo_suite", "")
    if _text(suite) and suite.endswith("/") and c.get("mofed_repo_components"):
        c.errors.append("mofed_repo_components: must be empty when mofed_repo_suite is a flat repository path (%r "
                        "ends in /): apt refuses components there" % suite)
    for name in ("mofed_repo_username", "mofed_repo_password"):
        value = c.get(name, "")
        if value != "" and (not _text(value) or not TOKEN_RE.fullmatch(value)):
            # never echo the value: it is a credential
            c.errors.append("%s: holds a blank or control character (apt's auth.conf cannot carry it); allowed: "
                            "one word of visible characters" % name)
    if (c.get("mofed_repo_username", "") != "") != (c.get("mofed_repo_password", "") != ""):
        c.errors.append("mofed_repo_username, mofed_repo_password: give both or neither")
    if repo is not None and has_credentials(c.get("mofed_repo_url")) and c.get("mofed_repo_username", ""):
        c.errors.append("mofed_repo_url, mofed_repo_username: give the credentials in one place, not both")

    # -- the signing key ----------------------------------------------------------------------
    key_url = c.url("mofed_repo_key_url", ("https", "http", "file"))
    c.path("mofed_repo_keyring")
    key_text = c.get("mofed_repo_key", "")
    if key_text != "":
        try:
            if not _text(key_text) or "-----BEGIN PGP PUBLIC KEY BLOCK-----" not in key_text:
                raise OpenPGPError("no ASCII-armoured PUBLIC KEY BLOCK")
            parse_keys(key_text)
        except OpenPGPError as exc:
            c.errors.append("mofed_repo_key: not an ASCII-armoured OpenPGP public key (%s); allowed: the text of "
                            "one, as gpg --armor --export writes it" % exc)
    pins = c.get("mofed_repo_key_fingerprints", [])
    if not isinstance(pins, (list, tuple)):
        c.bad("mofed_repo_key_fingerprints", repr(pins), "a list of 40- or 64-digit hex fingerprints")
        pins = []
    for i, pin in enumerate(pins):
        try:
            normalize_fingerprint(pin)
        except OpenPGPError:
            c.bad("mofed_repo_key_fingerprints[%d]" % i, repr(pin), "a 40- or 64-digit hex fingerprint (spaces allowed)")
    given = [n for n in ("mofed_repo_key_url", "mofed_repo_key", "mofed_repo_keyring") if c.get(n, "") != ""]
    if len(given) > 1:
        c.errors.append("%s: give at most one of mofed_repo_key_url, mofed_repo_key, mofed_repo_keyring"
                        % ", ".join(given))
    repo_enabled = flavor == "doca" or (flavor == "inbox" and c.get("mofed_repo_url", "") != "")
    if flavor == "inbox" and repo_enabled and not given:
        c.errors.append("mofed_repo_url: a repository needs its signing key in one of mofed_repo_key_url, "
                        "mofed_repo_key, mofed_repo_keyring (apt and dnf only trust signed repositories)")
    if (repo_enabled and key_url is not None and key_url.scheme == "http" and not pins
            and not boolean(c.get("mofed_repo_key_trust_unpinned_http", False), strict=False)):
        c.errors.append("mofed_repo_key_url: %r is plain http and no fingerprint is pinned, so whoever is on the network "
                        "path chooses the key the host will trust; allowed: an https:// or file:// URL, or pin the key "
                        "with mofed_repo_key_fingerprints, or accept the risk with mofed_repo_key_trust_unpinned_http: true"
                        % masked(c.get("mofed_repo_key_url")))

    # -- packages, modules, kernel --------------------------------------------------------------
    c.names("mofed_inbox_packages", PACKAGE_RE, "package names (letters, digits and _ + . : ~ -, not starting with -)")
    c.names("mofed_dkms_required_modules", PACKAGE_RE, "DKMS module names such as mlnx-ofed-kernel")
    c.names("mofed_kernel_modules", KMOD_RE, "kernel module names (letters, digits, _ and -, at most 55)")
    c.pattern("mofed_kernel_release", RELEASE_RE, "empty (the running kernel) or a kernel release such as "
              "6.1.0-18-amd64", empty_ok=True)
    c.pattern("mofed_doca_version", RELEASE_RE, "a DOCA release folder such as 3.2.1 or latest")
    c.pattern("mofed_doca_distro", RELEASE_RE, "empty (derived from the facts) or a folder such as ubuntu24.04, "
              "debian12, rhel9.4", empty_ok=True)
    c.pattern("mofed_doca_profile", PROFILE_RE, "a package name such as doca-ofed, doca-roce, doca-all")

    # -- MLNX_OFED bundle -------------------------------------------------------------------------
    c.url("mofed_mlnx_ofed_url", ("https", "http", "ftp", "file"))
    checksum = c.get("mofed_mlnx_ofed_checksum", "")
    if checksum != "" and (not _text(checksum) or not CHECKSUM_RE.fullmatch(checksum)):
        c.bad("mofed_mlnx_ofed_checksum", repr(checksum), "empty, or sha256:<64 hex digits>, sha384:<96> or "
              "sha512:<128>")
    c.path("mofed_mlnx_ofed_src", absolute=False)
    c.path("mofed_mlnx_ofed_workdir", empty_ok=False)
    extra = c.get("mofed_mlnx_ofed_extra_args", [])
    if not isinstance(extra, (list, tuple)):
        c.bad("mofed_mlnx_ofed_extra_args", repr(extra), "a list of installer arguments")
    else:
        for i, arg in enumerate(extra):
            if not _text(arg) or not arg or _controls(arg):
                c.bad("mofed_mlnx_ofed_extra_args[%d]" % i, repr(arg), "a non-empty argument without control characters")
            elif arg.split("=", 1)[0] == "--with-fw-update":
                c.bad("mofed_mlnx_ofed_extra_args[%d]" % i, repr(arg),
                      "installer options other than --with-fw-update (the role never flashes firmware)")
    for name, (low, high) in sorted(MOFED_TIMEOUTS.items()):
        c.integer(name, low, high)
    if c.get("mofed_state", "present") == "absent" and flavor == "mlnx_ofed":
        c.errors.append("mofed_state: 'absent' is not allowed with mofed_flavor: mlnx_ofed (the bundle's installer, not "
                        "the role, chose its packages: run its ofed_uninstall.sh from the console); allowed: absent "
                        "with the inbox or doca flavour, or present")
    return c.errors


def gpudirect_var_errors(values, check_mode=False):
    """Problems of the ``gpudirect_*`` variables; ``check_mode``: the play runs with ``--check``."""
    c = _Checker(values)
    for name, host in sorted(GPUDIRECT_ROOTS.items()):
        c.path(name, empty_ok=False)
        value = c.get(name, host)
        if not check_mode and _text(value) and os.path.normpath(value) != host:
            c.errors.append("%s: %r redirects what the role reads, but the role's changes (modprobe, ACS, "
                            "the boot unit and files under /etc) would hit this host; allowed: %s, or any other "
                            "folder in check mode (to report on a copy of a host's tree)" % (name, value, host))
    return c.errors


def job_env_var_errors(values):
    """Problems of the ``job_env_*`` variables (the files' paths, ToS, GID index, device globs, the settings)."""
    c = _Checker(values)
    paths = []
    for name in JOB_ENV_PATHS:
        if c.safe_path(name) and c.get(name, ""):
            paths.append((name, c.get(name)))
    seen = {}
    for name, path in paths:
        if path in seen:
            c.errors.append("%s: %r is also %s; allowed: a file used by one setting only" % (name, path, seen[path]))
        seen.setdefault(path, name)
    tc = c.get("job_env_tc", "auto")
    if tc != "auto":
        c.integer("job_env_tc", 0, 255)
    try:
        check_gid_index(c.get("job_env_gid_index", "auto"))
    except RdmaFactsError:
        c.bad("job_env_gid_index", repr(c.get("job_env_gid_index")), "auto, omit, or a GID index (a whole number >= 0)")
    c.names("job_env_devices", DEVICE_GLOB_RE, DEVICE_GLOB_RULE)
    for name, check in (("job_env_ucx_transports", check_transports), ("job_env_ucx_tcp_netdevs", check_tcp_netdevs)):
        try:
            check(c.get(name))
        except RdmaFactsError as e:
            c.errors.append("%s: %s" % (name, e))
    ifname = c.get("job_env_nccl_socket_ifname", "")
    if ifname != "" and (not _text(ifname) or not SOCKET_IFNAME_RE.fullmatch(ifname)):
        c.bad("job_env_nccl_socket_ifname", repr(ifname), "empty, or " + SOCKET_IFNAME_RULE)
    mca = c.get("job_env_openmpi_mca", {})
    if not isinstance(mca, dict):
        c.bad("job_env_openmpi_mca", repr(mca), "a dict of Open MPI parameter names to values")
        mca = {}
    for key in sorted(mca, key=str):
        if not _text(key) or not MCA_NAME_RE.fullmatch(key):
            c.errors.append("job_env_openmpi_mca: the key %r is not allowed; allowed: an Open MPI parameter name such "
                            "as pml or btl_tcp_if_include (a-z, 0-9, _)" % (key,))
        elif isinstance(mca[key], bool) or not isinstance(mca[key], (str, int)) or not ENV_VALUE_RE.fullmatch(str(mca[key])):
            c.bad("job_env_openmpi_mca[%s]" % key, repr(mca[key]), "text or a whole number of " + ENV_VALUE_RULE)
    for name in ("job_env_nccl_extra", "job_env_ucx_extra"):
        extra = c.get(name, {})
        problems = check_extra(extra, name)
        c.errors.extend(problems)
        if problems or not isinstance(extra, dict):
            continue
        for key in sorted(extra):
            value = extra[key]
            text = ("1" if value else "0") if isinstance(value, bool) else "" if value is None else str(value)
            if not ENV_VALUE_RE.fullmatch(text):
                c.bad("%s[%s]" % (name, key), repr(value), ENV_VALUE_RULE)
    return c.errors


def host_tools_var_errors(values):
    """Problems of ``host_tools_python``: it goes into the wrapper script and the units' ExecStart= lines unquoted."""
    c = _Checker(values)
    c.safe_path("host_tools_python", empty_ok=False)
    return c.errors


def rdma_metrics_var_errors(values, warnings=None):
    """Problems of the ``rdma_metrics_*`` variables; a risky interval adds a sentence to ``warnings``."""
    c = _Checker(values)
    c.safe_path("rdma_metrics_textfile_dir", empty_ok=False, below=METRICS_TEXTFILE_ROOTS)
    c.safe_path("rdma_metrics_lossless_saved_dir", empty_ok=False)
    if c.get("rdma_metrics_rules_dir") is not None:
        c.safe_path("rdma_metrics_rules_dir", empty_ok=False)
    unit = c.get("rdma_metrics_lossless_unit", "rdma-fabric-lossless.service")
    if not _text(unit) or not SERVICE_RE.fullmatch(unit):
        c.bad("rdma_metrics_lossless_unit", repr(unit), "a systemd service name such as rdma-fabric-lossless.service "
              "(letters, digits and @ _ . : -, ending in .service)")
    interval = c.integer("rdma_metrics_interval", *METRICS_INTERVAL)
    if interval is not None and interval > METRICS_STALE_AFTER // 2:
        c.warn("rdma_metrics_interval", "%d s between two runs: a port that goes down is seen that late, and the alert "
               "RdmaFabricCollectorStale (last run older than %d s) fires between runs" % (interval, METRICS_STALE_AFTER))
    expected = c.get("rdma_metrics_expected_ports", "auto")
    if expected != "auto" and not isinstance(expected, list):
        c.bad("rdma_metrics_expected_ports", repr(expected), "auto, or a list of {match: DEVICE-GLOB[/PORT], rate_gbps}")
    for i, entry in enumerate(expected if isinstance(expected, list) else []):
        where = "rdma_metrics_expected_ports[%d]" % i
        if not isinstance(entry, dict) or "match" not in entry:
            c.bad(where, repr(entry), "a mapping {match: DEVICE-GLOB[/PORT], rate_gbps: number or null}")
            continue
        unknown = sorted(str(k) for k in entry if k not in ("match", "rate_gbps"))
        if unknown:
            c.errors.append("%s: unknown key(s) %s; allowed: match, rate_gbps" % (where, ", ".join(unknown)))
        match = entry["match"]
        device, _sep, port = match.partition("/") if _text(match) else ("", "", "")
        if not DEVICE_GLOB_RE.fullmatch(device) or (_sep and not re.fullmatch(r"[1-9][0-9]{0,2}", port)):
            c.bad(where + ".match", repr(match), DEVICE_GLOB_RULE + ", optionally with /PORT (a port number)")
        rate = entry.get("rate_gbps")
        if rate is not None and (isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate)
                                 or not 0 < rate <= 100000):
            c.bad(where + ".rate_gbps", repr(rate), "null, or the lowest rate in Gb/s (a number above 0, at most 100000)")
    if warnings is not None:
        warnings.extend(c.warnings)
    return c.errors


# The roles whose variables are checked, and how: each takes (values, check_mode, warnings list).
ROLE_CHECKS = {
    "gpudirect": lambda values, check_mode, warnings: gpudirect_var_errors(values, check_mode),
    "host_tools": lambda values, check_mode, warnings: host_tools_var_errors(values),
    "job_env": lambda values, check_mode, warnings: job_env_var_errors(values),
    "k8s_rdma_stack": lambda values, check_mode, warnings: k8s_rdma_stack_var_errors(values),
    "mofed": lambda values, check_mode, warnings: mofed_var_errors(values),
    "rdma_metrics": lambda values, check_mode, warnings: rdma_metrics_var_errors(values, warnings),
}


class RoleVarsError(ValueError):
    """The check was asked wrongly (not a dict of variables, or a role without checks)."""


def role_var_errors(values, role, check_mode=False, warnings=None):
    """Problems of ``role``'s variables in ``values`` (``{name: value}``; names that are not the role's are ignored).

    ``check_mode``: the play runs with ``--check`` (only gpudirect has a rule that depends on it). ``warnings``: a
    list that gets one sentence per valid but risky setting (the variable and the risk).
    """
    if not isinstance(role, str) or role not in ROLE_CHECKS:
        raise RoleVarsError("role: %r has no variable checks; allowed: %s" % (role, ", ".join(sorted(ROLE_CHECKS))))
    if not isinstance(values, dict):
        raise RoleVarsError("the input must be a dict of the %s variables, got %s" % (role, type(values).__name__))
    return ROLE_CHECKS[role](dict(values), bool(check_mode), warnings)
