"""torch Dataset subclasses -> plain MindSpore dataset sources.

``class Digits(Dataset)`` loses its torch base (GeneratorDataset takes any
object with ``__getitem__``/``__len__``); in ``__getitem__`` the index is made
a Python int (GeneratorDataset passes numpy.int64, which MindSpore tensors
cannot be indexed with) and the returned values become NumPy arrays.

Before the traversal, ``record_dataset_columns`` notes the column names each
dataset variable will have (from what ``__getitem__`` returns), so that the
DataLoader rule (rewrite_rules/training/data.py) can write ``column_names=``,
and which variables hold a mindspore.dataset pipeline already (a torchvision
dataset, built in this file or, as the project index says, in another one it
imports the variable from), which the DataLoader batches as it is.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.spec import Unconvertible
from transpiler.convert.definitions import is_docstring
from transpiler.convert.engine import code_of
from transpiler.convert.walk import LAYOUT_TYPES, walk

DATASET_BASES = frozenset(
    {"torch.utils.data.Dataset", "torch.utils.data.dataset.Dataset", "torch.utils.data.IterableDataset"}
)
_COLUMNS_KEY = "dataset columns:"
_DICT_KEY = "dataset returns a dict:"  # known_kinds: dataset class or variable -> the class whose __getitem__ does
_CLASS_KEY = "class "
_DATA_PREFIXES = ("torch.utils.data", "torchvision.datasets")
_TENSOR_DATASETS = ("torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset")
_SPLITS = ("torch.utils.data.random_split", "torch.utils.data.dataset.random_split")
MINDSPORE_DATASET = "mindspore dataset"  # a known kind: already a mindspore.dataset pipeline


def columns_of(ctx, expr: cst.BaseExpression) -> list[str] | None:
    """Column names of a dataset variable, or of a dataset built in place.
    Raises Unconvertible for a dataset whose ``__getitem__`` returns a dict:
    GeneratorDataset takes a tuple of columns, and given a dict it fails inside
    its pipeline with "Exception thrown from user defined Python function in
    dataset" and no line of the user's code (measured on MindSpore 2.10), so
    the loader is marked, naming the method, instead."""
    key = code_of(expr)
    if isinstance(expr, cst.Call):
        qualified = ctx.analysis.qualified(expr.func) or ""
        if qualified in _TENSOR_DATASETS:
            return default_columns(len([a for a in expr.args if a.keyword is None]))
        key = _CLASS_KEY + code_of(expr.func)
    returns_dict = ctx.known_kinds.get(_DICT_KEY + key)
    if returns_dict:
        raise Unconvertible(f"{returns_dict}.__getitem__ returns a dict; mindspore.dataset.GeneratorDataset takes a "
                            "tuple of columns (a dict fails inside its pipeline without naming the line): return "
                            "the values as a tuple, name the keys in column_names=, and read batches by position")
    kind = ctx.known_kinds.get(_COLUMNS_KEY + key)
    return kind.split(",") if kind else None


def is_mindspore_dataset(ctx, expr: cst.BaseExpression) -> bool:
    return ctx.known_kinds.get(code_of(expr)) == MINDSPORE_DATASET


def makes_mindspore_dataset(qualified: str) -> bool:
    """A call of ``qualified`` returns what the conversion makes a mindspore.dataset pipeline
    (a torchvision dataset, the parts of a random_split). The project index notes the module-level
    names other files bind so (transpiler/convert/project.py, SiblingFacts.datasets)."""
    return qualified.startswith("torchvision.datasets.") or qualified in _SPLITS


def default_columns(count: int) -> list[str]:
    if count == 1:
        return ["data"]
    if count == 2:
        return ["data", "label"]
    return [f"column_{i}" for i in range(count)]


# -- before the traversal: which variable holds which columns ------------------
def record_dataset_columns(module: cst.Module, ctx) -> None:
    if not any(q.startswith(_DATA_PREFIXES) for q in ctx.analysis.references.values()):
        return  # no data pipeline in this file: skip the walk
    classes: dict[str, list[str]] = {}
    dict_classes: set[str] = set()
    for statement in module.body:
        if isinstance(statement, cst.ClassDef) and _dataset_bases(statement, ctx.analysis):
            columns = _getitem_columns(statement)
            if _returns_dict(statement):
                dict_classes.add(statement.name.value)
                ctx.known_kinds[_DICT_KEY + _CLASS_KEY + statement.name.value] = statement.name.value
            if columns:
                classes[statement.name.value] = columns
                ctx.known_kinds[_COLUMNS_KEY + _CLASS_KEY + statement.name.value] = ",".join(columns)
    finder = _Assignments()
    walk(module, finder, prune=LAYOUT_TYPES)
    # datasets another file of the project builds as pipelines (from data import train_dataset),
    # unless this file binds the name itself
    bound = {code_of(t.target) for node in finder.found for t in node.targets}
    for name in ctx.project_datasets - bound:
        ctx.known_kinds[name] = MINDSPORE_DATASET
    for node in finder.found:
        _record_assignment(node, classes, ctx)
        value = node.value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in dict_classes \
                and len(node.targets) == 1:
            ctx.known_kinds[_DICT_KEY + code_of(node.targets[0].target)] = value.func.value


class _Assignments(cst.CSTVisitor):
    def __init__(self):
        self.found: list[cst.Assign] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        self.found.append(node)


def _record_assignment(node: cst.Assign, classes, ctx) -> None:
    value = node.value
    if not isinstance(value, cst.Call) or len(node.targets) != 1:
        return
    target = node.targets[0].target
    qualified = ctx.analysis.qualified(value.func) or ""
    func_name = value.func.value if isinstance(value.func, cst.Name) else None
    columns: list[str] | None = None
    targets = [target]
    if func_name in classes:
        columns = classes[func_name]
    elif qualified in _TENSOR_DATASETS:
        columns = default_columns(len([a for a in value.args if a.keyword is None]))
    elif qualified in ("torch.utils.data.Subset", "torch.utils.data.random_split") and value.args:
        columns = columns_of(ctx, value.args[0].value)
        if isinstance(target, (cst.Tuple, cst.List)):
            targets = [e.value for e in target.elements]
        if qualified.endswith("random_split"):
            for each in targets:
                ctx.known_kinds[code_of(each)] = MINDSPORE_DATASET
    elif qualified.startswith("torchvision.datasets."):
        ctx.known_kinds[code_of(target)] = MINDSPORE_DATASET
        columns = ["image", "label"]
    if columns:
        for each in targets:
            if isinstance(each, (cst.Name, cst.Attribute)):
                ctx.known_kinds[_COLUMNS_KEY + code_of(each)] = ",".join(columns)


def _dataset_bases(node: cst.ClassDef, analysis) -> list[cst.Arg]:
    return [base for base in node.bases if analysis.qualified(base.value) in DATASET_BASES]


def _getitem(node: cst.ClassDef) -> cst.FunctionDef | None:
    if not isinstance(node.body, cst.IndentedBlock):
        return None
    for statement in node.body.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == "__getitem__":
            return statement
    return None


def _getitem_columns(node: cst.ClassDef) -> list[str] | None:
    method = _getitem(node)
    if method is None:
        return None
    finder = _Returns()
    method.body.visit(finder)
    for value in finder.values:
        if isinstance(value, cst.Dict):
            return None
        elements = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
        names = [_column_name(e) for e in elements]
        if all(names) and len(set(names)) == len(names):
            return names  # type: ignore[return-value]
        return default_columns(len(elements))
    return None


def _returns_dict(node: cst.ClassDef) -> bool:
    method = _getitem(node)
    if method is None:
        return False
    finder = _Returns()
    method.body.visit(finder)
    return any(isinstance(value, (cst.Dict, cst.DictComp)) for value in finder.values)


def _column_name(expr: cst.BaseExpression) -> str | None:
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return None


class _Returns(cst.CSTVisitor):
    def __init__(self):
        self.values: list[cst.BaseExpression] = []

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self.values.append(node.value)


# -- during the traversal ------------------------------------------------------
def visit_dataset_class(rewriter, node: cst.ClassDef) -> None:
    for base in _dataset_bases(node, rewriter.analysis):
        rewriter.handled.add(id(base.value))


def convert_dataset_class(rewriter, original: cst.ClassDef, updated: cst.ClassDef):
    dataset_bases = {id(b) for b in _dataset_bases(original, rewriter.analysis)}
    if not dataset_bases:
        return updated
    kept = []
    for before, after in zip(original.bases, updated.bases):
        if id(before) in dataset_bases:
            rewriter.ctx.consume(before.value)
        else:
            kept.append(after)
    changes = {"bases": kept}
    if kept:
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    else:
        changes.update(lpar=cst.MaybeSentinel.DEFAULT, rpar=cst.MaybeSentinel.DEFAULT)
    if isinstance(updated.body, cst.IndentedBlock):
        body = [_convert_getitem(s, rewriter.ctx) if _is_getitem(s) else s for s in updated.body.body]
        changes["body"] = updated.body.with_changes(body=body)
    rewriter.changed()
    rewriter.ctx.converted(original, "torch.utils.data.Dataset",
                           "Dataset subclass -> plain source for mindspore.dataset.GeneratorDataset")
    return updated.with_changes(**changes)


def _is_getitem(statement) -> bool:
    return isinstance(statement, cst.FunctionDef) and statement.name.value == "__getitem__"


def _convert_getitem(method: cst.FunctionDef, ctx) -> cst.FunctionDef:
    params = method.params.params
    body = method.body.visit(_ReturnsToNumpy(ctx))
    if len(params) >= 2 and isinstance(body, cst.IndentedBlock):
        index = params[1].name.value
        to_int = cst.SimpleStatementLine(
            [cst.Assign([cst.AssignTarget(cst.Name(index))], cst.Call(cst.Name("int"), [cst.Arg(cst.Name(index))]))]
        )
        statements = list(body.body)
        at = 1 if statements and is_docstring(statements[0]) else 0
        statements.insert(at, to_int)
        body = body.with_changes(body=statements)
    return method.with_changes(body=body)


class _ReturnsToNumpy(cst.CSTTransformer):
    def __init__(self, ctx):
        super().__init__()
        self.ctx = ctx

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if updated_node is not original_node:
            self.ctx.to_format.add(updated_node)  # formatted like every rewritten statement
        return updated_node

    def leave_Return(self, original_node, updated_node: cst.Return):
        value = updated_node.value
        if value is None or isinstance(value, cst.Dict):
            return updated_node
        if isinstance(value, cst.Tuple):
            elements = [e.with_changes(value=self._numpy(e.value)) for e in value.elements]
            return updated_node.with_changes(value=value.with_changes(elements=elements))
        return updated_node.with_changes(value=self._numpy(value))

    def _numpy(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        return cst.Call(self.ctx.ref("numpy.asarray"), [cst.Arg(expr)])
