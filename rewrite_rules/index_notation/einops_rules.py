"""einops with literal patterns -> MindSpore reshape/permute/tile/reductions
(``rearranging``) and matmul (``contraction``, for einops.einsum).

einops has no MindSpore backend; the converted code needs neither einops nor
torch, shows the operations in the diff, and compiles in graph mode (einops'
Python-side pattern cache would not). A ``Rearrange``/``Reduce`` layer becomes
a parameter-free Cell defined once per pattern in the converted module
(``EinopsRearrange(p1=..., p2=...)``): the lowered pattern is its
``construct``, the axis lengths its constructor's arguments, read when the
layer is built, as einops does.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.index_notation.build import atom
from rewrite_rules.index_notation.calls import evaluated_once, fresh_name
from rewrite_rules.index_notation.contraction import lower_einsum
from rewrite_rules.index_notation.equations import EquationError, parse_einops_equation
from rewrite_rules.index_notation.literals import argument_choices, argument_string, by_choice, not_literal, \
    operand_list
from rewrite_rules.index_notation.patterns import REDUCTIONS, parse_pattern
from rewrite_rules.index_notation.rearranging import lower_pattern
from rewrite_rules.api import ApiRule, Example, Unconvertible, code_of, define, keyword_arg, render

_NOT_SIZES = {"tensor", "pattern", "reduction"}


def _reduction_and_sizes(call, operation: str):
    reduction = None
    if operation == "reduce":
        reduction = argument_string(call, "reduction")
        if reduction not in REDUCTIONS:
            raise Unconvertible(f"reduction {reduction or 'given as a function or variable'!r}: only the literal "
                                f"names {', '.join(REDUCTIONS)} are lowered")
    return reduction, {name: value for name, value in call.values.items() if name not in _NOT_SIZES}


def _parsed(text: str, operation: str, sizes):
    try:
        return parse_pattern(text, operation, set(sizes))
    except EquationError as error:
        raise Unconvertible(f"pattern {text!r}: {error}") from None


def _pattern_and_sizes(call, operation: str):
    text = argument_string(call, "pattern")
    if text is None:
        raise not_literal("pattern", call.get("pattern"))
    reduction, sizes = _reduction_and_sizes(call, operation)
    return text, _parsed(text, operation, sizes), reduction, sizes


def _function(operation: str):
    def hook(call, ctx):
        choices = argument_choices(call, "pattern")
        if choices is None:
            raise not_literal("pattern", call.get("pattern"))
        reduction, sizes = _reduction_and_sizes(call, operation)
        tensor = call.get("tensor")
        if isinstance(tensor, (cst.List, cst.Tuple)):  # einops stacks a list of tensors
            tensor = cst.Call(ctx.ref("mindspore.ops.stack"), [cst.Arg(tensor)])

        def lowered(text):
            pattern = _parsed(text, operation, sizes)
            try:
                return evaluated_once(lambda t, s: lower_pattern(pattern, t, s, reduction), tensor, sizes)
            except EquationError as error:
                raise Unconvertible(f"pattern {text!r}: {error}") from None

        call.result = atom(by_choice(choices, lowered))  # a pattern picked at run time: one lowering per choice

    return hook


def _layer(operation: str):
    def hook(call, ctx):
        text, pattern, reduction, sizes = _pattern_and_sizes(call, operation)
        cell = _layer_cell(ctx, operation, text, reduction, pattern, list(sizes))
        call.result = cst.Call(cst.Name(cell), [keyword_arg(name, value) for name, value in sizes.items()])

    return hook


_CELL = '''
class {name}(nn.Cell):
    """einops {layer} as a parameter-free Cell."""

    pattern = {pattern!r}
{init}
    def construct(self, x):
        return LOWERED
'''
_INIT = '''
    def __init__(self, {parameters}):
        super().__init__()
{assignments}
'''


def _layer_cell(ctx, operation: str, text: str, reduction, pattern, sizes: list[str]) -> str:
    """The name of the helper Cell for one layer pattern, defined once per
    module: the lowered pattern is its ``construct`` (so graph mode compiles
    it) and the axis lengths are its constructor's arguments."""
    layer = "Rearrange" if operation == "rearrange" else "Reduce"
    shown = f"{layer}({text!r}" + (f", {reduction!r}" if reduction else "") + ")"
    sizes = sorted(sizes)
    init = _INIT.format(parameters=", ".join(sizes), assignments="\n".join(f"        self.{s} = {s}" for s in sizes))
    template = _CELL.format(name="Cell", layer=shown, pattern=text, init=init if sizes else "")
    lowered = lower_pattern(pattern, cst.Name("x"), {size: cst.Attribute(cst.Name("self"), cst.Name(size)) for size in sizes},
                            reduction)
    statement = cst.parse_statement(template).visit(_Replace("LOWERED", lowered))
    statement = statement.with_changes(bases=[cst.Arg(ctx.ref("mindspore.nn.Cell"))])
    for name, known in ctx.definitions.items():  # the same pattern again
        if code_of(known.with_changes(name=cst.Name("Cell"))) == code_of(statement):
            return name
    taken = ctx.analysis.bound_names | set(ctx.analysis.imports) | set(ctx.definitions)
    name = fresh_name((f"Einops{layer}", f"Einops{layer}2", f"Einops{layer}3"), taken)
    ctx.define(name, statement.with_changes(name=cst.Name(name)))
    return name


