"""Statements around a training loop that are rewritten as a whole:

    torch.backends.cudnn.benchmark = True       (removed: no MindSpore meaning; reported)
    torch.backends.cudnn.deterministic = True   mindspore.set_deterministic(True)
    torch.set_float32_matmul_precision("high")  (removed: TF32 is not a MindSpore setting; reported)
    model.features.requires_grad_(False)        for param in model.features.get_parameters():
                                                    param.requires_grad = False
    ctx = nullcontext() if cpu else autocast()  ctx = nullcontext()   (mixed precision goes on the network)
    a, b = random_split(ds, [8, 2],             mindspore.dataset.config.set_seed(42)
        generator=torch.Generator()             a, b = GeneratorDataset(ds, ...).split([8, 2], randomize=True)
            .manual_seed(42))
    print(f"loss {loss:.3f}")                   print(f"loss {float(loss):.3f}")
    save_image(fake, path, normalize=True)      the grid laid out by NumPy, written by Pillow (rewrite_rules/vision/image_grids.py)

The last: torch formats a 0-d tensor with a format spec (through ``.item()``),
MindSpore's Tensor takes no format spec. A value formatted as a float
(``e f g %``) or an integer (``d``) goes through ``float()``/``int()``,
which a Python number passes unchanged and a one-element tensor converts;
values the file shows are Python numbers are left alone.

Planned on the original tree before the traversal (which statements, and the
torch references they hold, so no rule marks them); applied as the traversal
leaves each statement.
"""

from __future__ import annotations

import string

import libcst as cst

from transpiler.convert.engine import code_of
from transpiler.convert.structural.amp import is_nullcontext
from transpiler.convert.structural.fresh_names import fresh_name
from transpiler.convert.structural.image_grids import MAKE_GRID, SAVE_IMAGE, GridBuilder, GridProblem, arguments
from transpiler.convert.structural.numbers import Numbers
from transpiler.convert.structural.provenance import AUTOCASTS, CELL, LAYER, WRAPPER, provenance_of, remember_module
from transpiler.convert.walk import LAYOUT_TYPES, StatementVisitor, walk

_BACKENDS = "torch.backends."
_SPLITS = frozenset({"torch.utils.data.random_split", "torch.utils.data.dataset.random_split"})
SPLIT_SEEDS = "random_split seeds"  # ctx.facts key: ids of random_split calls whose generator seed is set before
_LAYERS = "torch.nn."
_DETERMINISTIC = frozenset({"torch.backends.cudnn.deterministic"})
_DROPPED_CALLS = frozenset({"torch.set_float32_matmul_precision"})


