"""transpiler.convert.walk gives libcst's visitor and transformer semantics faster:
the same callbacks in the same order, the same resulting tree."""

import libcst as cst

from transpiler.convert.walk import (LAYOUT_TYPES, WITHIN_STATEMENT_TYPES, StatementVisitor, Transformer, Visitor, child_fields,
                                     rewrite, walk)

SOURCE = '''
import torch.nn as nn
from torch import *

@decorator(x=1)
class Net(nn.Module):
    """doc"""
    def forward(self, x: int = 3, *args, **kw) -> "T":
        y = [a for a in x if a] + {k: v for k, v in kw.items()}
        with torch.no_grad() as g, open(f) as h:
            return x.view(-1)[1:2, ...] @ y if x else lambda q: q ** 2
        async def inner():
            await z
            yield from w
        try:
            pass
        except (ValueError, TypeError) as e:
            raise RuntimeError(f"{e!r:>10} {x}") from e
        else:
            del x
        finally:
            global q
        match x:
            case [1, *rest] if rest:
                pass
'''


class _Recorder:
    def __init__(self):
        self.calls = []

    def on_visit(self, node):
        self.calls.append(("visit", type(node).__name__))
        return super().on_visit(node)

    def on_leave(self, original_node, *updated):
        self.calls.append(("leave", type(original_node).__name__))
        return super().on_leave(original_node, *updated)

    def on_visit_attribute(self, node, attribute):
        self.calls.append(("visit_attribute", type(node).__name__, attribute))
        return super().on_visit_attribute(node, attribute)

    def on_leave_attribute(self, node, attribute):
        self.calls.append(("leave_attribute", type(node).__name__, attribute))
        return super().on_leave_attribute(node, attribute)


class _Handlers:
    """Handlers of every kind, one of which stops the descent."""

    def visit_Lambda(self, node):
        self.calls.append("visit_Lambda")
        return False

    def visit_Call(self, node):
        self.calls.append("visit_Call")

    def leave_Name(self, original_node, *updated):
        self.calls.append(("leave_Name", original_node.value))
        return updated[0] if updated else None

    def visit_Param_default(self, node):
        self.calls.append("visit_Param_default")

    def leave_FunctionDef_returns(self, node):
        self.calls.append("leave_FunctionDef_returns")


class LibcstVisitor(_Handlers, _Recorder, cst.CSTVisitor):
    pass


class FastVisitor(_Handlers, _Recorder, Visitor):
    pass


