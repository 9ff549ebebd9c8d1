"""The project index: what each file of a tree needs to know about its siblings.

A file is converted on its own, but a class deriving from a Module defined in
another file of the project (``from .parts import *; class Up(DoubleConv)``) is
a Cell too, and an autograd Function defined elsewhere is called through
``.apply``. Before the conversion fans out, every Python file of the tree is
read with Python's own parser (fast, read-only) to find its classes and
imports; names are resolved through relative and absolute imports, package
``__init__`` re-exports and ``import *`` until nothing changes. Each file then
gets ``SiblingFacts``: the names it binds that are Cells or autograd Functions
defined elsewhere in the tree, and those that hold a dataset another file builds
as one the conversion makes a mindspore.dataset pipeline (``from data import
train_dataset``, where data.py has ``train_dataset = datasets.MNIST(...)``): a
DataLoader over it is that pipeline, batched (rewrite_rules/training/data.py).

Graph mode compiles a Cell's construct and every function it calls, wherever that
function is defined: VITS's attentions.py calls ``commons.convert_pad_shape(...)``
in its forward, and the comprehension of two ``for`` clauses there refuses the
whole construct. The passes that rewrite compiled code into graph mode's subset
(structural/graph_subset.py) see one file; ``SiblingFacts.compiled`` names the
functions and methods of a file that other files' compiled code calls (followed
from each Cell's forward through the calls the index can resolve: ``f(...)``,
``module.f(...)``, ``Class.method(...)``, ``self.method(...)`` up the project's
base classes, and such names passed as values), so the file's own survey starts
from them too.
"""

from __future__ import annotations

import ast
import hashlib
import os
import warnings
from dataclasses import dataclass, field, replace
from functools import lru_cache

from transpiler.convert.structural.cells import is_module_base
from transpiler.convert.structural.datasets import makes_mindspore_dataset

_FUNCTION_BASES = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
_STOP = object()  # ProjectIndex._follow: the name is found to be no answer


@dataclass(frozen=True)
class SiblingFacts:
    """Names a file binds (``Base`` or ``parts.Base``) that name classes of other files."""

    cells: frozenset[str] = frozenset()  # Module subclasses: they become Cells
    functions: frozenset[str] = frozenset()  # autograd Functions: they become Cells with a bprop
    # names that reach the file through a sibling but are torch's (``from .layers import *``
    # where layers did ``import torch.nn as nn``): local name -> torch qualified name
    torch_names: tuple[tuple[str, str], ...] = ()
    # parameters of this file's functions (``batchify.data``, ``Loader.__init__.tokens``) that a
    # call site of the project passes a tensor: a file that never names torch still handles
    # tensors there, and is converted (``data.size(0)`` -> ``data.shape[0]``)
    tensor_params: frozenset[str] = frozenset()
    # of the members an adapter class may hold (torch's attribute names over MindSpore's,
    # ``reset_parameters``: ``adapter_members``), those some file of the project names
    # (``m.weight``, ``getattr(m, "weight")``); None: the project is not known, and an
    # adapter keeps every member
    attributes: frozenset[str] | None = None
    # names (``train_dataset``, ``data.train_dataset``) of module-level datasets other files
    # build with a torchvision dataset or random_split: converted, mindspore.dataset pipelines
    datasets: frozenset[str] = frozenset()
    # this file's top-level functions and methods (``convert_pad_shape``, ``Attention.attend``)
    # that another file's compiled code calls: graph mode compiles them (graph_subset.py)
    compiled: frozenset[str] = frozenset()
    # classes of this file and the project files it imports that graph mode cannot compile
    # (``layers.py: SpecialSpmmFunction (...why)``): convert --jit compiles no step of the file
    pynative_only: frozenset[str] = frozenset()
    # names the file binds (``CorrBlock``, ``corr.CorrBlock``) that name plain classes of other
    # files (no base but object): graph mode runs their objects as Python (python_objects.py)
    objects: frozenset[str] = frozenset()

    def digest(self) -> str:
        text = "\0".join([*sorted(self.cells), "\1", *sorted(self.functions), "\1",
                          *(f"{a}={b}" for a, b in self.torch_names), "\1", *sorted(self.tensor_params),
                          "\1", *sorted(self.attributes if self.attributes is not None else ["\2"]),
                          "\1", *sorted(self.datasets),
                          # none: the digest it had before the field was added (cached results stay valid)
                          *(["\1", *sorted(self.compiled)] if self.compiled else []),
                          *(["\3", *sorted(self.pynative_only)] if self.pynative_only else []),
                          *(["\4", *sorted(self.objects)] if self.objects else [])])
        return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()

    def __bool__(self) -> bool:
        return bool(self.cells or self.functions or self.torch_names or self.tensor_params)


