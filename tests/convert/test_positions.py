"""Diagnostic positions (transpiler.convert.positions): generating the code of
a tree with the statements whose line counts are known abridged to blank
lines gives every other node the start the whole tree gives it."""

from __future__ import annotations

import pathlib

import libcst as cst
import pytest

from tests.convert.test_codegen import EveryNode
from tests.convert.test_walk import SOURCE
from transpiler.convert.codegen import code_for_node
from transpiler.convert.positions import count_lines, start_positions
from transpiler.convert.walk import IS_STATEMENT, walk

ROOT = pathlib.Path(__file__).parents[2]
MULTILINE = '''\
import torch

def helper(a,
           b):  # a comment
    """A docstring
    over lines."""
    return (a +
            b)

class Net(torch.nn.Module):
    def forward(self, x):
        y = helper(x,
                   x)
        return torch.relu(y)
'''


def _every_other_statement(module: cst.Module) -> dict[int, cst.CSTNode]:
    """Every other statement at each depth, not inside one chosen already."""
    chosen = {}

    class Chooser(cst.CSTVisitor):
        count = 0

        def on_visit(self, node):
            if IS_STATEMENT[type(node)]:
                self.count += 1
                if self.count % 2:
                    chosen[id(node)] = node
                    return False
            return True

    walk(module, Chooser())
    return chosen


@pytest.mark.parametrize("source", [SOURCE, MULTILINE, MULTILINE.replace("\n", "\r\n"),
                                    (ROOT / "samples" / "train_gpt.py").read_text()],
                         ids=["every-node-kind", "multiline", "crlf", "train_gpt"])
def test_abridged_statements_leave_every_other_position_as_it_was(source):
    module = cst.parse_module(source)
    abridged = _every_other_statement(module)
    known_lines = {key: count_lines(code_for_node(node, module)) for key, node in abridged.items()}
    inside = set()
    for node in abridged.values():
        walk(node, finder := EveryNode())
        inside.update(id(n) for n in finder.nodes)
    walk(module, everything := EveryNode())
    outside = [n for n in everything.nodes if id(n) not in inside and not isinstance(n, (cst.IndentedBlock, cst.Module))]
    assert abridged and outside
    assert start_positions(module, outside, known_lines) == start_positions(module, outside)


def test_a_block_is_placed_by_generating_the_whole_tree():
    # a block starts at its first statement, which an abridged tree would not hold
    module = cst.parse_module(MULTILINE)
    block = module.body[1].body
    first = block.body[0]
    assert start_positions(module, [block], {id(first): 2}) == start_positions(module, [block])


def test_line_breaks_are_counted_as_the_positions_count_them():
    assert count_lines("a\nb\r\nc\rd") == 3 and count_lines("x") == 0
