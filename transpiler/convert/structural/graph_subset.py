"""Code kept as the author wrote it, rewritten into the subset MindSpore's graph
mode compiles (GRAPH_MODE, ``mindspore.jit``, ``mindspore.export``), where the
rewritten form means the same in PyNative.

``map(lambda t: f(t, h=self.heads), qkv)``: graph mode compiles ``map`` as its
Map operator, which refuses a lambda that reads a variable of the function
around it ("The Map operator don't support Closure with free variable yet",
measured on MindSpore 2.10); the list comprehension ``[f(t, h=self.heads) for t
in qkv]`` compiles. So does ``[merge_heads(item) for item in (q, k, v)]`` for
``map(merge_heads, (q, k, v))`` with ``merge_heads`` a lambda the method
defines (axial-attention). Only where the map is consumed whole (unpacked, or passed
to list/tuple/sum/...), so that computing every item at once is what the
program did anyway. A lambda that reads nothing but its parameters
(``lambda t: t * 2``) compiles as it is and is left alone; one that reads a global
or a builtin does not (``lambda t: ops.relu(t)``, ``lambda t: list(t.shape)`` in
egnn-pytorch: the same error, measured), and is rewritten in the functions graph
mode compiles (elsewhere, and at module level, it stays); nor does a function of
the method; a function of the module does (``map(split_heads, qkv)``).

The functions graph mode compiles: ``construct``, the functions and methods of the
file it calls, and those another file's compiled code calls (VITS's
``commons.convert_pad_shape``, called in attentions.py's forward: the project
index's ``SiblingFacts.compiled``, transpiler/convert/project.py), with what they
call in turn: the passes given ``compiled`` rewrite only there.

An ``import`` inside ``construct`` or a function it calls (the torch import a
marked statement keeps, transpiler/convert/marked.py): graph mode refuses to compile the whole method
("Unsupported statement 'Import'"), even where the import stands in a branch
that never runs (a keyword argument's default, a helper's flag). The import
moves above the code, guarded, binding None without torch; the marked
statement still stands under its marker and fails where it runs without torch
(``'NoneType' object has no attribute ...``), while graph mode compiles the
method around it (a stand-in object would not do: graph mode inspects the
global when it compiles). Measured on MindSpore 2.10 CPU.

What the conversion left of device handling (a device read nothing reads, an
``if`` left empty by a dropped move) goes: see device_leftovers.py. ``^``
between truth values in a test becomes ``!=``: see bool_xor.py. A value a
method caches in a dict attribute is returned as computed: see
attribute_caches.py. ``kwargs.update(k=v)`` on a ``**kwargs`` parameter or a dict
the function makes is an item assignment per keyword: see kwargs_update.py. ``x in {2, 3}`` is
``x in (2, 3)``: see set_membership.py. ``super().construct(x)`` names its class in a
Cell another class derives from: see explicit_super.py. A comprehension of several ``for``
clauses assigned or returned is its loops: see nested_comprehensions.py. A slice
of a Sequential bound to a name and called runs its layers by index: see
sequential_slices.py. ``hs.pop()`` reads ``hs[-1]`` and rebinds ``hs = hs[:-1]``:
see list_pops.py. ``next(self.blocks.get_parameters()).dtype`` and
``self.trainable_params()`` read a tuple of the parameters ``__init__`` lists: see
parameter_reads.py. A layer with parameters made in ``construct`` is marked: see
layers_in_construct.py. So is an object graph mode runs as Python (a dataclass returned
beside tensors, a plain class's object whose methods compute tensors): see
python_objects.py. So is a tensor read as NumPy or a list (TimesNet's periods): see
numpy_reads.py; and a call into a library graph mode cannot call (loguru's logger): see
library_calls.py. ``if self.initialized.item() == 0:`` compares the tensor: see
item_tests.py. ``ops.assign(self.loc.data, v)`` assigns ``self.loc``: see
assigned_data.py. For ``mindspore.export``'s strict mode: a device argument the
method never reads is not passed (unread_device_arguments.py), a test for the
meta device is its answer (meta_devices.py), an ``if`` whose branches are the
same is the branch (same_branches.py), and a tensor attribute a compiled method
refreshes for its input is a local passed on (attribute_refreshes.py).

A ``try`` whose body the conversion made a constant return (smp's
``is_torch_compiling``: ``try: return torch.compiler.is_compiling()`` became
``try: return False``): graph mode refuses every ``try`` ("Unsupported statement
'Try'"); such a body cannot raise, so the return alone stands.

A loop variable of ``construct`` read after its loop: graph mode refuses it
("The local variable 'i' defined in the 'for' loop body cannot be used outside
of the loop body. Please define variable 'i' before 'for'"); as it asks, the
variable is set to None before the loop (the loop sets it again; measured
with ranges, tensors and CellLists). So is a variable that some branches of an
``if`` bind and others do not, read after it (x-transformers' ``mem_every``
under ``if has_memory_tokens:``): "The name 'mem_every' is not defined, or not
supported in graph mode", or "... is not defined in false branch".
"""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