@dataclass
class _Module:
    name: str
    path: str
    is_package: bool
    bindings: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # local -> (module, name or None)
    stars: list[str] = field(default_factory=list)  # modules star-imported
    classes: dict[str, list[str]] = field(default_factory=dict)  # class -> dotted base expressions
    public: list[str] | None = None  # __all__, when it is a literal
    # top-level functions and class methods: "f" / "Class.method" -> parameter names (self dropped)
    signatures: dict[str, list[str]] = field(default_factory=dict)
    # for the tensor flow, per function (and the module body, key ""): its own assignments
    # and the calls that pass arguments, read once with the file
    scopes: dict[str, tuple[list, list]] = field(default_factory=dict)
    # attribute names it reads or sets (not of ``self``), and strings that could be one
    # (getattr(m, "weight"))
    attribute_names: frozenset[str] = frozenset()
    # module-level names bound to what a torchvision dataset or random_split returns
    datasets: set[str] = field(default_factory=set)
    # per function and method (keys as ``signatures``): the dotted names it calls, passes
    # on as arguments, or reads on ``self`` (its nested functions' too): graph mode's reach
    references: dict[str, frozenset[str]] = field(default_factory=dict)
    # classes only PyNative runs once converted -> (the kind they must be, why): an autograd
    # Function whose forward(ctx, ...) keeps ``ctx.attr = ...`` that backward reads (as a Cell,
    # its bprop reads state construct set: autograd_function.py), a Module whose forward makes
    # layers with parameters (layers_in_construct.py)
    pynative_only: dict[str, tuple[str, str]] = field(default_factory=dict)


def adapter_members() -> frozenset[str]:
    """The members an adapter class may go without (``transpiler.convert.adapters``):
    the properties giving torch's attribute names over MindSpore's (every rule's
    ``attribute_reads``) and ``reset_parameters``. The index notes only these names,
    so a file's facts change when a file starts or stops naming one of them."""
    from rewrite_rules.registry import load_rules

    return load_rules().attribute_read_names | {"reset_parameters"}


