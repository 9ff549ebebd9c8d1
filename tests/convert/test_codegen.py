"""The code ms-migrate generates for nodes is libcst's, made faster
(transpiler.convert.codegen), and the adapter classes it writes, formatted
member by member and shared across files, read as black writes the class."""

from __future__ import annotations

import pathlib

import black
import libcst as cst
import pytest
from libcst._nodes.base import CSTCodegenError

from tests.conversion import convert_to
from tests.convert.test_walk import SOURCE
from transpiler.convert.codegen import code_for_node
from transpiler.convert.walk import walk

ROOT = pathlib.Path(__file__).parents[2]
CRLF_TABS = "import torch\r\nclass A:\r\n\tdef f(self, x):  # c\r\n\t\tif x:\r\n\t\t\treturn (x)\r\n"


class EveryNode(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.nodes = []

    def on_visit(self, node):
        self.nodes.append(node)
        return True


@pytest.mark.parametrize("source", [SOURCE, CRLF_TABS, (ROOT / "samples" / "train_gpt.py").read_text()],
                         ids=["every-node-kind", "crlf-tabs", "train_gpt"])
def test_the_code_of_every_node_is_libcsts(source):
    module = cst.parse_module(source)
    everything = EveryNode()
    walk(module, everything)
    assert code_for_node(module, module) == module.code == source
    for node in everything.nodes:
        try:
            expected = module.code_for_node(node)
        except CSTCodegenError:  # only in context (an annotation's `:` or `->`)
            with pytest.raises(CSTCodegenError):
                code_for_node(node, module)
            continue
        assert code_for_node(node, module) == expected, type(node).__name__


ADAPTED = '''
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim, act_layer=nn.GELU, conv=nn.Conv2d, linear=nn.Linear):
        super().__init__()
        self.act = act_layer()
        self.conv = conv(dim, dim, 3, padding=1)
        self.fc = linear(dim, dim)

    def forward(self, x):
        return self.fc(self.act(self.conv(x)))
'''


def _namespace_classes(path: pathlib.Path) -> list[str]:
    module = cst.parse_module(path.read_text())
    return [module.code_for_node(s.with_changes(leading_lines=())) for s in module.body
            if isinstance(s, cst.ClassDef) and s.name.value.startswith("torch_")]


def test_adapter_classes_are_what_black_writes_for_the_whole_class(tmp_path):
    first = convert_to("block.py", tmp_path, text=ADAPTED)
    classes = _namespace_classes(first)
    assert classes, first.read_text()
    for code in classes:
        assert black.format_str(code, mode=black.Mode()) == code
        assert not any(line != line.rstrip() for line in code.splitlines())
    # the second file reuses the members formatted for the first: the same text
    second = convert_to("block2.py", tmp_path, text=ADAPTED.replace("dim, dim, 3", "dim, dim, 5"))
    assert _namespace_classes(second) == classes


def test_a_docstring_marked_for_formatting_keeps_its_indentation():
    # black, given a lone string, takes it for a module docstring and strips its lines' indentation
    import libcst as cst

    from transpiler.convert.formatting import render
    from transpiler.convert.node_sets import NodeSet

    source = 'class A:\n    def f(self):\n        """Doc.\n\n        More.\n        """\n        return 1\n'
    module = cst.parse_module(source)
    to_format = NodeSet()
    to_format.add(module.body[0].body.body[0].body.body[0])
    assert render(module, to_format).code == source