from transpiler.convert.names import is_torch_name
from transpiler.convert.structural.assigned_data import without_assigned_data
from transpiler.convert.structural.attribute_caches import without_attribute_caches
from transpiler.convert.structural.bool_xor import without_bool_xor
from transpiler.convert.structural.device_leftovers import without_device_leftovers
from transpiler.convert.structural.explicit_super import with_explicit_super
from transpiler.convert.structural.kwargs_update import without_kwargs_update
from transpiler.convert.structural.name_reads import mentions
from transpiler.convert.structural.attribute_casts import without_attribute_casts
from transpiler.convert.structural.attribute_refreshes import without_attribute_refreshes
from transpiler.convert.structural.meta_devices import without_meta_device_tests
from transpiler.convert.structural.same_branches import without_same_branches
from transpiler.convert.structural.unread_device_arguments import without_unread_device_arguments
from transpiler.convert.structural.item_tests import without_item_tests
from transpiler.convert.structural.list_pops import without_list_pops
from transpiler.convert.structural.nested_comprehensions import without_nested_comprehensions
from transpiler.convert.structural.parameter_reads import without_parameter_reads
from transpiler.convert.structural.layers_in_construct import with_layers_in_construct_marked
from transpiler.convert.structural.library_calls import with_library_calls_marked
from transpiler.convert.structural.numpy_reads import READS as NUMPY_READS, with_numpy_reads_marked
from transpiler.convert.structural.python_objects import with_python_objects_marked
from transpiler.convert.structural.sequential_slices import without_sequential_slices
from transpiler.convert.structural.set_membership import without_set_membership
from transpiler.convert.structural.sequence_reads import without_sequence_reads
from transpiler.convert.structural.library_imports import hoist_library_imports
from transpiler.convert.structural.callable_tests import without_callable_tests
from transpiler.convert.formatting import KeepsFormatting
from transpiler.convert.walk import LAYOUT_TYPES, WITHIN_STATEMENT_TYPES, Visitor, rewrite, walk

# calls that consume their iterable argument whole
_CONSUMERS = frozenset({"list", "tuple", "sum", "set", "sorted", "min", "max", "any", "all"})