class ProjectIndex:
    def __init__(self, modules: dict[str, _Module]):
        self.modules = modules
        _script_imports(modules)
        members = adapter_members()
        self.attributes = frozenset(name for module in modules.values()
                                    for name in module.attribute_names if name in members)
        self.by_path = {os.path.abspath(m.path): m for m in modules.values()}
        self.kinds: dict[tuple[str, str], str] = {}  # (module, class) -> "cell" / "function"
        self._classify()
        self.tensor_params: dict[str, set[str]] = {}  # module -> {"f.param", ...}
        self._follow_tensors()
        self.compiled: dict[str, set[str]] = {}  # module -> {"f", "Class.method"} other files' compiled code calls
        self._follow_compiled()

    @classmethod
    def build(cls, root: str, paths: list[str]) -> "ProjectIndex":
        """Index the ``.py`` files ``paths`` of the tree ``root``."""
        root = os.path.abspath(root)
        package = os.path.basename(root) if os.path.isfile(os.path.join(root, "__init__.py")) else ""
        modules = {}
        for path in paths:
            module = _read(root, package, os.path.abspath(path))
            if module is not None:
                modules[module.name] = module
        return cls(modules)

    def facts(self, path: str) -> SiblingFacts:
        module = self.by_path.get(os.path.abspath(path))
        if module is None:
            return SiblingFacts()
        cells, functions = set(), set()
        for local, kind in self._imported_kinds(module).items():
            (cells if kind == "cell" else functions).add(local)
        return SiblingFacts(frozenset(cells), frozenset(functions), tuple(sorted(self._imported_torch(module).items())),
                            frozenset(self.tensor_params.get(module.name, ())), self.attributes,
                            frozenset(self._imported_datasets(module)), frozenset(self.compiled.get(module.name, ())),
                            frozenset(self._pynative_only(module)), frozenset(self._imported_objects(module)))

    def _imported_objects(self, module: _Module) -> set[str]:
        """Names ``module`` binds by import (``X`` or ``alias.X``) that are plain classes of the
        project: no base but ``object``."""
        def plain(where: tuple[str, str] | None) -> bool:
            return where is not None and not set(self.modules[where[0]].classes[where[1]]) - {"object"}

        names = set()
        for local, (target, name) in module.bindings.items():
            if name is not None:
                if plain(self._resolve(target, name)):
                    names.add(local)
            elif target in self.modules:  # ``import corr`` / ``from . import corr``
                names.update(f"{local}.{c}" for c in self.modules[target].classes if plain((target, c)))
        return names

    def _pynative_only(self, module: _Module) -> set[str]:
        """The classes graph mode cannot compile (``_Module.pynative_only``), of this file and of the
        project's files it imports, directly or through others (train.py -> models.py -> layers.py)."""
        if not any(m.pynative_only for m in self.modules.values()):
            return set()  # the usual project: no walk of the imports for every file
        reached, pending = set(), [module.name]
        while pending:
            name = pending.pop()
            if name in reached or name not in self.modules:
                continue
            reached.add(name)
            found = self.modules[name]
            pending.extend(target for target, _ in found.bindings.values())
            pending.extend(found.stars)
        return {f"{os.path.basename(self.modules[m].path)}: {c} ({why})" for m in reached
                for c, (kind, why) in self.modules[m].pynative_only.items() if self.kinds.get((m, c)) == kind}

    def _imported_datasets(self, module: _Module) -> set[str]:
        """Names ``module`` gets from siblings (``X`` or ``alias.X``) that hold a dataset
        the sibling builds as a mindspore.dataset pipeline."""
        def at(_, found, name):
            return True if name in found.datasets else _STOP if name in found.classes else None

        names = set()
        for local, (target, name) in module.bindings.items():
            if name is not None:
                if self._follow(target, name, at):
                    names.add(local)
            elif target in self.modules:  # ``import data`` / ``from . import data``
                names.update(f"{local}.{n}" for n in self.modules[target].datasets)
        for star in module.stars:
            starred = self.modules.get(star)
            if starred is not None:
                names.update(n for n in starred.datasets if not n.startswith("_") and n not in module.bindings
                             and (starred.public is None or n in starred.public))
        return names

    def _imported_torch(self, module: _Module) -> dict[str, str]:
        """Names ``module`` gets from siblings that the sibling bound to torch."""
        found = {}
        for local, (target, name) in module.bindings.items():
            if name is not None and target in self.modules:
                qualified = self._torch_binding(target, name)
                if qualified:
                    found[local] = qualified
        for star in module.stars:
            if star not in self.modules:
                continue
            starred = self.modules[star]
            names = starred.public if starred.public is not None else [
                n for n in (*starred.bindings, *self._star_names(star)) if not n.startswith("_")]
            for name in names:
                qualified = self._torch_binding(star, name)
                if qualified and name not in module.bindings and name not in module.classes:
                    found.setdefault(name, qualified)
        return found

    def _star_names(self, module_name: str, seen=None) -> set[str]:
        seen = seen if seen is not None else set()
        module = self.modules.get(module_name)
        if module is None or module_name in seen:
            return set()
        seen.add(module_name)
        names = set(module.bindings) | set(module.classes)
        for star in module.stars:
            names |= self._star_names(star, seen)
        return names

    def _torch_binding(self, module_name: str, name: str) -> str | None:
        """The torch name ``module_name.name`` is bound to, through imports (a
        class of the project is no torch name)."""
        return self._follow(module_name, name,
                            lambda _, module, n: _STOP if n in module.classes else self._torch_name(module, n))

    def _follow(self, module_name: str, name: str, at, seen=None):
        """What ``at(module_name, module, name)`` finds for ``module_name.name``,
        there or through its imports (the binding, else each star import); ``at``
        returns None to follow on, _STOP to give up."""
        seen = seen if seen is not None else set()
        if (module_name, name) in seen:
            return None
        seen.add((module_name, name))
        module = self.modules.get(module_name)
        if module is None:
            return None
        found = at(module_name, module, name)
        if found is not None:
            return None if found is _STOP else found
        binding = module.bindings.get(name)
        if binding is not None:
            target, imported = binding
            return self._follow(target, imported, at, seen) if imported is not None else None
        for star in module.stars:
            found = self._follow(star, name, at, seen)
            if found:
                return found
        return None

    # -- tensors across files ---------------------------------------------------
    def _follow_tensors(self) -> None:
        """Which function parameters receive tensors: a call ``f(torch.tensor(...))``
        or ``f(x)`` with ``x`` a tensor (made by torch, or itself such a parameter)
        in any file marks f's parameter, wherever f is defined; until nothing changes."""
        scopes = []  # (module, key, assignments, calls of project functions with their callee): read once
        for module in self.modules.values():
            for key, (assigns, all_calls) in module.scopes.items():
                calls = [(call, callee) for call in all_calls
                         if (callee := self._callee(module, key, call.func)) is not None]
                if calls:
                    scopes.append((module, key, assigns, calls))
        changed = True
        while changed:
            changed = False
            for module, key, assigns, calls in scopes:
                tensors = self._tensor_names(module, key, assigns)
                for call, callee in calls:
                    for target, param in self._tensor_arguments(module, call, callee, tensors):
                        found = self.tensor_params.setdefault(target, set())
                        if param not in found:
                            found.add(param)
                            changed = True

    def _tensor_names(self, module: _Module, key: str, assigns: list) -> set[str]:
        names = {p.rpartition(".")[2] for p in self.tensor_params.get(module.name, ())
                 if p.rpartition(".")[0] == key}
        for _ in range(3):  # a few passes reach names assigned from names
            before = len(names)
            for node in assigns:
                if node.value is not None and self._is_tensor(module, node.value, names):
                    for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                        names.update(_bound(target))
            if len(names) == before:
                break
        return names

    def _is_tensor(self, module: _Module, expr: ast.expr, names: set[str]) -> bool:
        from transpiler.analyze.tensor_values import STATIC_ATTRIBUTES, STATIC_METHODS, is_torch_value_call

        if isinstance(expr, ast.Name):
            return expr.id in names
        if isinstance(expr, ast.Call):
            dotted = _dotted(expr.func)
            qualified = self._torch_name(module, dotted) if dotted else None
            if qualified is not None:
                return is_torch_value_call(qualified)
            func = expr.func
            return isinstance(func, ast.Attribute) and func.attr not in STATIC_METHODS \
                and func.attr not in ("item", "tolist", "numpy") and self._is_tensor(module, func.value, names)
        if isinstance(expr, ast.Attribute):
            return expr.attr not in STATIC_ATTRIBUTES and self._is_tensor(module, expr.value, names)
        if isinstance(expr, ast.Subscript):
            return self._is_tensor(module, expr.value, names)
        if isinstance(expr, ast.BinOp):
            return self._is_tensor(module, expr.left, names) or self._is_tensor(module, expr.right, names)
        if isinstance(expr, ast.UnaryOp):
            return self._is_tensor(module, expr.operand, names)
        return False

    def _tensor_arguments(self, module: _Module, call: ast.Call, callee: tuple[str, str], tensors: set[str]):
        """(module, "f.param") for each argument of ``call`` (a call of the project's
        function or class ``callee``) that is a tensor."""
        target, function = callee
        params = self.modules[target].signatures[function]
        for position, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                break
            if position < len(params) and self._is_tensor(module, arg, tensors):
                yield target, f"{function}.{params[position]}"
        for keyword in call.keywords:
            if keyword.arg in params and self._is_tensor(module, keyword.value, tensors):
                yield target, f"{function}.{keyword.arg}"

    def _callee(self, module: _Module, key: str, func: ast.expr) -> tuple[str, str] | None:
        def at(m, found, n):
            return (m, n) if n in found.signatures or n in found.classes else None

        where = None
        if isinstance(func, ast.Name):
            where = self._follow(module.name, func.id, at)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id == "self" and "." in key:  # self.method(...) in a method
                where = (module.name, f"{key.split('.')[0]}.{func.attr}")
            else:
                binding = module.bindings.get(func.value.id)
                if binding is not None and binding[1] is None and binding[0] in self.modules:
                    where = self._follow(binding[0], func.attr, at)
        if where is None:
            return None
        name, function = where
        if function in self.modules[name].classes:
            function = f"{function}.__init__"
        return (name, function) if function in self.modules[name].signatures else None

    # -- compiled code across files ---------------------------------------------
    def _follow_compiled(self) -> None:
        """From each Cell's (and autograd Function's) forward, the functions and methods
        its calls reach, across files: those reached from another file are ``compiled``."""
        pending = [(name, f"{cls}.forward") for (name, cls) in self.kinds
                   if f"{cls}.forward" in self.modules[name].signatures]
        reached = set(pending)
        while pending:
            name, key = pending.pop()
            module = self.modules[name]
            for dotted in module.references.get(key, ()):
                target = self._reference(module, key, dotted)
                if target is None:
                    continue
                if target[0] != name:
                    self.compiled.setdefault(target[0], set()).add(target[1])
                if target not in reached:
                    reached.add(target)
                    pending.append(target)

    def _reference(self, module: _Module, key: str, dotted: str) -> tuple[str, str] | None:
        """(module, "f" / "Class.method") that ``dotted``, named in ``key`` of ``module``,
        refers to: a function or method of the project."""
        head, *rest = dotted.split(".")
        if head in ("self", "super"):
            if "." not in key or not rest:
                return None
            return self._method(module.name, key.split(".")[0], rest[0], inherited_only=head == "super")
        binding = module.bindings.get(head)
        if binding is not None and binding[1] is None:  # ``import commons`` / ``from . import commons``
            if binding[0] not in self.modules:
                return None
            where = (binding[0], None)
        else:
            where = self._follow(module.name, head, _definition)
        while where is not None and where[1] is None and rest:  # a module: ``pkg.sub.f``
            part, rest = rest[0], rest[1:]
            where = (f"{where[0]}.{part}", None) if f"{where[0]}.{part}" in self.modules \
                else self._follow(where[0], part, _definition)
        if where is None or where[1] is None:
            return None
        name, found = where
        if found in self.modules[name].classes:
            return self._method(name, found, rest[0]) if len(rest) == 1 else None  # ``Class.method``
        return where if not rest else None

    def _method(self, name: str, cls: str, method: str, seen=None, inherited_only=False) -> tuple[str, str] | None:
        """Where ``cls`` of module ``name`` (or a base class of the project) defines ``method``."""
        seen = seen if seen is not None else set()
        if (name, cls) in seen:
            return None
        seen.add((name, cls))
        module = self.modules[name]
        if f"{cls}.{method}" in module.signatures and not inherited_only:
            return name, f"{cls}.{method}"
        for base in module.classes.get(cls, ()):
            head, _, rest = base.partition(".")
            binding = module.bindings.get(head)
            if rest:
                where = self._resolve(binding[0], rest) if binding is not None and binding[1] is None else None
            else:
                where = self._resolve(name, base)
            found = self._method(*where, method, seen) if where is not None else None
            if found is not None:
                return found
        return None

    # -- resolution -----------------------------------------------------------
    def _imported_kinds(self, module: _Module) -> dict[str, str]:
        """Names ``module`` binds by import (``X`` or ``alias.X``) that are project classes."""
        found = {}
        for local, (target, name) in module.bindings.items():
            if name is not None:
                kind = self._kind(self._resolve(target, name))
                if kind:
                    found[local] = kind
            elif target in self.modules:  # ``import pkg.parts as parts`` / ``from . import parts``
                for class_name, kind in self._public_kinds(target).items():
                    found[f"{local}.{class_name}"] = kind
        for star in module.stars:
            for class_name, kind in self._public_kinds(star).items():
                found.setdefault(class_name, kind)
        return found

    def _public_kinds(self, module_name: str) -> dict[str, str]:
        module = self.modules.get(module_name)
        if module is None:
            return {}
        names = module.public if module.public is not None else [
            n for n in [*module.classes, *module.bindings] if not n.startswith("_")]
        kinds = {}
        for name in names:
            kind = self._kind(self._resolve(module_name, name))
            if kind:
                kinds[name] = kind
        return kinds

    def _kind(self, where: tuple[str, str] | None) -> str | None:
        return self.kinds.get(where) if where else None

    def _resolve(self, module_name: str, name: str) -> tuple[str, str] | None:
        """(module, class) that ``module_name.name`` refers to, through imports."""
        return self._follow(module_name, name, lambda m, module, n: (m, n) if n in module.classes else None)

    def _torch_name(self, module: _Module, dotted: str) -> str | None:
        qualified = _imported_name(module, dotted)
        return qualified if qualified is not None and qualified.split(".", 1)[0] == "torch" else None

    def _base_kind(self, module: _Module, base: str) -> str | None:
        torch_name = self._torch_name(module, base)
        if torch_name is not None:
            if torch_name in _FUNCTION_BASES:
                return "function"
            return "cell" if is_module_base(torch_name) else None
        head, _, rest = base.partition(".")
        if rest:
            binding = module.bindings.get(head)
            if binding is None or binding[1] is not None:
                return None
            return self._kind(self._resolve(binding[0], rest))
        return self._kind(self._resolve(module.name, base))

    def _classify(self) -> None:
        changed = True
        while changed:  # a class is a Cell when a base is, wherever that base is defined
            changed = False
            for module in self.modules.values():
                for class_name, bases in module.classes.items():
                    if (module.name, class_name) in self.kinds:
                        continue
                    for base in bases:
                        kind = self._base_kind(module, base)
                        if kind:
                            self.kinds[(module.name, class_name)] = kind
                            changed = True
                            break


