"""torch.cat/concat/concatenate/stack/flatten/matmul: dim-taking tensor functions.

Mixed dtypes (measured on MindSpore 2.10 CPU): ``ops.cat`` promotes as torch does
(int64 + float32, float16 + float32, bool + float16 ...), but ``ops.stack`` of
tensors of different dtypes fails ("KernelMod Init Failed: Concat"). Where the
source shows every stacked tensor's dtype and they mix integers or bools with
floats, or float widths, the tensors are cast to the float dtype torch promotes
to (the widest shown), which is exactly torch's result; otherwise they pass as
they are.

torch's cat skips 1-D tensors with no elements whatever the other tensors' shape
(a legacy rule older code relies on: ``mg = torch.tensor([])``, then
``mg = torch.cat((mg, part), dim=1)`` in a loop, as Time-Series-Library's MICN
does); MindSpore's refuses them ("element rank must be same"). Where the file
assigns one of the joined names such an empty tensor, the cat leaves it out
while it is empty.
"""

from __future__ import annotations

from rewrite_rules.cases import P
from rewrite_rules.helpers import OUT
import libcst as cst

from rewrite_rules.api import Arg, Example, assigned_values, code_of, explain
from rewrite_rules.torch_functions.integer_inputs import FLOAT_ORDER, float_dtype, is_integer_tensor, source_argument
from rewrite_rules.torch_functions.builders import IN, case, fn, ms
from rewrite_rules.torch_functions.sparse import EDGES, sparse_product

AB = {"a": "randn(2, 3)", "b": "randn(2, 3)"}
_TENSORS = P("tensors", "[a, b]")


def _written_tensors(call):
    """(the tensors as written, as converted) when the call joins a list or tuple written out
    element by element (no ``*``); None otherwise."""
    source, tensors = source_argument(call, "tensors"), call.get("tensors")
    if not isinstance(source, (cst.List, cst.Tuple)) or not isinstance(tensors, type(source)) or \
            len(source.elements) != len(tensors.elements) or \
            any(isinstance(e, cst.StarredElement) for e in source.elements):
        return None
    return source, tensors