def to_graph_subset(module: cst.Module, ctx) -> cst.Module:
    survey = _Survey()  # the call graph, and what the file holds: passes with nothing to do do not run
    walk(module, survey, prune=LAYOUT_TYPES)
    compiled = _compiled_functions(survey, ctx.project_compiled | ctx.jit_functions)
    if survey.maps:
        module = rewrite(module, _MapToComprehension(_module_names(module), ctx.to_format, compiled))
    if survey.function_imports:
        module = _hoist_construct_imports(module, compiled, ctx.to_format)
    module = hoist_library_imports(module, compiled, _hoist_construct_imports, _imports_torch, ctx.to_format)
    module = without_nested_comprehensions(module, compiled, ctx.to_format)
    module = without_sequential_slices(module, compiled, ctx.to_format)
    module = without_list_pops(module, compiled, ctx.to_format)
    module = without_sequence_reads(module, compiled, ctx.to_format)
    module = without_callable_tests(module, compiled, ctx.to_format)
    module = without_item_tests(module, compiled, ctx.to_format)
    module = without_assigned_data(module, compiled, ctx.to_format)
    module = without_attribute_casts(module, compiled, ctx.to_format)
    module = without_attribute_refreshes(module, compiled, ctx.to_format)
    module = without_parameter_reads(module, compiled, ctx.to_format)
    if "construct" in survey.calls:
        module = with_layers_in_construct_marked(module, ctx.to_format)
    called = set().union(*(survey.calls.get(name, ()) for name in compiled))
    module = with_python_objects_marked(module, compiled, called, ctx.project_objects, ctx.to_format)
    if survey.numpy_reads:
        module = with_numpy_reads_marked(module, compiled, ctx.to_format)
    module = with_library_calls_marked(module, compiled, ctx.to_format)
    module = without_meta_device_tests(module, compiled, ctx.to_format)
    module = without_device_leftovers(module, ctx.to_format)
    if survey.xor:
        module = without_bool_xor(module, ctx.to_format)
    module = without_attribute_caches(module, ctx.to_format)
    module = without_same_branches(module, compiled, ctx.to_format)
    module = without_unread_device_arguments(module, compiled, ctx.to_format)
    module = without_kwargs_update(module, ctx.to_format)
    module = without_set_membership(module, ctx.to_format)
    module = with_explicit_super(module, compiled, ctx.to_format)
    module = rewrite(module, _TriesThatCannotRaise(ctx.to_format))
    return rewrite(module, _LoopVariablesBeforeLoops(compiled, ctx.to_format))


def _compiled_functions(functions: "_Survey", called_elsewhere=frozenset()) -> set[str]:
    """``construct`` and the names of the file's functions and methods it calls, as
    ``f(...)`` or ``self.f(...)``, and those calls make in turn: what graph mode compiles.
    ``called_elsewhere``: the functions and methods (``f``, ``Class.method``) other files'
    compiled code calls (the project index's SiblingFacts.compiled: VITS's attentions.py
    calls ``commons.convert_pad_shape``), and the training steps' forward functions
    ``convert --jit`` compiled; they start the walk too."""
    compiled = set()
    pending = ["construct", *(name.rpartition(".")[2] for name in sorted(called_elsewhere))]
    while pending:
        name = pending.pop()
        if name in compiled:
            continue
        compiled.add(name)
        pending.extend(callee for callee in functions.calls.get(name, ()) if callee in functions.calls)
    return compiled


class _Survey(Visitor):
    """Each function name -> the names it calls as ``f(...)`` or ``self.f(...)``, or reads as
    ``self.f`` (over every function of that name; a nested function's calls count for the
    function around it too); and whether the file calls ``map``, has a ``^``, and has an import
    or an ``x.numpy()`` / ``x.tolist()`` inside a function."""

    def __init__(self):
        super().__init__()
        self.calls: dict[str, set[str]] = {}
        self.functions: list[str] = []
        self.maps = self.xor = self.function_imports = self.numpy_reads = False

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self.xor = self.xor or isinstance(node.operator, cst.BitXor)

    def visit_Import(self, node: cst.Import) -> None:
        self.function_imports = self.function_imports or bool(self.functions)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.function_imports = self.function_imports or bool(self.functions)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.calls.setdefault(node.name.value, set())

    def visit_FunctionDef_body(self, node: cst.FunctionDef) -> None:  # not its decorators or defaults
        self.functions.append(node.name.value)

    def leave_FunctionDef_body(self, node: cst.FunctionDef) -> None:
        self.functions.pop()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        # a method passed on as a value (improved-diffusion: checkpoint(self._forward, ...)) runs there
        if isinstance(node.value, cst.Name) and node.value.value == "self":
            for function in self.functions:
                self.calls[function].add(node.attr.value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in NUMPY_READS and self.functions:
            self.numpy_reads = True
        if isinstance(func, cst.Name):
            callee = func.value
            self.maps = self.maps or callee == "map"
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            callee = func.attr.value
        else:
            return
        for function in self.functions:
            self.calls[function].add(callee)


def _hoist_construct_imports(module: cst.Module, compiled: set[str], to_format) -> cst.Module:
    hoister = _ConstructImports(to_format, compiled)
    module = rewrite(module, hoister)
    if not hoister.hoisted:
        return module
    position = 0  # after the docstring, the __future__ imports and the module's imports
    for index, statement in enumerate(module.body):
        if isinstance(statement, cst.SimpleStatementLine) and all(
                isinstance(small, (cst.Import, cst.ImportFrom)) or (index == 0 and _is_docstring(small))
                for small in statement.body):
            position = index + 1
        elif not (isinstance(statement, cst.Try) and position == index):
            break
        else:
            position = index + 1
    existing = {cst.Module([statement]).code.strip() for statement in module.body}
    guarded = []
    for code, (names, torch_module) in sorted(hoister.hoisted.items(), key=lambda item: item[1][1]):
        unbound = "\n".join(f"    {name} = None" for name in names)
        text = (f"try:\n    {code}\nexcept ImportError:  # without torch, the statements marked "
                f"TODO(ms-migrate) in construct fail where they run\n{unbound}\n") if torch_module else code + "\n"
        if text.strip() not in existing:
            guarded.append(cst.parse_statement(text))
    if not guarded:
        return module
    guarded = [statement.with_changes(leading_lines=[cst.EmptyLine()])
               if index == 0 or isinstance(statement, cst.Try) and not isinstance(guarded[index - 1], cst.Try)
               else statement for index, statement in enumerate(guarded)]
    body = list(module.body)
    return module.with_changes(body=[*body[:position], *guarded, *body[position:]])


def _is_docstring(small) -> bool:
    return isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString))