def _script_imports(modules: dict[str, _Module]) -> None:
    """``from corr import CorrBlock`` in core/raft.py, where core/ is a package the index names
    ``core``: the script's directory is on the path when it runs (RAFT's demo and train scripts
    add it), so ``corr`` is the sibling ``core.corr`` when no module of the index is ``corr``.
    The modules read are cached by content (``_module_of``): the changed ones are copies."""
    for name, module in list(modules.items()):
        package = module.name if module.is_package else module.name.rpartition(".")[0]
        if not package:
            continue

        def sibling(target: str) -> str:
            return f"{package}.{target}" if target not in modules and f"{package}.{target}" in modules else target

        bindings = {local: (sibling(target), imported) for local, (target, imported) in module.bindings.items()}
        stars = [sibling(star) for star in module.stars]
        if bindings != module.bindings or stars != module.stars:
            modules[name] = replace(module, bindings=bindings, stars=stars)


def _definition(name: str, module: _Module, n: str):
    """For ProjectIndex._follow: (module, n) where ``n`` is a top-level function or class
    there, (module, None) where it is a module the file imports."""
    if n in module.classes or (n in module.signatures and "." not in n):
        return name, n
    binding = module.bindings.get(n)
    return (binding[0], None) if binding is not None and binding[1] is None else None