def _promoted(call, ctx):
    """Cast the stacked tensors to the float dtype torch promotes to, where the source shows a mix."""
    written = _written_tensors(call)
    if written is None:
        return
    source, tensors = written
    kinds = [float_dtype(e.value, ctx) or ("integer" if is_integer_tensor(e.value, ctx) else None)
             for e in source.elements]
    floats = [k for k in kinds if k in FLOAT_ORDER]
    if None in kinds or not floats or len(set(kinds)) < 2:
        return
    target = max(floats, key=FLOAT_ORDER.index)
    dtype = code_of(ctx.ref(f"mindspore.{target}"))
    elements = []
    for kind, element in zip(kinds, tensors.elements):
        if kind != target:
            text = code_of(element.value)
            if not isinstance(element.value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
                text = f"({text})"
            element = element.with_changes(value=cst.parse_expression(f"{text}.astype({dtype})"))
        elements.append(element)
    call.set("tensors", tensors.with_changes(elements=elements))


_EMPTY_DATA = frozenset({"torch.tensor", "torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.as_tensor"})
_EMPTY_SHAPED = frozenset({"torch.empty", "torch.zeros", "torch.ones"})
_SKIPPED = "torch's cat skips an empty 1-D tensor; MindSpore's refuses it, so it is left out while empty"


def _is_empty_vector(value, ctx) -> bool:
    """``torch.tensor([])``, ``torch.Tensor()``, ``torch.empty(0)``: a 1-D tensor of no elements."""
    if not isinstance(value, cst.Call):
        return False
    qualified = ctx.analysis.qualified(value.func)
    positional = [a.value for a in value.args if a.keyword is None and not a.star]
    if qualified in _EMPTY_DATA:
        if not value.args:
            return qualified != "torch.tensor"
        return len(positional) == 1 and isinstance(positional[0], cst.List) and not positional[0].elements
    return qualified in _EMPTY_SHAPED and len(positional) == 1 and code_of(positional[0]) in ("0", "(0,)", "[0]")


def _skipping_empty(call, ctx):
    """``torch.cat((mg, part), 1)`` where mg starts as ``torch.tensor([])``:
    ``ops.cat((mg, part) if mg.shape != (0,) else (part,), axis=1)``."""
    written = _written_tensors(call)
    if written is None or len(written[0].elements) < 2:
        return
    source, tensors = written
    empty = [i for i, e in enumerate(source.elements) if isinstance(e.value, cst.Name)
             and any(_is_empty_vector(v, ctx) for v in assigned_values(ctx, e.value) or ())]
    if len(empty) != 1:
        return
    name = code_of(tensors.elements[empty[0]].value)
    rest = [e.value for i, e in enumerate(tensors.elements) if i != empty[0]]
    others = cst.Tuple([cst.Element(v) for v in rest]) if isinstance(source, cst.Tuple) else \
        cst.List([cst.Element(v) for v in rest])
    call.set("tensors", explain(ctx, cst.IfExp(
        test=cst.parse_expression(f"{name}.shape != (0,)"), body=tensors, orelse=others), _SKIPPED))


def _joined(name, target, dim_name="dim", examples=(), hook=None):
    return fn(
        f"torch.{name}",
        ms(target),
        f"tensors, {dim_name}=0, *, out=None",
        args={dim_name: "axis", "out": OUT},
        params=[_TENSORS, P(dim_name, "1", default=True)],
        inputs=AB,
        positional=2,
        hook=hook,
        extra=(*examples, case(f"result = torch.{name}((a, b), -1)", AB)),
    )


RULES = [
    _joined(
        "cat",
        "cat",
        hook=_skipping_empty,
        examples=(
            Example("mg = torch.tensor([])\nfor part in parts:\n    mg = torch.cat((mg, part), dim=1)",
                    "mg = mindspore.Tensor([])\nfor part in parts:\n    # " + _SKIPPED
                    + "\n    mg = ops.cat((mg, part) if mg.shape != (0,) else (part,), axis=1)"),
            case("mg = torch.tensor([])\nfor part in (a, b):\n    mg = torch.cat((mg, part.unsqueeze(1)), dim=1)\n"
                 "result = mg", AB),
            case("out = torch.Tensor()\nfor part in (a, b, a):\n    out = torch.cat([out, part], 0)\nresult = out", AB),
            Example("y = torch.cat([a, b], dim=1)", "y = ops.cat([a, b], axis=1)"),
            Example("y = torch.cat([a, torch.zeros(2, 3)])", "y = ops.cat([a, ops.zeros((2, 3))])"),
            case("result = torch.cat([a, torch.zeros(2, 3)])", AB),
        ),
    ),
    _joined("concat", "cat"),
    _joined("concatenate", "cat", dim_name="axis"),
    _joined("stack", "stack", hook=_promoted, examples=(
        Example("y = torch.stack((a, b), 0)", "y = ops.stack((a, b), 0)"),
        Example("y = torch.stack([torch.arange(3), torch.ones(3)], dim=1)",
                "y = ops.stack([ops.arange(3).astype(mindspore.float32), ops.ones(3)], axis=1)"),
        case("result = torch.stack([torch.arange(3), torch.ones(3)], dim=1)"),
        case("result = torch.stack([a.half(), b.float(), (a > 0).long()])", AB),
        case("result = torch.stack([a.half(), (b > 0)], -1)", AB),
        case("result = torch.stack([torch.arange(2), torch.tensor([0.5, 1.5])])"),
    )),
    fn(
        "torch.flatten",
        signature="input, start_dim=0, end_dim=-1",
        args={"start_dim": Arg(explicit=True)},
        positional=1,
        params=[IN, P("start_dim", "1", default=True), P("end_dim", "2", default=True)],
        inputs={"x": "randn(2, 3, 4, 5)"},
        notes="start_dim is keyword-only in MindSpore and defaults to 1 there (0 in torch).",
        extra=(
            Example("y = torch.flatten(x, 1)", "y = ops.flatten(x, start_dim=1)"),
            Example("y = torch.flatten(x)", "y = ops.flatten(x, start_dim=0)"),
        ),
    ),
    fn(
        "torch.matmul",
        signature="input, other, *, out=None",
        params=[IN, P("other", "y")],
        inputs={"x": "randn(2, 3, 4)", "y": "randn(4, 5)"},
        rtol=1e-4,
        atol=1e-5,
        hook=sparse_product,
        notes="of a sparse COO matrix the file makes: its SparseTensorDenseMatmul (as torch.sparse.mm)",
        extra=(
            Example("y = torch.matmul(a, b)", "y = ops.matmul(a, b)"),
            # pyGAT's sparse attention: the adjacency built in forward, then multiplied
            Example("a = torch.sparse_coo_tensor(i, v, (4, 4))\ny = torch.matmul(a, x)",
                    "a = mindspore.COOTensor(i.T, v, (4, 4))\ny = ops.SparseTensorDenseMatmul()(*a.to_tuple(), x)"),
            case("a = torch.sparse_coo_tensor(i, v, (4, 4))\nresult = torch.matmul(a, x)", EDGES, rtol=1e-5, atol=1e-6),
            case("result = torch.matmul(u, v)", {"u": "randn(4)", "v": "randn(4)"}, rtol=1e-4, atol=1e-5),
        ),
    ),
]