class Surroundings:
    def __init__(self, rewriter):
        self.rewriter = rewriter
        self.ctx = rewriter.ctx
        self.plans: dict[int, tuple] = {}  # id(original statement) -> (rewrite, data)

    def plan(self, module: cst.Module) -> None:
        if not self.ctx.analysis.references:
            return  # no torch in this file: no tensors to format, nothing to rewrite
        remember_module(self.ctx, module)
        references = set(self.ctx.analysis.references.values())
        finder = _Statements()
        walk(module, finder, prune=LAYOUT_TYPES)
        numbers = None
        for statement, formats in finder.formats:
            numbers = numbers or Numbers(provenance_of(self.ctx, module))
            flagged = [i for i, (value, kind) in enumerate(formats) if kind and not numbers.is_number(value)]
            if flagged:
                self.ctx.analysis.interesting.update(id(s) for s in finder.ancestors[id(statement)])
                self.plans[id(statement)] = (self._format_values, (flagged, [kind for _, kind in formats]))
        splits = bool(references & _SPLITS)
        images = bool(references & {MAKE_GRID, SAVE_IMAGE})
        grids = None
        for statement in finder.lines:
            if splits:
                self._plan_split_seed(statement)
            if images:
                grids = self._plan_grid(statement, grids)
            small = statement.body[0] if len(statement.body) == 1 else None
            if isinstance(small, cst.Assign):
                self._plan_assignment(statement, small)
            elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                self._plan_call(statement, small.value)

    def _plan_assignment(self, statement, assign: cst.Assign) -> None:
        qualified = [self.ctx.analysis.qualified(t.target) for t in assign.targets]
        if qualified and all(q is not None and q.startswith(_BACKENDS) for q in qualified):
            for target in assign.targets:
                self.rewriter.handled.add(id(target.target))
            self.plans[id(statement)] = (self._flag, qualified)
            return
        value = assign.value
        if isinstance(value, cst.IfExp):
            analysis = self.ctx.analysis
            branches = (value.body, value.orelse)
            autocast = [b for b in branches if isinstance(b, cst.Call) and analysis.qualified(b.func) in AUTOCASTS]
            plain = [b for b in branches if is_nullcontext(b, analysis)]
            if len(autocast) == 1 and len(plain) == 1:
                self.plans[id(statement)] = (self._context, 0 if branches[0] is plain[0] else 1)

    def _plan_split_seed(self, statement) -> None:
        """A random_split seeded by a torch.Generator: MindSpore's split follows the dataset seed."""
        finder = _Calls(self.ctx.analysis, _SPLITS)
        walk(statement, finder, prune=LAYOUT_TYPES)
        for call in finder.found:
            seed = _generator_seed(call, self.ctx, provenance_of(self.ctx))
            if seed is not None:
                seed, made = seed
                self.rewriter.handled.add(id(made))  # dropped with the generator: never marked
                self.ctx.facts.setdefault(SPLIT_SEEDS, set()).add(id(call))
                self.plans[id(statement)] = (self._seeded, seed)

    def _seeded(self, original, result, seed: cst.BaseExpression):
        call = cst.Call(self.ctx.ref("mindspore.dataset.config.set_seed"), [cst.Arg(seed.deep_clone())])
        self.ctx.converted(original, "torch.Generator", "random_split generator seed -> "
                                                        "mindspore.dataset.config.set_seed before the split")
        seeding = cst.SimpleStatementLine([cst.Expr(call)], leading_lines=getattr(result, "leading_lines", ()))
        self.ctx.to_format.add(seeding)
        if hasattr(result, "leading_lines"):
            result = result.with_changes(leading_lines=())
            self.ctx.to_format.add(result)
        return cst.FlattenSentinel([seeding, result])

    def _plan_grid(self, statement, names):
        """save_image(...) statements and make_grid(...) values (torchvision.utils)."""
        finder = _Calls(self.ctx.analysis, {MAKE_GRID, SAVE_IMAGE})
        walk(statement, finder, prune=LAYOUT_TYPES)
        if not finder.found:
            return names
        if names is None:
            taken = set(self.ctx.analysis.bound_names)
            names = (fresh_name("grid_images", taken), fresh_name("grid", taken))
        call = finder.found[0]
        small = statement.body[0] if len(statement.body) == 1 else None
        is_save = self.ctx.analysis.qualified(call.func) == SAVE_IMAGE
        if len(finder.found) > 1 or (is_save and not (isinstance(small, cst.Expr) and small.value is call)):
            return names  # left to the rule, which marks it
        try:
            values = arguments(call, _SAVE_PARAMS if is_save else _GRID_PARAMS)
            GridBuilder(self.ctx, *names).grid_statements(values)  # the literal arguments it needs are there
        except GridProblem:
            return names
        self.rewriter.handled.add(id(call))
        self.plans[id(statement)] = (self._grid, (call, is_save, names))
        return names

    def _grid(self, original, result, data):
        call, is_save, names = data
        converted = _find_call(result, call.func)
        if converted is None:
            return result
        self.ctx.consume(call.func)
        builder = GridBuilder(self.ctx, *names)
        values = arguments(converted, _SAVE_PARAMS if is_save else _GRID_PARAMS)
        lines = builder.grid_statements(values)
        api = SAVE_IMAGE if is_save else MAKE_GRID
        self.ctx.converted(original, api, f"{api} -> NumPy (the grid)"
                                          + (" + Pillow (the file)" if is_save else ""))
        if is_save:
            lines.append(builder.save_statement(values))
        else:
            result = result.visit(_ReplaceCall(converted, builder.grid_value()))
            lines.append(result)
        for line in lines[:-1] if not is_save else lines:
            self.ctx.to_format.add(line)
        leading = getattr(result, "leading_lines", ())
        lines[0] = lines[0].with_changes(leading_lines=leading)
        if not is_save and len(lines) > 1 and hasattr(lines[-1], "leading_lines"):
            lines[-1] = lines[-1].with_changes(leading_lines=())
            self.ctx.to_format.add(lines[-1])
        return cst.FlattenSentinel(lines)

    def _plan_call(self, statement, call: cst.Call) -> None:
        analysis = self.ctx.analysis
        if analysis.qualified(call.func) in _DROPPED_CALLS:
            self.rewriter.handled.add(id(call))
            self.ctx.consume(call.func)
            self.plans[id(statement)] = (self._dropped_call, analysis.qualified(call.func))
            return
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "requires_grad_" and len(call.args) <= 1:
            provenance = provenance_of(self.ctx)
            if provenance is not None and provenance.kind(call.func.value) in (CELL, LAYER, WRAPPER):
                self.rewriter.handled.add(id(call))
                self.ctx.analysis.interesting.add(id(statement))
                self.plans[id(statement)] = (self._freeze, None)

    # -- as the traversal leaves the statements ------------------------------------
    def leave(self, original, result):
        planned = self.plans.pop(id(original), None)
        if planned is None:
            return result
        rewrite, data = planned
        if isinstance(result, cst.FlattenSentinel) and rewrite == self._format_values:
            # marked on the way, with the imports it needs above it: the statement among them
            # is formatted all the same (a second conversion, finding the imports, would)
            nodes = [self._rewritten(original, node, rewrite, data) if _is_the_statement(node) else node
                     for node in result.nodes]
            return cst.FlattenSentinel(nodes)
        if not isinstance(result, cst.SimpleStatementLine):
            return result  # marked on the way (a FlattenSentinel with its imports): left as it is
        return self._rewritten(original, result, rewrite, data)

    def _rewritten(self, original, result, rewrite, data):
        rewritten = rewrite(original, result, data)
        if isinstance(rewritten, cst.SimpleStatementLine) and rewritten is not result:
            self.ctx.to_format.add(rewritten)  # black formats changed statements
        return rewritten

    def _flag(self, original, result, qualified: list[str]):
        for target in original.body[0].targets:
            self.ctx.consume(target.target)
        if all(q in _DETERMINISTIC for q in qualified):
            value = result.body[0].value
            call = cst.Call(self.ctx.ref("mindspore.set_deterministic"), [cst.Arg(value)])
            self.ctx.converted(original, qualified[0], f"{qualified[0]} = ... -> mindspore.set_deterministic(...)")
            self.ctx.to_format.add(result)
            return result.with_changes(body=[cst.Expr(call)])
        for name in qualified:
            self.ctx.converted(original, name, f"{name} = ... removed: a CUDA backend setting with no MindSpore "
                                               "meaning (MindSpore chooses its kernels itself)")
        return self.rewriter.placeholders.make(result)

    def _dropped_call(self, original, result, qualified: str):
        self.ctx.converted(original, qualified, f"{qualified}(...) removed: TF32 matrix products are not a MindSpore "
                                                "setting")
        return self.rewriter.placeholders.make(result)

    def _freeze(self, original, result, _):
        call = result.body[0].value
        flag = call.args[0].value if call.args else cst.Name("True")
        if call.args and call.args[0].keyword is not None and call.args[0].keyword.value != "requires_grad":
            return result
        param = cst.Name("param")
        body = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Attribute(param, cst.Name("requires_grad")))],
                                                   flag)])
        loop = cst.For(
            target=param,
            iter=cst.Call(cst.Attribute(call.func.value, cst.Name("get_parameters")), []),
            body=cst.IndentedBlock([body]),
            leading_lines=result.leading_lines,
        )
        self.ctx.converted(original, "torch.nn.Module.requires_grad_",
                           f"{code_of(original.body[0].value)} -> requires_grad set on each of its Parameters")
        return loop

    def _context(self, original, result, plain_index: int):
        value = result.body[0].value
        plain = value.body if plain_index == 0 else value.orelse
        self.ctx.converted(original, "torch.autocast", "autocast-or-nullcontext -> nullcontext(): mixed precision is "
                                                       "set on the network where it trains")
        self.ctx.to_format.add(result)
        return result.with_changes(body=[result.body[0].with_changes(value=plain)])


    def _format_values(self, original, result, data):
        flagged, kinds = data
        rewritten = result.visit(_FormatValues(set(flagged), kinds))
        self.ctx.converted(original, "torch.Tensor.__format__", "a value formatted with a format spec goes through "
                                                                "float()/int(): MindSpore's Tensor takes no format spec")
        return rewritten


