"""``ms-migrate convert --emit-tests``: next to each converted module, a pytest
file that builds every converted Cell it can, loads the torch original's
weights into it and compares outputs on seeded inputs
(``transpiler.proof.cell_tests.check_cell`` does the running).

Planning is static (the user's code is not run at conversion time): a Cell is
built from its constructor defaults, or from literal arguments the file itself
passes when it instantiates the class. Cells that cannot be built are listed
with the reason (as diagnostics, so they reach the run report).
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field

from transpiler.convert.diagnostics import Diagnostic, Severity

_MODULE_BASES = {"Module", "nn.Module", "torch.nn.Module"}


@dataclass
class CellPlan:
    buildable: dict[str, dict] = field(default_factory=dict)  # class -> {"args": [...], "kwargs": {...}}
    not_built: dict[str, tuple[int, str]] = field(default_factory=dict)  # class -> (line, reason)


def plan_cells(original_source: str) -> CellPlan:
    """Which torch Module classes of the file can be constructed, and how."""
    tree = ast.parse(original_source)
    plan = CellPlan()
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef) and _is_module(node, tree)}
    literal_calls = _literal_instantiations(tree, set(classes))
    for name, node in classes.items():
        required = _required_params(node)
        if required is None:
            plan.not_built[name] = (node.lineno, "its __init__ takes *args/**kwargs the tests cannot supply")
        elif not required:
            plan.buildable[name] = {"args": [], "kwargs": {}}
        elif name in literal_calls:
            plan.buildable[name] = literal_calls[name]
        else:
            plan.not_built[name] = (
                node.lineno,
                f"its constructor needs {', '.join(required)} and the file never calls {name}(...) with "
                "literal arguments",
            )
    return plan


def _is_module(node: ast.ClassDef, tree: ast.Module) -> bool:
    """A torch Module subclass, directly or through a class of the same file."""
    local = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    seen: set[str] = set()
    todo = [node]
    while todo:
        current = todo.pop()
        for base in current.bases:
            text = ast.unparse(base)
            if text in _MODULE_BASES or text.endswith(".Module"):
                return True
            if text in local and text not in seen:
                seen.add(text)
                todo.append(local[text])
    return False


def _required_params(node: ast.ClassDef) -> list[str] | None:
    init = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    if init is None:
        return []  # inherits a constructor; assume the default one
    args = init.args
    positional = args.posonlyargs + args.args
    required = [a.arg for a in positional[1 : len(positional) - len(args.defaults)]]
    required += [a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None]
    if required and (args.vararg or args.kwarg):
        return None
    return required


def _literal_instantiations(tree: ast.Module, names: set[str]) -> dict[str, dict]:
    """The first ``Name(literal, key=literal)`` call of each class in the file."""
    found: dict[str, dict] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names):
            continue
        if node.func.id in found or any(isinstance(a, ast.Starred) for a in node.args):
            continue
        try:
            args = [ast.literal_eval(a) for a in node.args]
            kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg is not None}
        except ValueError:
            continue
        if any(k.arg is None for k in node.keywords):
            continue
        found[node.func.id] = {"args": args, "kwargs": kwargs}
    return found


def test_file_path(converted_path: str) -> str:
    folder, name = os.path.split(converted_path)
    return os.path.join(folder, f"test_{os.path.splitext(name)[0]}_cells.py")


_TEMPLATE = '''"""Per-Cell tests written by `ms-migrate convert --emit-tests` for {converted}.

Each Cell below is built, given the weights of its torch original (from
{original}) and run on seeded inputs; its outputs must match torch's.
Inputs are guessed from the first layer; set INPUTS["Name"] to a list of
`ms-migrate verify --input` specs to choose them.
"""

import os

import pytest

from transpiler.proof.cell_tests import check_cell

ORIGINAL = {original_path!r}
CONVERTED = os.path.join(os.path.dirname(os.path.abspath(__file__)), {converted!r})
CELLS = {cells!r}
NOT_BUILT = {not_built!r}
INPUTS = {{}}
RTOL, ATOL = 1e-4, 1e-4


@pytest.mark.parametrize("name", sorted(CELLS))
def test_cell_matches_torch(name):
    check_cell(ORIGINAL, CONVERTED, name, CELLS[name], INPUTS.get(name), RTOL, ATOL)
'''


def render_test_file(original_path: str, converted_path: str, plan: CellPlan) -> str:
    """The test module: fixed code plus the plan as Python literals."""
    return _TEMPLATE.format(
        converted=os.path.basename(converted_path),
        original=os.path.basename(original_path),
        original_path=os.path.abspath(original_path),
        cells=plan.buildable,
        not_built={name: reason for name, (_, reason) in plan.not_built.items()},
    )


def emit_tests(original_path: str, converted_path: str, display: str) -> list[Diagnostic]:
    """Write the test file for one converted module; returns diagnostics for
    the report (one per Cell not built, one naming the file written)."""
    with open(original_path, encoding="utf-8") as handle:
        source = handle.read()
    try:
        plan = plan_cells(source)
    except SyntaxError as exc:
        return [Diagnostic(display, exc.lineno or 1, 0, "emit-tests", Severity.WARNING, f"no tests: {exc.msg}")]
    diagnostics = [
        Diagnostic(display, line, 0, "emit-tests", Severity.WARNING, f"Cell {name} not tested: {reason}")
        for name, (line, reason) in plan.not_built.items()
    ]
    if not plan.buildable:
        return diagnostics
    target = test_file_path(converted_path)
    with open(target, "w", encoding="utf-8") as handle:
        handle.write(render_test_file(original_path, converted_path, plan))
    names = ", ".join(sorted(plan.buildable))
    diagnostics.append(Diagnostic(display, 1, 0, "emit-tests", Severity.INFO,
                                  f"per-Cell tests for {names} written to {os.path.basename(target)}"))
    return diagnostics
