# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Module options that take a list of mappings, checked so that every refusal names the option.

Declared ``type='list', elements='dict'``, such an option given as text (``links: rxe9``,
``ets: "50,0,0,50,0,0,0,0"``, ``vfs: "0"``) is refused by Ansible's own check with
"dictionary requested, could not parse JSON or key=value", which names no option and shows no
accepted form; text such as ``name=rxe9`` is even taken as a mapping. The modules declare these
options ``type='raw'`` (their DOCUMENTATION says so and keeps the suboptions) and check them here,
before anything else runs: what is not a list, or an entry that is not a mapping, is refused
naming the option, the value and the accepted form; the rest is checked by Ansible's own argument
spec validator with the option's suboptions (coercions, defaults, choices, required keys), as
``type='list', elements='dict'`` did. Host side: AnsiballZ ships this file with the modules.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ListOptionError(ValueError):
    """A list-of-mappings option in another form; ``param`` is the option's name (as given)."""

    def __init__(self, param, message):
        self.param = param
        super(ListOptionError, self).__init__(message)


def _described(value):
    if isinstance(value, str):
        return "the text %r" % (value,)
    return "%s %r" % (type(value).__name__, value)


def list_of_dicts(param, value, options, example):
    """``value`` of the option ``param`` checked as a list of mappings with the suboptions ``options``.

    ``example``: the accepted form as the module's users write it (shown in each refusal).
    Returns None for None, else the list as Ansible's ``type='list', elements='dict'`` with
    ``options`` makes it (suboptions left out are None or their default); raises
    :class:`ListOptionError`, whose message starts with ``param``.
    """
    if value is None:
        return None
    form = "a list of mappings (keys: %s), e.g. %s" % (", ".join(options), example)
    if not isinstance(value, (list, tuple)):
        raise ListOptionError(param, "%s: got %s; allowed: %s" % (param, _described(value), form))
    for i, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise ListOptionError(param, "%s[%d]: got %s, not a mapping; allowed: %s"
                                  % (param, i, _described(entry), form))
    # Imported here: module_utils is also the host runtime (rdma.fabric.host_tools), which has no
    # ansible-core; only modules (run with AnsiballZ's ansible) call this.
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

    spec = {param: dict(type="list", elements="dict", options=options)}
    result = ArgumentSpecValidator(spec).validate({param: list(value)})
    if result.error_messages:
        text = "; ".join(result.error_messages)
        raise ListOptionError(param, text if text.startswith(param) else "%s: %s" % (param, text))
    return result.validated_parameters[param]
