# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The command blocks of the user documentation, and the checks that keep them honest.

Scope: README.md, docs/*.md, roles/*/README.md, inventories/*/README.md.

The convention (docs/DESIGN.md, "Documentation that runs"):

* every fenced block opens with a language: ``text`` for what is not code (trees, diagrams, output), else the
  language of the code (``sh``, ``yaml``, ``ini``, ``bash``);
* every block that is code is either run by a test of tests/docs (the test finds it with
  ``doc_block(path, first_line)``: its file and its first line, which must be unique in the file), or carries a
  line ``# not run by the tests: <why>``, visible to the reader. A test may also check a marked block
  (``doc_block(..., run=False)``: its syntax, its variables against the role's argument spec), which does not
  count as running it;
* prose is whole: fences balanced, and no paragraph that stops mid-sentence (a paragraph ends with ``.``, ``:``,
  ``!`` or ``?``, its backticks and parentheses balanced).

    python3 tests/docs/docblocks.py          # every block: run by which test, or why not; problems; exit 1 on any
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import glob
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TESTS = os.path.dirname(os.path.abspath(__file__))
SCOPE = ("README.md", "docs/*.md", "roles/*/README.md", "inventories/*/README.md")
MARKER = re.compile(r"\s*#\s*not run by the tests:\s*(\S.*)")
FENCE = re.compile(r"( *)(```+)(.*)")
NOT_CODE = ("text",)
ENDINGS = (".", ":", "!", "?")


class Block(object):
    """One fenced block: ``path`` (relative to the root), ``line`` (of the opening fence, 1-based), ``lang``,
    ``lines`` (its content), ``first`` (its first line, stripped) and ``reason`` (of its marker, or None)."""

    def __init__(self, path, line, lang, lines):
        self.path = path
        self.line = line
        self.lang = lang
        self.lines = lines
        self.first = lines[0].strip() if lines else ""
        reasons = [m.group(1) for m in (MARKER.fullmatch(x) for x in lines) if m]
        self.reason = reasons[0] if reasons else None

    @property
    def text(self):
        return "\n".join(self.lines) + "\n"

    @property
    def code(self):
        return self.lang not in NOT_CODE

    def __repr__(self):
        return "%s:%d: %s" % (self.path, self.line, self.first)


def doc_files(root=ROOT):
    out = []
    for pattern in SCOPE:
        out.extend(sorted(glob.glob(os.path.join(root, pattern))))
    return [os.path.relpath(p, root) for p in out]


def parse(path, root=ROOT):
    """``(blocks, paragraphs, problems)`` of one file; paragraphs are ``(line, [lines])`` of prose."""
    with open(os.path.join(root, path)) as f:
        lines = f.read().split("\n")
    blocks, paragraphs, problems = [], [], []
    fence, start, lang, body, para = None, 0, None, [], []

    def close_paragraph():
        if para:
            paragraphs.append((para[0][0], [x for _n, x in para]))
            del para[:]

    for n, raw in enumerate(lines, 1):
        m = FENCE.fullmatch(raw)
        if fence is not None:
            if m and m.group(2) == fence and not m.group(3).strip():
                blocks.append(Block(path, start, lang, body))
                fence = None
            else:
                body.append(raw)
            continue
        if m:
            close_paragraph()
            fence, start, lang, body = m.group(2), n, m.group(3).strip(), []
            if not lang:
                problems.append("%s:%d: a fence opens without a language (`text` for what is not code)" % (path, n))
            continue
        if not raw.strip():
            close_paragraph()
        else:
            para.append((n, raw))
    close_paragraph()
    if fence is not None:
        problems.append("%s:%d: the fence opened here is never closed" % (path, start))
    for line, text in paragraphs:
        problems.extend(paragraph_problems(path, line, text))
    return blocks, paragraphs, problems


def _strip_code(text):
    return re.sub(r"(`+).*?\1", "", text)


def paragraph_problems(path, line, text):
    """A paragraph of prose that stops mid-sentence: its end, its backticks, its parentheses."""
    if text[0].lstrip().startswith(("#", "|", "<!--")):     # headings, tables, comments
        return []
    joined = " ".join(x.strip() for x in text)
    out = []
    if joined.count("`") % 2:
        out.append("%s:%d: an odd number of backticks: a code span is cut" % (path, line))
    prose = _strip_code(joined)
    if prose.count("(") != prose.count(")"):
        out.append("%s:%d: parentheses do not balance (%d open, %d close): a sentence is cut"
                   % (path, line, prose.count("("), prose.count(")")))
    end = joined.rstrip()
    while end.endswith((")", "*", "_", "`", '"', "'")) and not end.endswith(("`.", ").")):
        end = end[:-1].rstrip()
    if not end.endswith(ENDINGS):
        out.append("%s:%d: the paragraph ends without a full stop (%r): a sentence is cut"
                   % (path, line, joined[-60:]))
    return out


def registered(tests=TESTS):
    """``{(path, first line): [(test file, run)]}`` of every ``doc_block(path, first_line[, run=...])`` call."""
    found = {}
    for name in sorted(os.listdir(tests)):
        if not (name.startswith("test_") and name.endswith(".py") or name == "conftest.py"):
            continue
        with open(os.path.join(tests, name)) as f:
            tree = ast.parse(f.read(), name)
        # module-level names of strings (FIRST = "..."), which calls may use for the path or the first line
        names = dict((n.targets[0].id, n.value.value) for n in tree.body
                     if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
                     and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if func != "doc_block" or len(node.args) < 2:
                continue
            args = [a.value if isinstance(a, ast.Constant) else names.get(a.id) if isinstance(a, ast.Name) else None
                    for a in node.args[:2]]
            run = True
            for kw in node.keywords:
                if kw.arg == "run" and isinstance(kw.value, ast.Constant):
                    run = bool(kw.value.value)
            if None in args:
                continue
            found.setdefault(tuple(args), []).append((name, run))
    return found


def inventory(root=ROOT, tests=TESTS):
    """``(rows, problems)``: one row per block, ``(block, verdict)``; problems of the prose and the blocks."""
    rows, problems = [], []
    seen = {}
    for path in doc_files(root):
        blocks, _paragraphs, file_problems = parse(path, root)
        problems.extend(file_problems)
        for b in blocks:
            seen.setdefault((b.path, b.first), []).append(b)
            rows.append(b)
    refs = registered(tests)
    for key, where in sorted(refs.items()):
        if key not in seen:
            problems.append("%s: %s refers to a block whose first line is %r: there is none" % (
                key[0], ", ".join(sorted(set(w for w, _r in where))), key[1]))
    out = []
    for b in rows:
        key = (b.path, b.first)
        runs = sorted(set(w for w, r in refs.get(key, []) if r))
        checks = sorted(set(w for w, r in refs.get(key, []) if not r))
        if not b.code:
            out.append((b, "text"))
            continue
        if len(seen[key]) > 1 and key in refs:
            problems.append("%r: %d blocks of %s start with this line: a test cannot tell them apart"
                            % (b, len(seen[key]), b.path))
        if runs and b.reason:
            problems.append("%r: marked 'not run by the tests' but run by %s" % (b, ", ".join(runs)))
        elif runs:
            out.append((b, "run by tests/docs/" + ", tests/docs/".join(runs)))
        elif b.reason:
            out.append((b, "not run: " + b.reason + (" (checked by tests/docs/%s)" % ", ".join(checks) if checks else "")))
        else:
            problems.append("%r: a %s block that no test runs and that has no '# not run by the tests: <why>' line"
                            % (b, b.lang))
            out.append((b, "UNMARKED"))
    return out, problems


def doc_block(path, first_line, run=True, root=ROOT):
    """The block of ``path`` whose first line is ``first_line`` (``run``: whether the caller runs it; read by
    :func:`registered`, not here)."""
    del run
    blocks, _paragraphs, _problems = parse(path, root)
    found = [b for b in blocks if b.first == first_line]
    if len(found) != 1:
        raise AssertionError("%s: %d blocks start with %r" % (path, len(found), first_line))
    return found[0]


def main():
    rows, problems = inventory()
    for b, verdict in rows:
        print("%s:%d [%s] %s\n    -> %s" % (b.path, b.line, b.lang, b.first, verdict))
    for p in problems:
        print("PROBLEM: " + p)
    print("%d blocks, %d problems" % (len(rows), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