def _read(root: str, package: str, path: str) -> _Module | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None  # the conversion reports it
    return _module_of(root, package, path, data)


def _keeps_ctx_state(node: ast.ClassDef) -> bool:
    """forward(ctx, ...) sets an attribute of ctx that backward(ctx, ...) reads (pyGAT's
    ``ctx.N = shape[0]``)."""
    methods = {m.name: m for m in node.body if isinstance(m, ast.FunctionDef) and m.args.args}
    if "forward" not in methods or "backward" not in methods:
        return False

    def attributes(method: ast.FunctionDef, context) -> set[str]:
        owner = method.args.args[0].arg
        return {n.attr for n in ast.walk(method) if isinstance(n, ast.Attribute) and isinstance(n.ctx, context)
                and isinstance(n.value, ast.Name) and n.value.id == owner}

    return bool(attributes(methods["forward"], ast.Store) & attributes(methods["backward"], ast.Load))


# torch.nn layers that own parameters: made in forward, graph mode names their parameters alike
# for every block and fails ("its name 'weight' already exists"; layers_in_construct.py)
_LAYERS_WITH_PARAMETERS = frozenset({
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "Embedding", "EmbeddingBag", "PReLU",
    "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell", "MultiheadAttention", "Transformer",
    "TransformerEncoderLayer", "TransformerDecoderLayer",
})


