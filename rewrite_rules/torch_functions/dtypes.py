"""torch dtypes -> MindSpore dtypes, torch.Tensor as a type, and the limits of a
dtype (torch.finfo / torch.iinfo)."""

from __future__ import annotations

from rewrite_rules.api import ApiRule, AttributeRead, AttributeRule, Example, Unconvertible, code_of, dotted_parts, \
    parse_expr

_SAME = ["float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64", "uint8",
         "complex64", "complex128", "uint16", "uint32", "uint64"]
_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "int": "int32", "long": "int64",
            "short": "int16", "bool": "bool_", "cfloat": "complex64", "cdouble": "complex128"}
DTYPE_NAMES = frozenset(_SAME) | frozenset(_ALIASES)  # every torch.<name> that is a dtype

# Execution case: a cast to the dtype (values and dtype compared) and the dtype itself.
# Unsigned casts get no negative values (torch leaves their result undefined).
_VALUES = {"x": "tensor([[0.0, 1.5, -2.75], [3.25, -0.5, 7.0]])"}
_UNSIGNED_VALUES = {"x": "tensor([[0.0, 1.5, 2.75], [3.25, 0.5, 7.0]])"}


def _dtype_rule(name: str, target: str) -> AttributeRule:
    inputs = _UNSIGNED_VALUES if target.startswith("uint") else _VALUES
    case = Example(f"result = (x.to(torch.{name}), torch.{name})", inputs=inputs)
    return AttributeRule(f"torch.{name}", f"mindspore.{target}", examples=(case,))


RULES = [
    *(_dtype_rule(name, name) for name in _SAME),
    *(_dtype_rule(name, target) for name, target in _ALIASES.items()),
    AttributeRule(
        "torch.dtype",
        "mindspore.Type",
        examples=(Example("ok = isinstance(torch.float16, torch.dtype)", "ok = isinstance(mindspore.float16, mindspore.Type)",
                          inputs={}, results=("ok",)),),
    ),
    AttributeRule(
        "torch.Tensor",
        "mindspore.Tensor",
        examples=(Example("ok = isinstance(x, torch.Tensor)", "ok = isinstance(x, mindspore.Tensor)"),
                  Example("result = (isinstance(x, torch.Tensor), isinstance(3.0, torch.Tensor))", inputs=_VALUES)),
    ),
]


def _type_info(kind: str):
    """``torch.finfo(dtype)`` -> NumPy's ``finfo`` of the same dtype, found by its name
    (``str(mindspore.float16)`` is ``"Float16"``; MindSpore's dtype-to-NumPy function is
    deprecated since 2.7). torch's finfo without a dtype is the default dtype's, float32."""

    def hook(call, ctx):
        dtype = call.get("type")
        if dtype is not None and (dotted_parts(dtype) or [""])[-1] == "bfloat16":
            raise Unconvertible(f"NumPy has no bfloat16 for {kind}: write the limits out")
        name = '"float32"' if dtype is None else f"str({code_of(dtype)}).lower()"
        call.result = parse_expr(f"{code_of(ctx.ref('numpy'))}.{kind}({name})")

    return hook


def _reads(convert: str, names: tuple[str, ...]) -> dict[str, AttributeRead]:
    # torch's limits are Python numbers; NumPy's are NumPy scalars, which Tensor.masked_fill
    # refuses and ops.full takes for an int64 fill (measured): written as Python numbers
    reads = {name: AttributeRead(f"{convert}({{cell}}.{name})") for name in names}
    reads["bits"] = AttributeRead("{cell}.bits")
    reads["dtype"] = AttributeRead("{cell}.dtype.name")  # torch's is the name, NumPy's a numpy dtype
    return reads


RULES += [
    ApiRule(
        "torch.finfo",
        None,
        signature="type=None",
        hook=_type_info("finfo"),
        attributes=_reads("float", ("eps", "max", "min", "tiny", "smallest_normal", "resolution")),
        notes="numpy.finfo of the dtype's name; the limits read from it are written as Python floats, as torch's are",
        examples=(
            Example("result = x.masked_fill(x > 0, -torch.finfo(x.dtype).max)",
                    "result = x.masked_fill(x > 0, -float(np.finfo(str(x.dtype).lower()).max))",
                    inputs={"x": "randn(2, 3)"}),
            Example("info = torch.finfo(torch.float16)\nresult = (info.eps, info.max, info.tiny, info.min, info.bits, "
                    "info.resolution, info.smallest_normal, info.dtype)", inputs={}),
            Example("result = x.clamp(min=torch.finfo().eps)", inputs={"x": "randn(2, 3)"}),
            Example("result = torch.full((2,), torch.finfo(torch.float16).min)", inputs={}),
            Example("info = torch.finfo(torch.bfloat16)", marked="NumPy has no bfloat16"),
        ),
    ),
    ApiRule(
        "torch.iinfo",
        None,
        signature="type",
        hook=_type_info("iinfo"),
        attributes=_reads("int", ("max", "min")),
        notes="numpy.iinfo of the dtype's name; the limits read from it are written as Python ints, as torch's are",
        examples=(
            Example("result = x.clamp(max=torch.iinfo(x.dtype).max - 1)", inputs={"x": "randint(0, 9, (2, 3))"}),
            Example("info = torch.iinfo(torch.int16)\nresult = (info.min, info.max, info.bits, info.dtype)",
                    inputs={}),
            Example("result = torch.full((2,), torch.iinfo(torch.int32).min)", inputs={}),
        ),
    ),
]