class _ConstructImports(KeepsFormatting):
    """Removes the import statements of ``construct`` methods and of the functions
    they call (x-transformers' ``softclamp_gelu`` keeps a marked ``import torch``),
    not of functions defined in them, recording each (an author's own ``import
    math`` moves too, unguarded: graph mode refuses it as well); a marker
    standing above a removed import stays, above the statement after it. In a
    ``try``, only a torch import moves (guarded); the author's stays (monai's ``try:
    from monai._C import ...`` / ``except ImportError``: moved out unguarded, the
    module would not import without the extension); graph mode refuses the ``try``
    around it anyway."""

    prune = WITHIN_STATEMENT_TYPES

    def __init__(self, to_format, compiled: set[str]):
        super().__init__(to_format)
        self.compiled = compiled
        self.depth = 0  # > 0: inside a function graph mode compiles
        self.tries = self.tries_outside = 0  # the try statements around, and those around the function
        self.hoisted: dict[str, tuple[list[str], bool]] = {}  # code -> (names bound, a torch module)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.depth or node.name.value in self.compiled:
            if not self.depth:
                self.tries_outside = self.tries
            self.depth += 1

    def visit_Try(self, node) -> None:
        self.tries += 1

    def leave_Try(self, original_node, updated_node):
        self.tries -= 1
        return updated_node

    visit_TryStar, leave_TryStar = visit_Try, leave_Try

    def leave_FunctionDef(self, original_node, updated_node):
        if self.depth:
            self.depth -= 1
        return updated_node

    def leave_IndentedBlock(self, original_node, updated_node):
        if self.depth != 1:  # construct's own blocks only, not a nested function's
            return updated_node
        in_try = self.tries > self.tries_outside  # only a torch import moves: guarded, as it was
        body, carried, changed = [], [], False
        for statement in updated_node.body:
            if isinstance(statement, cst.SimpleStatementLine) and all(
                    isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar)
                    and not (isinstance(small, cst.ImportFrom) and small.relative)
                    and (not in_try or _imports_torch(small)) for small in statement.body):
                for small in statement.body:
                    self.hoisted.setdefault(cst.Module([cst.SimpleStatementLine([small])]).code.strip(),
                                            ([_bound(alias) for alias in small.names], _imports_torch(small)))
                carried.extend(statement.leading_lines)
                changed = True
                continue
            if carried:
                moved = statement.with_changes(leading_lines=[*carried, *statement.leading_lines])
                if statement in self.to_format:  # the marked statement the markers now stand above
                    self.to_format.add(moved)
                statement, carried = moved, []
            body.append(statement)
        if not changed:
            return updated_node
        if not body:
            body = [cst.SimpleStatementLine([cst.Pass()], leading_lines=carried)]
        return updated_node.with_changes(body=body)


def _imports_torch(small) -> bool:
    if isinstance(small, cst.ImportFrom) and small.relative:  # the package's own module, never torch's
        return False
    module = small.module if isinstance(small, cst.ImportFrom) else small.names[0].name
    return is_torch_name(get_full_name_for_node(module))