_FLOAT_SPECS = frozenset("eEfFgG%")
_INT_SPECS = frozenset("d")


def format_kind(spec: cst.FormattedString | None) -> str | None:
    """``float`` or ``int`` for a literal format spec that formats a number that way."""
    if not spec or not all(isinstance(part, cst.FormattedStringText) for part in spec):
        return None
    text = "".join(part.value for part in spec)
    if not text:
        return None
    if text[-1] in _FLOAT_SPECS:
        return "float"
    if text[-1] in _INT_SPECS:
        return "int"
    return None


def format_call_values(call: cst.Call) -> list:
    """``"... {:.6f} ...".format(a, b, name=c)``: each argument with ``float``/``int`` when every
    field that formats it has that kind of number spec, else None; [] for any other call."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "format"
            and isinstance(func.value, (cst.SimpleString, cst.ConcatenatedString))):
        return []
    template = func.value.evaluated_value
    if not isinstance(template, str) or any(arg.star for arg in call.args):
        return []
    try:
        fields = [(name, spec, conversion) for _, name, spec, conversion in string.Formatter().parse(template)
                  if name is not None]
    except ValueError:
        return []
    kinds: dict = {}
    automatic = 0
    for name, spec, conversion in fields:
        key = name.split(".", 1)[0].split("[", 1)[0]
        if key == "":
            key, automatic = automatic, automatic + 1
        elif key.isdigit():
            key = int(key)
        kind = _spec_kind(spec) if name in ("", str(key)) and not conversion else None
        kinds[key] = kind if kinds.get(key, kind) == kind else None
    values, position = [], 0
    for arg in call.args:
        if arg.keyword is None:
            key, position = position, position + 1
        else:
            key = arg.keyword.value
        values.append((arg.value, kinds.get(key)))
    return values


def _spec_kind(spec: str) -> str | None:
    if not spec or "{" in spec:
        return None
    return "float" if spec[-1] in _FLOAT_SPECS else "int" if spec[-1] in _INT_SPECS else None


def _generator_seed(call: cst.Call, ctx, provenance):
    """S in ``generator=torch.Generator().manual_seed(S)`` (written there or in the variable passed)."""
    generator = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "generator"), None)
    if generator is None and len([a for a in call.args if a.keyword is None]) == 3:
        generator = call.args[2].value
    if isinstance(generator, cst.Name) and provenance is not None:
        values = provenance.values_of(generator) or []
        generator = values[0] if len(values) == 1 else None
    if not isinstance(generator, cst.Call) or not isinstance(generator.func, cst.Attribute):
        return None
    made = generator.func.value
    if generator.func.attr.value != "manual_seed" or len(generator.args) != 1 or not isinstance(made, cst.Call):
        return None
    if ctx.analysis.qualified(made.func) != "torch.Generator":
        return None
    ctx.consume(made.func)
    return generator.args[0].value, made


_GRID_PARAMS = ("tensor", "nrow", "padding", "normalize", "value_range", "scale_each", "pad_value")
_SAVE_PARAMS = ("tensor", "fp", "nrow", "padding", "normalize", "value_range", "scale_each", "pad_value", "format")


def _find_call(tree, func: cst.BaseExpression) -> cst.Call | None:
    finder = _SameCallee(code_of(func))
    tree.visit(finder)
    return finder.found


class _SameCallee(cst.CSTVisitor):
    def __init__(self, callee: str):
        self.callee = callee
        self.found = None

    def visit_Call(self, node: cst.Call) -> None:
        if self.found is None and code_of(node.func) == self.callee:
            self.found = node


class _ReplaceCall(cst.CSTTransformer):
    def __init__(self, call: cst.Call, value: cst.BaseExpression):
        super().__init__()
        self.call = call
        self.value = value

    def leave_Call(self, original_node, updated_node):
        return self.value if original_node is self.call else updated_node


class _Calls(cst.CSTVisitor):
    def __init__(self, analysis, apis):
        self.analysis = analysis
        self.apis = apis
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        if self.analysis.qualified(node.func) in self.apis:
            self.found.append(node)


def _is_the_statement(node) -> bool:
    """Not one of the imports placed above a marked statement."""
    return isinstance(node, cst.SimpleStatementLine) and not all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in node.body)


class _Statements(StatementVisitor):
    """Simple statement lines, and in each the formatted values of its f-strings that have a number spec."""

    def __init__(self):
        super().__init__()
        self.lines: list[cst.SimpleStatementLine] = []
        self.formats: list[tuple[cst.SimpleStatementLine, list]] = []
        self.ancestors: dict[int, tuple] = {}
        self._current: list | None = None

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        self.lines.append(node)
        self._current = []
        return True

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        if self._current and any(kind is not None for _, kind in self._current):
            self.formats.append((original_node, self._current))
            self.ancestors[id(original_node)] = tuple(self.statements)
        self._current = None

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        if self._current is not None:
            self._current.append((node.expression, format_kind(node.format_spec)))

    def visit_Call(self, node: cst.Call) -> None:
        if self._current is not None:
            self._current.extend(format_call_values(node))


class _FormatValues(cst.CSTTransformer):
    """Wraps the flagged formatted values (counted in the order the walk meets them) in float()/int()."""

    def __init__(self, flagged: set[int], kinds: list):
        super().__init__()
        self.flagged = flagged
        self.kinds = kinds
        self.index = 0
        self._open: list[int] = []
        self._calls: list[tuple[int, int]] = []  # (index of the first argument, count) of each open call

    def visit_FormattedStringExpression(self, node) -> None:
        self._open.append(self.index)
        self.index += 1

    def leave_FormattedStringExpression(self, original_node, updated_node):
        wrapped = self._wrapped(self._open.pop(), updated_node.expression)
        return updated_node.with_changes(expression=wrapped)

    def visit_Call(self, node) -> None:
        self._calls.append((self.index, len(format_call_values(node))))
        self.index += self._calls[-1][1]

    def leave_Call(self, original_node, updated_node):
        base, count = self._calls.pop()
        if not count:
            return updated_node
        args = [arg.with_changes(value=self._wrapped(base + i, arg.value)) for i, arg in enumerate(updated_node.args)]
        return updated_node.with_changes(args=args)

    def _wrapped(self, index: int, expression: cst.BaseExpression) -> cst.BaseExpression:
        if index not in self.flagged or index >= len(self.kinds) or self.kinds[index] is None:
            return expression
        return cst.Call(cst.Name(self.kinds[index]), [cst.Arg(expression)])