class _Replace(cst.CSTTransformer):
    def __init__(self, placeholder: str, node: cst.BaseExpression):
        super().__init__()
        self.placeholder, self.node = placeholder, node

    def leave_Name(self, original_node, updated_node):
        return self.node if original_node.value == self.placeholder else updated_node


def _einsum(call, ctx):
    arguments = list(call.varargs)
    if not arguments or arguments[-1].star:
        raise Unconvertible("the pattern must be the last argument, as a string literal")
    text = argument_string(call, "tensors_and_pattern", len(arguments) - 1)
    if text is None:
        raise not_literal("pattern", arguments[-1].value)
    operands = operand_list(arguments[:-1])
    try:
        call.result = atom(lower_einsum(parse_einops_equation(text), operands, ctx.ref))
    except EquationError as error:
        raise Unconvertible(f"pattern {text!r}: {error}") from None


_PACK = '''
def {name}(tensors, pattern):
    """einops.pack: the tensors joined along the axis '*' stands for, and the shapes it packed."""
    axes = pattern.split()
    star = axes.index("*")
    after = len(axes) - star - 1
    joined, shapes = [], []
    for tensor in tensors:
        end = tensor.ndim - after
        if end < star:
            raise ValueError(f"pack: a tensor of {{tensor.ndim}} dimensions does not fit the pattern {{pattern!r}}")
        shapes.append(tuple(tensor.shape[star:end]))
        joined.append(tensor.reshape(tensor.shape[:star] + (-1,) + tensor.shape[end:]))
    return CAT(joined, axis=star), shapes
'''

_UNPACK = '''
def {name}(tensor, packed_shapes, pattern):
    """einops.unpack: the tensor split along the axis '*' stands for into the packed shapes (one may hold -1)."""
    star = pattern.split().index("*")
    sizes = [PROD(shape) for shape in packed_shapes]
    if any(-1 in shape for shape in packed_shapes):
        known = sum(size for shape, size in zip(packed_shapes, sizes) if -1 not in shape)
        sizes = [tensor.shape[star] - known if -1 in shape else size for shape, size in zip(packed_shapes, sizes)]
    parts = SPLIT(tensor, sizes, star)
    return [part.reshape(tensor.shape[:star] + tuple(shape) + tensor.shape[star + 1:])
            for part, shape in zip(parts, packed_shapes)]
'''


def _packing(operation: str, source: str):
    """einops.pack / unpack through a function written above the file's code: the
    pattern (often a variable, as in pack_one(t, pattern) helpers) is read at run time."""
    def hook(call, ctx):
        names = {"CAT": "mindspore.ops.cat", "SPLIT": "mindspore.ops.split", "PROD": "math.prod"}
        text = source
        for placeholder, name in names.items():
            if placeholder in text:
                text = text.replace(placeholder, code_of(ctx.ref(name)))
        call.result = render(call, define(ctx, f"einops_{operation}", text))

    return hook


def _rule(name: str, signature: str, hook, aliases=(), notes: str = "", examples=()) -> ApiRule:
    return ApiRule(name, None, signature=signature, hook=hook, aliases=aliases, notes=notes, examples=tuple(examples))


_FROM = "from einops import rearrange, repeat, reduce\n"
_LAYERS = "from einops.layers.torch import Rearrange, Reduce\n"
_IMAGES = {"img": "randn(2, 3, 8, 12)"}


def _run(snippet: str, inputs: dict, **options) -> Example:
    return Example(snippet, inputs=inputs, **{"rtol": 1e-5, "atol": 1e-5, **options})


