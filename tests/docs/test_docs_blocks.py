# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The documentation's Markdown is whole and each of its command blocks is run by a test or says why not
(tests/docs/docblocks.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from docblocks import inventory, paragraph_problems, parse


def test_every_block_is_run_or_marked_and_the_markdown_is_whole():
    rows, problems = inventory()
    assert not problems, "\n".join(problems)
    assert len(rows) > 30


def test_the_checks_catch_a_cut_sentence_and_an_unclosed_fence(tmp_path):
    """README.md as it was at 087bcb8: a paragraph cut mid-sentence, then a tree with a closing fence only."""
    (tmp_path / "README.md").write_text(
        "Everything installs itself (ansible-core 2.19 from the `ansible` 12 package,\n"
        "roles/    mofed\n```\n\n```sh\nmake test\n")
    _blocks, _paragraphs, problems = parse("README.md", str(tmp_path))
    assert any("parentheses do not balance" in p for p in problems)
    assert any("ends without a full stop" in p for p in problems)
    assert any("a fence opens without a language" in p for p in problems)
    assert any("never closed" in p for p in problems)
    assert paragraph_problems("x.md", 1, ["A sentence with `code` (and a remark)."]) == []