def _makes_layers_in_forward(node: ast.ClassDef) -> bool:
    """forward calls ``nn.Linear(...)`` and the like (graykode's BERT: ``nn.LayerNorm(d_model)(x)``)."""
    forward = next((m for m in node.body if isinstance(m, ast.FunctionDef) and m.name == "forward"), None)
    if forward is None:
        return False
    for call in ast.walk(forward):
        if isinstance(call, ast.Call):
            head, _, last = (_dotted(call.func) or "").rpartition(".")
            if head in ("nn", "torch.nn") and last in _LAYERS_WITH_PARAMETERS:
                return True
    return False


@lru_cache(maxsize=256)
def _module_of(root: str, package: str, path: str, data: bytes) -> _Module | None:
    """The module read from ``data``; cached by content, as a warm server
    (transpiler.server) reads a file's siblings again for every request.
    Nothing changes a _Module once read."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # the conversion reports it
    relative = os.path.relpath(path, root)[: -len(".py")].split(os.sep)
    is_package = relative[-1] == "__init__"
    if is_package:
        relative = relative[:-1]
    name = ".".join(p for p in [package, *relative] if p)
    module = _Module(name, path, is_package)
    module.attribute_names = frozenset(_attribute_names(tree))
    module.scopes[""] = _scope_nodes(tree)
    for statement in _top_level(tree.body):
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            module.signatures[statement.name] = _parameters(statement)
            module.scopes[statement.name] = _scope_nodes(statement)
            module.references[statement.name] = _references(statement)
        elif isinstance(statement, ast.ClassDef):
            for method in statement.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    static = any(_dotted(d) == "staticmethod" for d in method.decorator_list)
                    key = f"{statement.name}.{method.name}"
                    module.signatures[key] = _parameters(method)[0 if static else 1:]
                    module.scopes[key] = _scope_nodes(method)
                    module.references[key] = _references(method)
    own_package = name if is_package else name.rpartition(".")[0]
    for statement in _top_level(tree.body):
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname:
                    module.bindings[alias.asname] = (alias.name, None)
                else:
                    head = alias.name.split(".", 1)[0]
                    module.bindings[head] = (head, None)
        elif isinstance(statement, ast.ImportFrom):
            source = _absolute(own_package, statement.module, statement.level)
            if source is None:
                continue
            for alias in statement.names:
                if alias.name == "*":
                    module.stars.append(source)
                    continue
                local = alias.asname or alias.name
                submodule = f"{source}.{alias.name}"
                module.bindings[local] = (submodule, None) if _is_module(submodule, root, package) else (source, alias.name)
        elif isinstance(statement, ast.ClassDef):
            module.classes[statement.name] = [b for b in map(_dotted, statement.bases) if b]
            if _keeps_ctx_state(statement):
                module.pynative_only[statement.name] = ("function", "keeps on ctx what its backward reads")
            elif _makes_layers_in_forward(statement):
                module.pynative_only[statement.name] = ("cell", "makes layers with parameters in forward")
        elif isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in statement.targets):
            try:
                value = ast.literal_eval(statement.value)
            except ValueError:
                continue
            if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
                module.public = list(value)
    for statement in _top_level(tree.body):  # the imports are known now
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call):
            dotted = _dotted(statement.value.func)
            qualified = _imported_name(module, dotted) if dotted else None
            names = [n for t in statement.targets for n in _bound(t)]
            if qualified is not None and makes_mindspore_dataset(qualified):
                module.datasets.update(names)
            else:
                module.datasets.difference_update(names)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):  # bound anew
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            module.datasets.difference_update(n for t in targets for n in _bound(t))
    return module


def _imported_name(module: _Module, dotted: str) -> str | None:
    """The qualified name ``dotted`` refers to through ``module``'s imports."""
    head, _, rest = dotted.partition(".")
    binding = module.bindings.get(head)
    if binding is None:
        return None
    target, name = binding
    qualified = f"{target}.{name}" if name is not None else target
    return f"{qualified}.{rest}" if rest else qualified