RULES = [
    _rule("einops.rearrange", "tensor, pattern, **axes_lengths", _function("rearrange"),
          aliases=("einops.einops.rearrange",),
          notes="literal pattern -> reshape/permute/flatten",
          examples=(
              Example(_FROM + "y = rearrange(img, 'b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=4, p2=4)",
                      "y = (\n    img.reshape(img.shape[0], img.shape[1], -1, 4, img.shape[3] // 4, 4)\n"
                      "    .permute(0, 2, 4, 3, 5, 1)\n    .flatten(1, 2)\n    .flatten(2, 4)\n)"),
              Example(_FROM + "q = rearrange(t, 'b n (h d) -> b h n d', h=self.heads)",
                      "q = t.reshape(t.shape[0], t.shape[1], self.heads, -1).swapaxes(1, 2)"),
              Example(_FROM + "out = rearrange(out, 'b h n d -> b n (h d)')", "out = out.swapaxes(1, 2).flatten(2, 3)"),
              Example(_FROM + "y = rearrange(self.proj(x), 'b n (h d) -> b h n d', h=8)",
                      "y = (lambda x: x.reshape(x.shape[0], x.shape[1], 8, -1).swapaxes(1, 2))(self.proj(x))"),
              Example(_FROM + "y = rearrange(x, pattern)", marked="not a string literal"),
              # vector-quantize's cross-entropy loss: the pattern picked by the codebook layout
              _run(_FROM + "for separate in (True, False):\n    if separate:\n        eq = 'c b n -> b n c'\n"
                   "    else:\n        eq = '1 (b h) n -> b n h'\n    out = rearrange(x, eq, b=2)\nresult = out",
                   {"x": "randn(1, 2, 5)"}),
              Example(_FROM + "y = rearrange(x, 'b c -> b c d')", marked="identifiers only on one side"),
              Example(_FROM + "y = rearrange(x, 'b (c d) -> b c d')", marked="could not infer sizes"),
              Example(_FROM + "y = rearrange(x, 'b c -> c b', **lengths)", marked="unpacked with **"),
              _run(_FROM + "result = rearrange(img, 'b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=4, p2=2)", _IMAGES),
              _run(_FROM + "result = rearrange(x, 'b n (h d) -> b h n d', h=2)", {"x": "randn(2, 5, 6)"}),
              _run(_FROM + "result = rearrange(x, 'b h n d -> b n (h d)')", {"x": "randn(2, 3, 5, 4)"}),
              _run(_FROM + "heads = 3\nresult = rearrange(x * 2, 'b n (three h d) -> three b h n d', three=3, h=heads)",
                   {"x": "randn(2, 5, 18)"}),
              _run(_FROM + "result = rearrange(x, 'b c h w -> b (c h w)')", {"x": "randn(2, 3, 4, 5)"}),
              _run(_FROM + "result = rearrange(x, 'b 1 c -> b c 1')", {"x": "randn(2, 1, 3)"}),
              _run(_FROM + "result = rearrange(x, '... (h d) -> ... h d', d=3)", {"x": "randn(2, 4, 6)"}),
              _run(_FROM + "result = rearrange(x, 'b ... c -> b c ...')", {"x": "randn(2, 3, 4, 5)"}),
              _run(_FROM + "result = rearrange(x, 'b ... -> b (...)')", {"x": "randn(2, 3, 4)"}),
              _run(_FROM + "result = rearrange([x, y], 'n b c -> b (n c)')", {"x": "randn(2, 3)", "y": "randn(2, 3)"}),
              _run("import einops\nresult = einops.rearrange(x, '(b1 b2) c -> b2 c b1', b1=2)", {"x": "randn(6, 3)"}),
          )),
    _rule("einops.repeat", "tensor, pattern, **axes_lengths", _function("repeat"), aliases=("einops.einops.repeat",),
          notes="literal pattern -> indexing with None, tile, flatten",
          examples=(
              Example(_FROM + "cls = repeat(self.cls_token, '() n d -> b n d', b=b)", "cls = self.cls_token.tile((b, 1, 1))"),
              Example(_FROM + "cls = repeat(self.cls_token, '1 1 d -> b 1 d', b=b)", "cls = self.cls_token.tile((b, 1, 1))"),
              Example(_FROM + "y = repeat(x, 'h w -> h (w r)', r=r)", "y = x[..., None].tile((1, 1, r)).flatten(1, 2)"),
              Example(_FROM + "y = repeat(x, 'b c -> b c r')", marked="specify sizes for new axes"),
              Example(_FROM + "y = repeat(x, '... c -> r ... c', r=2)", "y = x[..., :, None].tile((1, 2)).movedim(-1, 0)"),
              _run(_FROM + "result = repeat(x, '() n d -> b n d', b=3)", {"x": "randn(1, 4, 5)"}),
              _run(_FROM + "result = repeat(x, '1 1 d -> b 1 d', b=2)", {"x": "randn(1, 1, 5)"}),
              _run(_FROM + "result = repeat(x, 'h w -> h (w r)', r=2)", {"x": "randn(3, 4)"}),
              _run(_FROM + "result = repeat(x, 'h w -> (r h) w', r=2)", {"x": "randn(3, 4)"}),
              _run(_FROM + "result = repeat(x, 'n d -> b n d 2', b=2)", {"x": "randn(3, 4)"}),
              _run(_FROM + "result = repeat(x, '... c -> ... c r', r=2)", {"x": "randn(2, 3, 4)"}),
              _run(_FROM + "result = repeat(x, '... c -> r ... c', r=2)", {"x": "randn(2, 3, 4)"}),
          )),
    _rule("einops.reduce", "tensor, pattern, reduction, **axes_lengths", _function("reduce"),
          aliases=("einops.einops.reduce",),
          notes="literal pattern and reduction (mean/sum/max/min/prod/any/all) -> MindSpore reductions",
          examples=(
              Example(_FROM + "y = reduce(x, 'b n d -> b d', 'mean')", "y = x.mean(1)"),
              Example(_FROM + "y = reduce(x, 'b c h w -> b c 1 1', 'max')", "y = x.amax((2, 3), True)"),
              Example(_FROM + "y = reduce(x, 'b c (h 2) (w 2) -> b c h w', 'max')",
                      "y = x.reshape(x.shape[0], x.shape[1], -1, 2, x.shape[3] // 2, 2).amax(axis=(3, 5))"),
              Example(_FROM + "y = reduce(x, 'b n d -> b d', torch.logsumexp)", marked="only the literal names"),
              _run(_FROM + "result = reduce(x, 'b n d -> b d', 'mean')", {"x": "randn(2, 5, 4)"}),
              _run(_FROM + "result = reduce(x, 'b c h w -> b c () ()', 'mean')", {"x": "randn(2, 3, 4, 5)"}),
              _run(_FROM + "result = reduce(x, 'b c (h h2) (w w2) -> b c h w', 'max', h2=2, w2=2)", {"x": "randn(2, 3, 4, 6)"}),
              _run(_FROM + "result = reduce(x, 'b c h w -> b c', 'sum')", {"x": "randn(2, 3, 4, 5)"}),
              _run(_FROM + "result = reduce(x, 'b c h w -> b 1 c', 'min')", {"x": "randn(2, 3, 4, 5)"}),
              _run(_FROM + "result = reduce(x, 'b c h -> c', 'prod')", {"x": "uniform(0.5, 1.5, (2, 3, 4))"}),
              _run(_FROM + "result = reduce(x, '... h -> h', 'mean')", {"x": "randn(2, 3, 4)"}),
              _run(_FROM + "result = reduce(x, 'b ... -> b', 'sum')", {"x": "randn(2, 3, 4)"}),
              _run(_FROM + "result = reduce(x, 'b n -> b', 'any')", {"x": "bool(3, 4)"}),
              _run(_FROM + "result = reduce(x, 'b n -> n', 'all')", {"x": "bool(3, 4)"}),
          )),
    _rule("einops.einsum", "*tensors_and_pattern", _einsum, aliases=("einops.einops.einsum",),
          notes="literal pattern -> matmul/permute/sum/diagonal, like torch.einsum",
          examples=(
              Example("from einops import einsum\ns = einsum(q, k, 'b h i d, b h j d -> b h i j')",
                      "s = ops.matmul(q, k.swapaxes(-2, -1))"),
              Example("from einops import einsum\ns = einsum(q, k, pattern)", marked="not a string literal"),
              _run("from einops import einsum\nresult = einsum(q, k, 'batch head i d, batch head j d -> batch head i j')",
                   {"q": "randn(2, 3, 4, 5)", "k": "randn(2, 3, 6, 5)"}, rtol=1e-4),
              _run("from einops import einsum\nresult = einsum(x, w, y, 'b n, a n m, b m -> b a')",
                   {"x": "randn(2, 3)", "w": "randn(4, 3, 5)", "y": "randn(2, 5)"}, rtol=1e-4),
          )),
    _rule("einops.layers.torch.Rearrange", "pattern, **axes_lengths", _layer("rearrange"),
          notes="a parameter-free Cell defined once per pattern in the converted module (EinopsRearrange): the lowered "
                "pattern is its construct, the axis lengths its constructor's arguments",
          examples=(
              Example(_LAYERS + "to_patches = Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=p, p2=p)",
                      'class EinopsRearrange(nn.Cell):\n'
                      '    """einops Rearrange(\'b c (h p1) (w p2) -> b (h w) (p1 p2 c)\') as a parameter-free Cell."""\n\n'
                      '    pattern = "b c (h p1) (w p2) -> b (h w) (p1 p2 c)"\n\n'
                      "    def __init__(self, p1, p2):\n        super().__init__()\n        self.p1 = p1\n        self.p2 = p2\n\n"
                      "    def construct(self, x):\n        return (\n            x.reshape(\n"
                      "                x.shape[0], x.shape[1], -1, self.p1, x.shape[3] // self.p2, self.p2\n            )\n"
                      "            .permute(0, 2, 4, 3, 5, 1)\n            .flatten(1, 2)\n            .flatten(2, 4)\n        )\n\n\n"
                      "to_patches = EinopsRearrange(p1=p, p2=p)"),
              Example(_LAYERS + "layer = Rearrange(pattern)", marked="not a string literal"),
              _run(_LAYERS + "layer = Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=4, p2=2)\n"
                   "result = layer(img)", _IMAGES),
              # the lengths are read when the layer is built, as einops does
              _run(_LAYERS + "p = 4\nnet = nn.Sequential(Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=p, p2=p), "
                   "nn.ReLU())\np = 2\nresult = net(img)", _IMAGES),
          )),
    _rule("einops.layers.torch.Reduce", "pattern, reduction, **axes_lengths", _layer("reduce"),
          notes="a parameter-free Cell defined once per pattern in the converted module (EinopsReduce): the lowered "
                "reduction is its construct",
          examples=(
              Example(_LAYERS + "pool = Reduce('b n d -> b d', 'mean')",
                      'class EinopsReduce(nn.Cell):\n    """einops Reduce(\'b n d -> b d\', \'mean\') as a parameter-free Cell."""\n\n'
                      '    pattern = "b n d -> b d"\n\n    def construct(self, x):\n        return x.mean(1)\n\n\n'
                      "pool = EinopsReduce()"),
              _run(_LAYERS + "layer = Reduce('b n d -> b d', 'mean')\nresult = layer(x)", {"x": "randn(2, 5, 4)"}),
              _run(_LAYERS + "layer = Reduce('b c (h 2) (w 2) -> b c h w', reduction='max')\nresult = layer(x)",
                   {"x": "randn(2, 3, 4, 6)"}),
          )),
    _rule("einops.pack", "tensors, pattern", _packing("pack", _PACK), aliases=("einops.packing.pack",),
          notes="einops_pack, written above the file's code: the tensors reshaped to one axis where '*' stands and "
                "joined along it (ops.cat), with the shapes it packed; the pattern is read at run time",
          examples=(
              _run("from einops import pack, unpack\npacked, ps = pack([x, y], 'b * d')\n"
                   "a, b = unpack(packed * 2, ps, 'b * d')\nresult = (packed, a, b)",
                   {"x": "randn(2, 3, 4, 5)", "y": "randn(2, 5)"}),
          )),
    _rule("einops.unpack", "tensor, packed_shapes, pattern", _packing("unpack", _UNPACK),
          aliases=("einops.packing.unpack",),
          notes="einops_unpack, written above the file's code: ops.split along the axis '*' stands for by the "
                "packed shapes (one may hold -1), each part reshaped to its shape",
          examples=(
              _run("from einops import pack, unpack\npattern = '* n'\npacked, ps = pack([x], pattern)\n"
                   "out, = unpack(packed, ps, pattern)\nrest = unpack(packed, [(2,), (-1,)], pattern)\n"
                   "result = (packed, out, *rest)", {"x": "randn(2, 3, 4)"}),
          )),
    ApiRule("einops.parse_shape", None, notes="einops.parse_shape has no lowering yet; read x.shape by hand"),
    ApiRule("einops.layers.torch.EinMix", None, notes="EinMix has weights; no MindSpore layer is generated for it"),
]

