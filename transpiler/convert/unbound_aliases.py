"""A conventional torch alias a file uses but never binds: ``F`` as torch.nn.functional.

facebookresearch/deit's models_v2.py ends its forward with::

    if self.dropout_rate:
        x = F.dropout(x, p=float(self.dropout_rate), training=self.training)

and never imports ``F``. torch runs it because the rate is 0 and the line never
runs; MindSpore's graph mode resolves every name of ``construct`` when it compiles,
including those of a branch that cannot run, and refuses the network ("The name 'F'
is not defined, or not supported in graph mode", measured on MindSpore 2.10). In a
file that imports torch, where ``F`` appears only as ``F.<name>`` (nothing assigns,
imports, defines or declares it, and no star import may bring it), the author meant
``torch.nn.functional``: the conversion reads it so (``ops.dropout``), and the report
says so at the first use, as a warning to look at.
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.names import is_torch_name
from transpiler.convert.walk import LAYOUT_TYPES, walk

CONVENTIONAL = {"F": "torch.nn.functional"}


def unbound_aliases(module: cst.Module, bound_elsewhere=()) -> dict[str, cst.Attribute]:
    """The conventional aliases the module uses unbound -> their first use (``F.dropout``).
    ``bound_elsewhere``: names a sibling file passes on (``from .layers import *``)."""
    survey = _Survey()
    walk(module, survey, prune=LAYOUT_TYPES)
    if not survey.imports_torch or survey.star_import:
        return {}
    return {name: use for name, use in survey.first_use.items()
            if name not in survey.other_occurrence and name not in bound_elsewhere}


class _Survey(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.imports_torch = self.star_import = False
        self.first_use: dict[str, cst.Attribute] = {}
        self.other_occurrence: set[str] = set()  # bound, declared, or read bare
        self.qualifiers: set[int] = set()  # ids of the Names an attribute reads from (``F`` in ``F.x``)
        self.attribute_names: set[int] = set()  # ids of the names after a dot (``x.F``)

    def visit_Import(self, node: cst.Import) -> None:
        self.imports_torch = self.imports_torch or any(
            is_torch_name(cst.Module([]).code_for_node(alias.name)) for alias in node.names)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.star_import = self.star_import or isinstance(node.names, cst.ImportStar)
        if node.module is not None and not node.relative:
            self.imports_torch = self.imports_torch or is_torch_name(cst.Module([]).code_for_node(node.module))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.attribute_names.add(id(node.attr))
        if isinstance(node.value, cst.Name) and node.value.value in CONVENTIONAL:
            self.qualifiers.add(id(node.value))
            self.first_use.setdefault(node.value.value, node)

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in CONVENTIONAL and id(node) not in self.qualifiers and id(node) not in self.attribute_names:
            self.other_occurrence.add(node.value)