def _bound(alias: cst.ImportAlias) -> str:
    if alias.asname is not None:
        return get_full_name_for_node(alias.asname.name)
    return get_full_name_for_node(alias.name).split(".")[0]


class _MapToComprehension(cst.CSTTransformer):
    def __init__(self, module_names: set[str], to_format, compiled: set[str]):
        super().__init__()
        self.module_names = module_names
        self.to_format = to_format
        self.compiled = compiled
        self.functions: list[str] = []
        self.consumed: set[int] = set()  # ids of map calls whose result is consumed whole
        self.changed_statement = False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node.name.value)

    def leave_FunctionDef(self, original_node, updated_node):
        self.functions.pop()
        return updated_node

    # where a map's result is consumed whole
    def visit_Assign(self, node: cst.Assign) -> None:
        if all(isinstance(t.target, (cst.Tuple, cst.List)) for t in node.targets):
            self.consumed.add(id(node.value))

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in _CONSUMERS and len(node.args) >= 1 \
                and not node.args[0].star and node.args[0].keyword is None:
            self.consumed.add(id(node.args[0].value))

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.changed_statement = False

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if self.changed_statement or original_node in self.to_format:
            self.to_format.add(updated_node)
        self.changed_statement = False
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if id(original_node) not in self.consumed:
            return updated_node
        if not self.functions:
            return updated_node  # module-level code is never compiled
        comprehension = _as_comprehension(updated_node, self.module_names, self.functions[0] in self.compiled)
        if comprehension is None:
            return updated_node
        self.changed_statement = True
        return comprehension


def _as_comprehension(call: cst.Call, module_names: set[str], compiled: bool) -> cst.ListComp | None:
    """``[body for a in xs]`` for ``map(lambda a: body, xs)`` (``zip`` for several
    iterables), when the lambda reads a variable of the function around it, or, in a
    function graph mode compiles, any name but its parameters."""
    if not (isinstance(call.func, cst.Name) and call.func.value == "map" and len(call.args) >= 2):
        return None
    if any(arg.star or arg.keyword for arg in call.args):
        return None
    function = call.args[0].value
    iterables = [arg.value for arg in call.args[1:]]
    if isinstance(function, cst.Name) and function.value not in module_names and function.value not in _BUILTINS:
        return _calls_in_comprehension(function, iterables)  # a function of the method (merge_heads = lambda x: ...)
    if not isinstance(function, cst.Lambda):
        return None
    params = function.params
    if (params.star_arg is not cst.MaybeSentinel.DEFAULT and params.star_arg is not None) or params.kwonly_params \
            or params.star_kwarg or params.posonly_params or any(p.default for p in params.params):
        return None
    names = [p.name.value for p in params.params]
    if len(names) != len(iterables) or not names:
        return None
    if not _reads_a_closure(function.body, set(names), set() if compiled else module_names | _BUILTINS):
        return None
    return _comprehension(function.body, names, iterables)


def _calls_in_comprehension(function: cst.Name, iterables: list) -> cst.ListComp:
    """``[f(item) for item in xs]`` for ``map(f, xs)`` with ``f`` a variable of the function
    around it (a lambda or function it defines, or one it is given): a closure to Map."""
    names = [f"item{i if len(iterables) > 1 else ''}" for i in range(len(iterables))]
    names = [name + "_" if name == function.value else name for name in names]
    return _comprehension(cst.Call(function, [cst.Arg(cst.Name(n)) for n in names]), names, iterables)


def _comprehension(body: cst.BaseExpression, names: list[str], iterables: list) -> cst.ListComp:
    """``[body for a in xs]``, or ``[body for a, b in zip(xs, ys)]``."""
    if len(iterables) == 1:
        target: cst.BaseAssignTargetExpression = cst.Name(names[0])
        source = iterables[0]
    else:
        target = cst.Tuple([cst.Element(cst.Name(n)) for n in names], lpar=[], rpar=[])
        source = cst.Call(cst.Name("zip"), [cst.Arg(it) for it in iterables])
    return cst.ListComp(elt=body, for_in=cst.CompFor(target=target, iter=source))


