"""Rendering writes each changed statement as black writes it
(``transpiler.convert.formatting.render``): the code equals what replacing
each statement with black's text parsed back by libcst gives, including
where render takes black's text without parsing it."""

from __future__ import annotations

import pathlib

import libcst as cst
import pytest

from transpiler.convert.formatting import format_statement, render
from transpiler.convert.node_sets import NodeSet

ROOT = pathlib.Path(__file__).parents[2]

STATEMENTS = '''\
import os
x = some_function_with_a_long_name(first_argument, second_argument, keyword_argument=third_value_here)
y = f(a,)
a = 1; b = 2
s = "tab\\there"  + 'quote' # a comment
t = call(1,  # one
         2)  # two
u = value_one + \\
    value_two
doc = """first
    second"""
if x:
    result = another_function_with_a_long_name(first_argument, second_argument, keyword=value_x)
    while y:
        inner = build(alpha, beta, gamma, delta, epsilon, zeta, eta, theta, iota, kappa, lam)
        text = "line\\nbreak"  if inner  else  'other'
    class C:
        field = [element_number_one, element_number_two, element_number_three, element_4]
        @decorated
        def m(self):
            # kept above
            return self.method_with_a_long_name(argument_number_one, argument_number_two, k=3)
'''


def _sources():
    yield "statements", STATEMENTS
    yield "crlf", STATEMENTS.replace("\n", "\r\n")
    yield "tabs", STATEMENTS.replace("    ", "\t")
    yield "no-final-newline", "x = first_call(a)  +  second_call(b)\ny = f( x )"
    for path in sorted((ROOT / "samples").rglob("*.py")):
        yield path.name, path.read_text()


class _EveryStatement(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.statements = NodeSet()

    def visit_SimpleStatementLine(self, node):
        self.statements.add(node)


class _ParsedBack(cst.CSTTransformer):
    """Each statement replaced by black's text parsed back, depth by depth."""

    def __init__(self, module, statements):
        super().__init__()
        self.module, self.statements, self.depth = module, statements, 0

    def visit_IndentedBlock(self, node):
        self.depth += 1

    def leave_IndentedBlock(self, original_node, updated_node):
        self.depth -= 1
        return updated_node

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if original_node in self.statements:
            return format_statement(updated_node, self.depth, self.module)
        return updated_node


@pytest.mark.parametrize("name, source", list(_sources()), ids=[name for name, _ in _sources()])
def test_render_writes_what_black_parsed_back_gives(name, source):
    module = cst.parse_module(source)
    finder = _EveryStatement()
    module.visit(finder)
    expected = module.visit(_ParsedBack(module, finder.statements)).code
    output, seconds, _ = render(module, finder.statements)
    assert output == expected
    assert seconds > 0


def test_render_leaves_other_statements_as_written():
    module = cst.parse_module(STATEMENTS)
    assert render(module, NodeSet()) == (STATEMENTS, 0.0, {})