class PlainVisitor(_Handlers, cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.calls = []


def _without_attribute_records(calls):
    # walk calls on_visit_attribute only for fields the visitor has a handler for
    return [c for c in calls if not (isinstance(c, tuple) and c[0] in ("visit_attribute", "leave_attribute"))]


def test_walk_makes_libcsts_calls_in_libcsts_order():
    module = cst.parse_module(SOURCE)
    expected = LibcstVisitor()
    module.visit(expected)
    assert "visit_Param_default" in expected.calls and "leave_FunctionDef_returns" in expected.calls
    for visitor in (LibcstVisitor(), FastVisitor()):
        walk(module, visitor)
        assert _without_attribute_records(visitor.calls) == _without_attribute_records(expected.calls)
    handlers_only = [c for c in expected.calls if not (isinstance(c, tuple) and c[0] in
                                                      ("visit", "leave", "visit_attribute", "leave_attribute"))]
    plain = PlainVisitor()
    walk(module, plain)
    assert plain.calls == handlers_only


def test_pruned_types_get_no_callbacks():
    module = cst.parse_module(SOURCE)
    visitor = FastVisitor()
    walk(module, visitor, prune=LAYOUT_TYPES)
    seen = {c[1] for c in visitor.calls if isinstance(c, tuple) and c[0] == "visit"}
    assert seen and not seen & {t.__name__ for t in LAYOUT_TYPES}


def test_pruning_a_base_type_prunes_its_subclasses_only_where_all_are_pruned():
    # Call.whitespace_before_args is declared as BaseParenthesizableWhitespace;
    # the walk skips such a field only when every subclass is pruned too
    module = cst.parse_module("f(\n  x)\n")
    base = cst.BaseParenthesizableWhitespace
    for prune, expected in (({base, cst.SimpleWhitespace}, ["ParenthesizedWhitespace"]),
                            ({base, cst.SimpleWhitespace, cst.ParenthesizedWhitespace}, [])):
        visitor = FastVisitor()
        walk(module, visitor, prune=frozenset(prune))
        seen = [c[1] for c in visitor.calls if isinstance(c, tuple) and c[0] == "visit"]
        assert [name for name in seen if name in ("SimpleWhitespace", "ParenthesizedWhitespace")] == expected


class _Enclosing(StatementVisitor):
    """Records the statements around each name and each statement's own view."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def visit_Name(self, node):
        self.seen.append((node.value, [type(s).__name__ for s in self.statements]))

    def visit_Return(self, node):  # a small statement, not a statement of its own
        self.seen.append(("return", [type(s).__name__ for s in self.statements]))

    def visit_With(self, node):
        self.seen.append(("with", [type(s).__name__ for s in self.statements]))
        return False  # a pruned subtree still leaves the stack as it found it

    def leave_With(self, original_node):
        self.seen.append(("left with", [type(s).__name__ for s in self.statements]))


def test_a_statement_visitor_sees_the_statements_around_each_node():
    visitor = _Enclosing()
    walk(cst.parse_module(SOURCE), visitor, prune=LAYOUT_TYPES)
    seen = {}
    for name, statements in visitor.seen:
        seen.setdefault(name, statements)  # the first use of each name
    assert seen["Net"] == ["ClassDef"]
    assert seen["forward"] == ["ClassDef", "FunctionDef"]
    assert seen["kw"] == ["ClassDef", "FunctionDef"]  # a parameter: the function's
    assert seen["y"] == ["ClassDef", "FunctionDef", "SimpleStatementLine"]
    assert seen["with"] == seen["left with"] == ["ClassDef", "FunctionDef", "With"]
    assert "return" not in seen and "g" not in seen  # inside the pruned with
    assert seen["rest"] == ["ClassDef", "FunctionDef", "Match"]  # a case is no statement of its own
    assert visitor.statements == []


class _Renamer:
    def leave_Name(self, original_node, updated_node):
        return updated_node.with_changes(value=updated_node.value.upper()) if updated_node.value == "x" else updated_node

    def visit_Lambda(self, node):
        return False


class LibcstRenamer(_Renamer, _Recorder, cst.CSTTransformer):
    pass


class FastRenamer(_Renamer, _Recorder, Transformer):
    pass


def test_transformer_makes_libcsts_calls_and_tree():
    module = cst.parse_module(SOURCE)
    expected, fast = LibcstRenamer(), FastRenamer()
    assert module.visit(fast).code == module.visit(expected).code
    assert fast.calls == expected.calls


def test_rewrite_makes_libcsts_calls_and_tree():
    module = cst.parse_module(SOURCE)
    for transformer_type in (LibcstRenamer, FastRenamer):
        expected, fast = transformer_type(), transformer_type()
        result, libcsts = rewrite(module, fast), module.visit(expected)
        assert result.deep_equals(libcsts) and result.code == libcsts.code
        assert fast.calls == expected.calls


class _LayoutBlindRenamer(_Renamer, _Recorder, Transformer):
    prune = LAYOUT_TYPES


def test_rewrite_passes_a_transformers_pruned_types_by_as_they_are():
    module = cst.parse_module(SOURCE)
    pruned, full = _LayoutBlindRenamer(), FastRenamer()
    result = rewrite(module, pruned)
    assert result.deep_equals(rewrite(module, full)) and result.code == module.visit(LibcstRenamer()).code
    layout = {t.__name__ for t in LAYOUT_TYPES}
    assert not {c[1] for c in pruned.calls if c[0] in ("visit", "leave")} & layout
    assert [c for c in full.calls if c[0] in ("visit", "leave") and c[1] not in layout] == [
        c for c in pruned.calls if c[0] in ("visit", "leave")]
    commas = [n for n in _nodes(module) if type(n) is cst.Comma]
    assert commas and {id(c) for c in commas} <= {id(n) for n in _nodes(result)}  # the same objects


def _nodes(node):
    found = [node]
    for child in node.children:
        found += _nodes(child)
    return found


class _Remover(Transformer):
    """Removals and flattenings of every kind libcst allows."""

    def leave_Pass(self, original_node, updated_node):
        return cst.RemovalSentinel.REMOVE  # a statement left empty goes, as with libcst

    def leave_Expr(self, original_node, updated_node):
        if isinstance(updated_node.value, cst.Await):
            return cst.FlattenSentinel([updated_node, cst.Expr(cst.Name("after"))])
        return updated_node

    def leave_Element(self, original_node, updated_node):
        return cst.RemovalSentinel.REMOVE if isinstance(updated_node.value, cst.Name) and updated_node.value.value in "bc" else updated_node

    def leave_AsName(self, original_node, updated_node):
        return cst.RemovalSentinel.REMOVE  # an optional field: None

    def leave_Comma(self, original_node, updated_node):
        return cst.RemovalSentinel.REMOVE if original_node is not updated_node else updated_node


def test_rewrite_removes_and_flattens_as_libcst_does():
    module = cst.parse_module(SOURCE + "a = [b, 1, c]\n")
    result = rewrite(module, _Remover()).code
    assert result == module.visit(_Remover()).code
    assert "await z; after" in result and "a = [1]" in result and " as e" not in result and " as g" not in result


def test_rewrite_gives_every_visited_node_a_new_object():
    module = cst.parse_module(SOURCE)
    seen = []

    class Collector(Transformer):
        def on_leave(self, original_node, updated_node):
            seen.append((original_node, updated_node))
            return updated_node

    rewrite(module, Collector())
    assert seen and all(original is not updated for original, updated in seen)


def test_child_fields_follow_source_order():
    assert child_fields(cst.Call) == ("lpar", "func", "whitespace_after_func", "whitespace_before_args", "args", "rpar")
    assert child_fields(cst.ImportFrom)[:3] == ("whitespace_after_from", "relative", "module")


class _BlockCounter(Transformer):
    """Works on blocks only: reverses no statement, counts the blocks it leaves."""

    prune = WITHIN_STATEMENT_TYPES

    def __init__(self):
        super().__init__()
        self.left: list[str] = []

    def on_leave(self, original_node, updated_node):
        self.left.append(type(original_node).__name__)
        return super().on_leave(original_node, updated_node)

    def leave_IndentedBlock(self, original_node, updated_node):
        return updated_node.with_changes(body=[*updated_node.body, cst.SimpleStatementLine([cst.Pass()])])


def test_a_block_transformer_passes_statements_and_expressions_by():
    module = cst.parse_module(SOURCE)
    blocks = _BlockCounter()
    result = rewrite(module, blocks)
    full = module.visit(_LibcstBlockPasser())
    assert result.code == full.code
    assert set(blocks.left) <= {"Module", "ClassDef", "FunctionDef", "IndentedBlock", "If", "Else", "For", "While",
                                "Try", "ExceptHandler", "Finally", "With", "Match", "MatchCase"}
    assert {"FunctionDef", "IndentedBlock", "Try", "With"} <= set(blocks.left)
    lines = [n for n in _nodes(module) if type(n) is cst.SimpleStatementLine]
    assert lines and {id(n) for n in lines} <= {id(n) for n in _nodes(result)}  # the same objects


class _LibcstBlockPasser(cst.CSTTransformer):
    def leave_IndentedBlock(self, original_node, updated_node):
        return updated_node.with_changes(body=[*updated_node.body, cst.SimpleStatementLine([cst.Pass()])])