def _reads_a_closure(body: cst.BaseExpression, params: set[str], free: set[str]) -> bool:
    """Whether ``body`` reads a name other than ``params`` and the names ``free``."""
    class _Reads(cst.CSTVisitor):
        def __init__(self):
            self.found = False
            self.unsupported = False

        def visit_Name(self, node: cst.Name) -> None:
            if node.value not in params and node.value not in free and node.value not in ("None", "True", "False"):
                self.found = True

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)  # the attribute's own name is no variable
            return False

        def visit_Arg(self, node: cst.Arg) -> bool:
            node.value.visit(self)  # nor is a keyword's name
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            self.unsupported = True  # a lambda in the lambda: its own parameters shadow
            return False

        def visit_Yield(self, node) -> None:
            self.unsupported = True

        def visit_NamedExpr(self, node) -> None:
            self.unsupported = True

        def visit_ListComp(self, node) -> bool:
            self.unsupported = True  # comprehension variables: left as written
            return False

        visit_GeneratorExp = visit_SetComp = visit_DictComp = visit_ListComp

    reads = _Reads()
    body.visit(reads)
    return reads.found and not reads.unsupported


_BUILTINS = frozenset(dir(__import__("builtins")))


def _module_names(module: cst.Module) -> set[str]:
    """Names bound at module level (imports, functions, classes, assignments)."""
    names: set[str] = set()
    for statement in module.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            names.add(statement.name.value)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                    for alias in small.names:
                        bound = alias.asname.name if alias.asname else alias.name
                        names.add(get_full_name_for_node(bound).split(".")[0])
                elif isinstance(small, cst.Assign):
                    for target in small.targets:
                        if isinstance(target.target, cst.Name):
                            names.add(target.target.value)
                elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    names.add(small.target.value)
    return names


class _TriesThatCannotRaise(KeepsFormatting):
    """``try: return False`` (with handlers, no else or finally): the return alone."""

    prune = WITHIN_STATEMENT_TYPES

    def leave_Try(self, original_node, updated_node):
        body = updated_node.body.body if isinstance(updated_node.body, cst.IndentedBlock) else ()
        if updated_node.orelse is not None or updated_node.finalbody is not None or len(body) != 1:
            return updated_node
        line = body[0]
        if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1
                and isinstance(line.body[0], cst.Return) and _is_constant(line.body[0].value)):
            return updated_node
        return line.with_changes(leading_lines=[*updated_node.leading_lines, *line.leading_lines])


def _is_constant(value) -> bool:
    return value is None or isinstance(value, (cst.Integer, cst.Float, cst.SimpleString)) \
        or (isinstance(value, cst.Name) and value.value in ("True", "False", "None"))


class _LoopVariablesBeforeLoops(KeepsFormatting):
    """``i = None`` before a loop of ``construct`` (or of a function it calls) whose
    variable ``i``, or a name its body binds, is read after the loop and bound nowhere
    before it; the same before an ``if`` that binds a name in some of its branches only."""

    prune = WITHIN_STATEMENT_TYPES

    def __init__(self, compiled: set[str], to_format):
        super().__init__(to_format)
        self.compiled = compiled

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node.name.value not in self.compiled  # a compiled function's nested functions are left alone

    def leave_FunctionDef(self, original_node, updated_node):
        if original_node.name.value not in self.compiled or not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        params = {p.name.value for p in _all_params(updated_node.params)}
        body = _define_before_loops(list(updated_node.body.body), set(), params)
        if body is None:
            return updated_node
        return updated_node.with_changes(body=updated_node.body.with_changes(body=body))


def _all_params(params: cst.Parameters):
    yield from params.posonly_params
    yield from params.params
    yield from params.kwonly_params
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            yield star