def _attribute_names(tree: ast.AST):
    """Attribute names, but of ``self`` (no method of a class reaches an adapter's
    members through ``self``: a class deriving from an adapter gets it whole), and
    strings that could name an attribute."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                yield node.attr
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            yield node.value


def _parameters(function) -> list[str]:
    args = function.args
    return [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]


def _scope_nodes(scope: ast.AST) -> tuple[list, list]:
    """The assignments of ``scope`` and its calls with arguments."""
    assigns, calls = [], []
    for node in _own_nodes(scope, (ast.Assign, ast.AnnAssign, ast.Call)):
        if isinstance(node, ast.Call):
            if node.args or node.keywords:
                calls.append(node)
        else:
            assigns.append(node)
    return assigns, calls


def _own_nodes(scope: ast.AST, kinds):
    """Nodes of ``kinds`` in ``scope``'s own body (not in functions or classes defined in it)."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, kinds):
            yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _references(function) -> frozenset[str]:
    """The dotted names ``function``'s body (nested functions too) calls or passes to a
    call (``checkpoint(self._forward, ...)``), and the attributes it reads on ``self``."""
    names = set()
    for statement in function.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Call):
                for value in (node.func, *node.args, *(k.value for k in node.keywords)):
                    dotted = _dotted(value.value if isinstance(value, ast.Starred) else value)
                    if dotted:
                        names.add(dotted)
            elif isinstance(node, ast.Attribute):
                if isinstance(node.value, ast.Name) and node.value.id == "self":
                    names.add(f"self.{node.attr}")
                elif isinstance(node.value, ast.Call) and _dotted(node.value.func) == "super":
                    names.add(f"super.{node.attr}")  # super().method(...): a base class's
    return frozenset(names)


