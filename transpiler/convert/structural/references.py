"""Which expression nodes are name references (for type contexts)."""

from __future__ import annotations

import libcst as cst


def reference_ids(expr: cst.BaseExpression) -> set[int]:
    """ids of the Name/Attribute nodes naming types in ``expr``: a single name,
    a tuple of names (isinstance), or subscripted generics (annotations)."""
    found: set[int] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Name, cst.Attribute)):
            found.add(id(node))
        elif isinstance(node, (cst.Tuple, cst.List)):
            stack.extend(e.value for e in node.elements)
        elif isinstance(node, cst.Subscript):
            stack.append(node.value)
            for element in node.slice:
                if isinstance(element.slice, cst.Index):
                    stack.append(element.slice.value)
        elif isinstance(node, cst.BinaryOperation):  # X | None
            stack.extend([node.left, node.right])
    return found