def _define_before_loops(body: list, reads_following: set[str], bound_before: set[str]) -> list | None:
    """``body`` with the definitions added, or None when nothing changes."""
    suffix: list[set[str]] = [set()] * len(body)
    reads = set(reads_following)
    for index in range(len(body) - 1, -1, -1):
        suffix[index] = set(reads)
        reads |= _reads(body[index])
    bound = set(bound_before)
    result, changed = [], False
    for index, statement in enumerate(body):
        after = suffix[index]
        if isinstance(statement, (cst.For, cst.While, cst.If, cst.With, cst.Try)):
            inner_bound = bound | (_target_names(statement.target) if isinstance(statement, cst.For) else set())
            new = _define_in_blocks(statement, after, inner_bound)
            if new is not None:
                statement, changed = new, True
        needed = []
        if isinstance(statement, (cst.For, cst.While)) and not getattr(statement, "asynchronous", None):
            # the loop's variable, and what its body binds: graph mode reads neither after the loop
            names = _target_names(statement.target) if isinstance(statement, cst.For) else set()
            names = names.union(*(_bound_names(s) for s in statement.body.body))
            needed = [name for name in sorted(names) if name in after and name not in bound]
        elif isinstance(statement, cst.If):
            needed = [name for name in sorted(_bound_in_some_branch(statement)) if name in after and name not in bound]
        needed = [name for name in needed if name != "_"]  # a throwaway, never read
        if needed:
            define = cst.parse_statement(" = ".join(needed) + " = None\n")
            result.append(define.with_changes(leading_lines=statement.leading_lines))
            statement = statement.with_changes(leading_lines=())
            changed = True
        result.append(statement)
        bound |= _bound_names(statement)
    return result if changed else None


def _bound_in_some_branch(statement: cst.If) -> set[str]:
    """The names some branch of an if/elif/else binds and another does not (an if without
    else has an empty one)."""
    branches: list[set[str]] = []
    node = statement
    while isinstance(node, cst.If):
        branches.append(set().union(*(_bound_names(s) for s in node.body.body)))
        node = node.orelse
    if isinstance(node, cst.Else):
        branches.append(set().union(*(_bound_names(s) for s in node.body.body)))
    else:
        branches.append(set())
    return set().union(*branches) - set.intersection(*branches)


def _define_in_blocks(statement, after: set[str], bound: set[str]):
    """``statement`` with its own blocks (body, else, handlers, finally) processed."""
    changes = {}
    for attribute in ("body", "orelse", "finalbody"):
        block = getattr(statement, attribute, None)
        if isinstance(block, cst.Else) or isinstance(block, cst.Finally):
            new = _define_before_loops(list(block.body.body), after, bound)
            if new is not None:
                changes[attribute] = block.with_changes(body=block.body.with_changes(body=new))
        elif isinstance(block, cst.If):  # elif
            new_if = _define_in_blocks(block, after, bound)
            if new_if is not None:
                changes[attribute] = new_if
        elif isinstance(block, cst.IndentedBlock):
            new = _define_before_loops(list(block.body), after, bound)
            if new is not None:
                changes[attribute] = block.with_changes(body=new)
    if isinstance(statement, cst.Try):
        handlers, handled = [], False
        for handler in statement.handlers:
            new = _define_before_loops(list(handler.body.body), after, bound)
            if new is not None:
                handler, handled = handler.with_changes(body=handler.body.with_changes(body=new)), True
            handlers.append(handler)
        if handled:
            changes["handlers"] = handlers
    return statement.with_changes(**changes) if changes else None


def _target_names(target) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_target_names(e.value) for e in target.elements)) if target.elements else set()
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return set()


class _Binds(Visitor):
    def __init__(self):
        super().__init__()
        self.names: set[str] = set()

    def visit_AssignTarget(self, node) -> None:
        self.names |= _target_names(node.target)

    def visit_AugAssign(self, node) -> None:
        self.names |= _target_names(node.target)

    def visit_AnnAssign(self, node) -> None:
        if node.value is not None:
            self.names |= _target_names(node.target)

    def visit_For(self, node) -> None:
        self.names |= _target_names(node.target)

    def visit_AsName(self, node) -> None:
        self.names |= _target_names(node.name)

    def visit_NamedExpr(self, node) -> None:
        self.names |= _target_names(node.target)

    def visit_FunctionDef(self, node) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_ClassDef(self, node) -> bool:
        self.names.add(node.name.value)
        return False


def _bound_names(statement) -> set[str]:
    binds = _Binds()
    walk(statement, binds, prune=LAYOUT_TYPES)
    return binds.names


def _reads(statement) -> set[str]:
    """The names ``statement`` mentions, but for attribute and keyword names
    (an over-approximation of what it reads: a name also assigned there counts)."""
    return set(mentions(statement))


