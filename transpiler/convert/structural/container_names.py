"""Containers filled after they are assigned: ``self.convs = nn.ModuleList()``, then
``self.convs.append(...)`` in a loop (GCNII, ConvNeXt, Swin, MONAI ... write it so).

torch names a parameter by its path (``convs.0.weight``). MindSpore names it when its
Cell is assigned to an attribute, from the names the Cell holds then: an empty CellList
(SequentialCell, CellDict) holds none, so what is appended later is named from its index
alone (``0.weight``); one assigned with cells in it names what is appended later from
the wrong path (improved-diffusion's ``input_blocks``: ``blocks.0.1.0.weight`` for
``blocks.1.0.weight``, measured on MindSpore 2.10). A parent that assigns the Cell names
everything again from the paths, but the model itself is assigned to nothing: its
parameter names collide (``0.weight`` twice), the optimizer refuses them ("its name
'0.weight' already exists"), graph mode refuses to compile, and ``save_checkpoint``
keeps one of each pair, so a resumed model silently loses weights. After the last
statement that fills such a container, its parameters are named from their paths, as
torch names them (``Cell.update_parameters_name``)."""

from __future__ import annotations

import libcst as cst

from transpiler.convert.diagnostics import Severity

# (ModuleDict: the Cell the conversion writes for torch's ModuleDict where a value may be a container)
_CONTAINERS = {"CellList": "torch.nn.ModuleList", "SequentialCell": "torch.nn.Sequential",
                     "CellDict": "torch.nn.ModuleDict", "ModuleDict": "torch.nn.ModuleDict"}
_FILLING = frozenset({"append", "extend", "insert", "update", "insert_child_to_cell", "add_module"})
_COMMENT = ("# MindSpore names what is added to a container after it is assigned without its path",
            "# (\"0.weight\"): name the parameters from their paths (\"{attribute}.0.weight\"), as torch does")


def name_filled_containers(rewriter, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
    """In a Cell's ``__init__``: each block that assigns a container to ``self.x`` and
    fills it in later statements gets ``self.x.update_parameters_name("x.")`` after them."""
    if original.name.value != "__init__" or not isinstance(updated.body, cst.IndentedBlock):
        return updated
    return updated.with_changes(body=_block(rewriter, original, updated.body))


def _block(rewriter, original: cst.FunctionDef, block: cst.IndentedBlock) -> cst.IndentedBlock:
    body = list(block.body)
    changed = False
    for index, statement in enumerate(body):
        inner = _inner_blocks(statement)
        if inner:
            body[index] = statement.with_changes(**{k: _block(rewriter, original, v) for k, v in inner.items()})
            changed = changed or body[index] is not statement
    insertions: dict[int, list[cst.BaseStatement]] = {}
    for index, statement in enumerate(body):
        created = _created_container(statement)
        if created is None:
            continue
        attribute, kind = created
        fills = [i for i in range(index + 1, len(body)) if _fills(body[i], attribute)]
        if not fills:
            continue
        naming = cst.parse_statement(f'self.{attribute}.update_parameters_name("{attribute}.")')
        if not insertions:
            naming = naming.with_changes(leading_lines=[cst.EmptyLine(comment=cst.Comment(line.format(attribute=attribute)))
                                                        for line in _COMMENT])
        insertions.setdefault(fills[-1], []).append(naming)
        rewriter.changed()
        rewriter.ctx.report(original, kind, Severity.INFO,
                            f"self.{attribute} is filled after it is assigned: its parameters are named "
                            f"from their paths (\"{attribute}.0.weight\"), as torch names them")
    if not insertions:
        return block.with_changes(body=body) if changed else block
    result: list[cst.BaseStatement] = []
    for index, statement in enumerate(body):
        result.append(statement)
        result.extend(insertions.get(index, ()))
    return block.with_changes(body=result)


def _inner_blocks(statement: cst.BaseStatement) -> dict[str, cst.BaseSuite]:
    """The blocks of an if/for/while/with/try statement (not of a nested def or class)."""
    if isinstance(statement, (cst.If, cst.For, cst.While, cst.With, cst.Try)) \
            and isinstance(statement.body, cst.IndentedBlock):
        return {"body": statement.body}
    return {}


def _created_container(statement: cst.BaseStatement) -> tuple[str, str] | None:
    """``self.x = nn.CellList(...)`` (SequentialCell, CellDict): ("x", the torch class)."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    assign = statement.body[0]
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1):
        return None
    target, value = assign.targets[0].target, assign.value
    if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"):
        return None
    if not isinstance(value, cst.Call):
        return None
    name = value.func.attr.value if isinstance(value.func, cst.Attribute) else \
        value.func.value if isinstance(value.func, cst.Name) else None
    return (target.attr.value, _CONTAINERS[name]) if name in _CONTAINERS else None


def _fills(statement: cst.CSTNode, attribute: str) -> bool:
    """The statement adds to ``self.<attribute>``: append/extend/insert/update calls, setattr or an item
    assignment."""
    finder = _Fills(attribute)
    statement.visit(finder)
    return finder.found


class _Fills(cst.CSTVisitor):
    def __init__(self, attribute: str):
        super().__init__()
        self.attribute, self.found = attribute, False

    def _is_container(self, node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Attribute) and node.attr.value == self.attribute \
            and isinstance(node.value, cst.Name) and node.value.value == "self"

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in _FILLING \
                and self._is_container(node.func.value):
            self.found = True
        elif isinstance(node.func, cst.Name) and node.func.value == "setattr" and node.args \
                and self._is_container(node.args[0].value):  # add_module as converted
            self.found = True

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, cst.Subscript) and self._is_container(node.target.value):
            self.found = True

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self._is_container(node.target):
            self.found = True