def _bound(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _bound(e)]
    if isinstance(target, ast.Starred):
        return _bound(target.value)
    return []


def _top_level(body):
    """Module-level statements, looking into if/try blocks (optional imports)."""
    for statement in body:
        if isinstance(statement, (ast.If, ast.Try)):
            yield from _top_level(statement.body)
            yield from _top_level(statement.orelse)
            if isinstance(statement, ast.Try):
                for handler in statement.handlers:
                    yield from _top_level(handler.body)
        else:
            yield statement


def _absolute(own_package: str, module: str | None, level: int) -> str | None:
    if level == 0:
        return module
    parts = own_package.split(".") if own_package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, module] if module else base) or None


def _is_module(dotted: str, root: str, package: str) -> bool:
    """Whether ``dotted`` names a module file or package of the tree."""
    parts = dotted.split(".")
    if package:
        if parts[0] != package:
            return False
        parts = parts[1:]
    base = os.path.join(root, *parts)
    return os.path.isfile(base + ".py") or os.path.isfile(os.path.join(base, "__init__.py"))


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def with_siblings(source: str, jobs: list) -> list:
    """The jobs, each Python file with the facts the project index has about
    its siblings. A tree is its own project; a single file's project is its
    directory."""
    if os.path.isdir(source):
        root, paths = source, [job.source for job in jobs if job.kind == "python"]
    else:
        root = os.path.dirname(os.path.abspath(source))
        paths = [os.path.join(root, name) for name in sorted(os.listdir(root)) if name.endswith(".py")]
    index = ProjectIndex.build(root, paths)
    return [replace(job, siblings=index.facts(job.source)) if job.kind == "python" else job for job in jobs]


def keep_to_tensor_functions(module, analysis, siblings: SiblingFacts) -> None:
    """A file that names no torch is converted only because call sites of the project
    pass tensors to some of its functions (``siblings.tensor_params``): only those
    functions are rewritten. Elsewhere in it the receiver of ``box.size(0)`` may be
    any object with a size() method, which a rewrite to ``box.shape[0]`` would break;
    a MindSpore Tensor never reaches there by the project's own calls."""
    import libcst as cst

    from transpiler.convert.names import is_torch_name

    if not siblings.tensor_params or siblings.torch_names or siblings.cells or siblings.functions \
            or any(is_torch_name(b.qualified) for b in analysis.imports.values()):
        return
    functions = {p.rpartition(".")[0] for p in siblings.tensor_params}
    keep: set[int] = set()

    def statements(node) -> None:
        keep.add(id(node))
        for child in node.children:
            if isinstance(child, (cst.BaseStatement, cst.BaseSmallStatement, cst.BaseSuite)):
                statements(child)

    def visit(body, prefix: str, ancestors: list) -> None:
        for statement in body:
            if isinstance(statement, cst.FunctionDef) and prefix + statement.name.value in functions:
                keep.update(id(a) for a in ancestors)
                statements(statement)
            elif isinstance(statement, cst.ClassDef) and not prefix:
                visit(statement.body.body, statement.name.value + ".", [*ancestors, statement])
            elif isinstance(statement, (cst.If, cst.Try)) and not prefix:  # as _top_level reads them
                for block in [statement.body, getattr(statement, "orelse", None), *getattr(statement, "handlers", ())]:
                    if block is not None:
                        visit(block.body.body if hasattr(block.body, "body") else block.body, prefix,
                              [*ancestors, statement])

    visit(module.body, "", [])
    analysis.interesting.intersection_update(keep)
