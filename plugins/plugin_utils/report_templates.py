# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Jinja2 templates of the fabric report's HTML and SVG (plugins/plugin_utils/templates/report/), rendered.

One environment per process, autoescaped (every value from the data is escaped; markup comes only from the
templates and from :func:`page`/:func:`fragment`'s results, which are ``Markup``); ``StrictUndefined`` (a
misspelt name fails, it does not print nothing). The templates are written one element a line for reading; the
rendered text has no whitespace between tags, as a page built by hand would not. The filter ``t`` writes a value
as the report does, None as "-". report.py adds what its templates call (the model's words, the charts) to the
environment's globals; report_svg.py's templates need nothing but their values.

The templates ship in the collection beside this file (ansible-galaxy packs plugins/ whole).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import jinja2
from markupsafe import Markup

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates", "report")
_BETWEEN_TAGS = re.compile(r">[ \t]*\n\s*<")
_ENV = []


def _text(value):
    """A value as the report writes it: None is "-"."""
    return "-" if value is None else str(value)


def environment():
    """The one environment of this process (created on first use)."""
    if not _ENV:
        env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, trim_blocks=True,
                                 lstrip_blocks=True, undefined=jinja2.StrictUndefined)
        env.filters["t"] = _text
        _ENV.append(env)
    return _ENV[0]


def _tight(text):
    return Markup(_BETWEEN_TAGS.sub("><", str(text)).strip())


def page(template, **values):
    """A whole page (text ending in one newline)."""
    return str(_tight(environment().get_template(template).render(**values))) + "\n"


def fragment(template, **values):
    """A piece of a page (an ``<svg>`` element, a section) as ``Markup``: a template it is given to does not escape it."""
    return _tight(environment().get_template(template).render(**values))


def macro(template, name, *args):
    """One macro of ``template`` called with ``args``, as :func:`fragment` returns it."""
    return _tight(getattr(environment().get_template(template).module, name)(*args))
