# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What is wrong with the variables of the mofed, gpudirect and k8s_rdma_stack roles (controller only).

The roles' ``meta/argument_specs.yml`` check types and choices before the
first task; these functions check what types cannot say (values, ranges,
URL schemes, names, paths, combinations) and return one sentence per
problem, each naming the variable and what is allowed. The roles run them
before they read or change anything on the host, through the one
``role_var_errors`` filter (``role_var_errors``, below: the role's name picks
its checker; k8s_rdma_stack's rules are those of the objects it renders, in
``k8s_rdma.check_role_vars``).

Why each rule exists, in short: every value ends up in a file the host
trusts (a deb822 source, a modules-load.d list, apt's auth.conf) or in a
command line, where a newline adds a field or a line (``Trusted: yes``), a
leading ``-`` becomes an option, and a ``/`` leaves the folder meant; a key
fetched over plain http without a pinned fingerprint is whatever the network
path hands over. Messages never show credentials: a URL's user and password
are masked.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

try:  # Python 3
    from urllib.parse import urlsplit, urlunsplit
except ImportError:  # pragma: no cover
    from urlparse import urlsplit, urlunsplit  # type: ignore

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.rdma.fabric.plugins.plugin_utils.k8s_rdma import check_role_vars as k8s_rdma_stack_var_errors
from ansible_collections.rdma.fabric.plugins.plugin_utils.openpgp import OpenPGPError, normalize_fingerprint, parse_keys

# All used with re.fullmatch: "$" would let a trailing newline through.
PACKAGE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+.:~-]*")
PROFILE_RE = re.compile(r"[a-z0-9][a-z0-9+.-]+")
KMOD_RE = re.compile(r"[A-Za-z0-9_-]{1,55}")                 # MODULE_NAME_LEN is 56 with the NUL
RELEASE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+~-]{0,127}")  # kernel release, DOCA version, distro folder
SUITE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+~/-]*|\./")
COMPONENT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+/-]*")
TOKEN_RE = re.compile(r"[^\s\x00-\x1f\x7f]+")                   # no blank, no control character

MOFED_TIMEOUTS = {"mofed_mlnx_ofed_install_timeout": (60, 86400), "mofed_reboot_timeout": (60, 86400)}
GPUDIRECT_ROOTS = {"gpudirect_sysfs_path": "/sys", "gpudirect_procfs_path": "/proc"}


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


# The roles whose variables are checked, and how: each takes (values, check_mode).
ROLE_CHECKS = {
    "gpudirect": gpudirect_var_errors,
    "k8s_rdma_stack": lambda values, check_mode: k8s_rdma_stack_var_errors(values),
    "mofed": lambda values, check_mode: mofed_var_errors(values),
}


class RoleVarsError(ValueError):
    """The check was asked wrongly (not a dict of variables, or a role without checks)."""


def role_var_errors(values, role, check_mode=False):
    """Problems of ``role``'s variables in ``values`` (``{name: value}``; names that are not the role's are ignored).

    ``check_mode``: the play runs with ``--check`` (only gpudirect has a rule that depends on it).
    """
    if not isinstance(role, str) or role not in ROLE_CHECKS:
        raise RoleVarsError("role: %r has no variable checks; allowed: %s" % (role, ", ".join(sorted(ROLE_CHECKS))))
    if not isinstance(values, dict):
        raise RoleVarsError("the input must be a dict of the %s variables, got %s" % (role, type(values).__name__))
    return ROLE_CHECKS[role](dict(values), bool(check_mode))
