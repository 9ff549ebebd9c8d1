"""torch.nn.functional pooling -> mindspore.ops pooling.

Differences carried (measured):
- avg_pool*: MindSpore's stride defaults to 1 (torch: kernel_size), written;
  divisor_override=None is MindSpore's 0;
- max_pool2d/3d: MindSpore orders return_indices before ceil_mode, so those
  are passed by keyword;
- max_pool1d has no ops form and ops.adaptive_*_pool1d need divisible
  lengths: both are composed over a length-1 height with the 2-d op
  (``x.unsqueeze(-2)`` ... ``.squeeze(-2)``), which equals torch.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.nn.shared import P, fn_cases
from rewrite_rules.api import ApiRule, Example, Unconvertible, code_of

_X = {1: "randn(2, 3, 9)", 2: "randn(2, 3, 7, 8)", 3: "randn(2, 3, 5, 6, 7)"}
_EVEN = {1: "randn(2, 3, 8)", 2: "randn(2, 3, 6, 8)", 3: "randn(2, 3, 4, 6, 6)"}


def _stride_is_kernel(call, ctx):
    stride = call.get("stride")
    if stride is None or (isinstance(stride, cst.Name) and stride.value == "None"):
        call.set("stride", call.get("kernel_size"))
    override = call.get("divisor_override")
    if override is not None and isinstance(override, cst.Name) and override.value == "None":
        call.remove("divisor_override")


def _code(call, name, default):
    value = call.get(name)
    if value is None or (isinstance(value, cst.Name) and value.value == "None"):
        return default
    return code_of(value)


def _pair(text: str, other: str) -> str:
    """(other, value) for a 1-d argument given as an int or a 1-tuple."""
    return f"({other}, {text}[0] if isinstance({text}, (tuple, list)) else {text})" if not text.isdigit() else f"({other}, {text})"


def _squeeze(expr: str, indices: bool) -> str:
    if indices:
        return f"tuple(t.squeeze(-2) for t in {expr})"
    return f"{expr}.squeeze(-2)"


def _max_pool1d(call, ctx):
    """ops has no max_pool1d: pool a length-1 height with max_pool2d."""
    x = code_of(call.get("input"))
    kernel = _code(call, "kernel_size", "1")
    stride = _code(call, "stride", kernel)
    try:
        indices = bool(call.literal("return_indices"))
        flag = str(indices)
    except (ValueError, SyntaxError):
        indices, flag = None, code_of(call.get("return_indices"))
    op = code_of(ctx.ref("mindspore.ops.max_pool2d"))
    text = (
        f"{op}({x}.unsqueeze(-2), {_pair(kernel, '1')}, {_pair(stride, '1')}, {_pair(_code(call, 'padding', '0'), '0')}, "
        f"{_pair(_code(call, 'dilation', '1'), '1')}, return_indices={flag}, ceil_mode={_code(call, 'ceil_mode', 'False')})"
    )
    if indices is None:  # decided at run time: squeeze whichever structure comes back
        call.result = cst.parse_expression(f"{_squeeze(text, True)} if {flag} else {_squeeze(text, False)}")
    else:
        call.result = cst.parse_expression(_squeeze(text, indices))


def _adaptive_1d(kind: str):
    def hook(call, ctx):
        x = code_of(call.get("input"))
        size = _pair(code_of(call.get("output_size")), "1")
        indices = kind == "max" and _literal_bool(call, "return_indices")
        op = code_of(ctx.ref(f"mindspore.ops.adaptive_{kind}_pool2d"))
        extra = ", True" if indices else ""
        call.result = cst.parse_expression(_squeeze(f"{op}({x}.unsqueeze(-2), {size}{extra})", indices))

    return hook


def _literal_bool(call, name) -> bool:
    try:
        return bool(call.literal(name))
    except (ValueError, SyntaxError):
        raise Unconvertible(f"{name} through a variable changes the result's structure") from None


def _rule(name, target, signature, params, x, hook=None, args=None, positional=None, notes="", extra=(), **kw):
    return ApiRule(
        f"torch.nn.functional.{name}",
        target,
        signature=signature,
        args=args or {},
        positional=positional,
        hook=hook,
        notes=notes,
        examples=(*extra, *fn_cases(name, params, {"x": x}, **kw)),
    )


_MAX_SIG = "input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False"


def _max_params(k):
    return [P("input", "x"), P("kernel_size", k), P("stride", "2", default=True), P("padding", "1", default=True),
            P("dilation", "1", default=True), P("ceil_mode", "True", default=True),
            P("return_indices", "False", default=True)]


def _avg(ndim: int):
    sig = "input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True"
    params = [P("input", "x"), P("kernel_size", "3"), P("stride", "2", default=True), P("padding", "1", default=True),
              P("ceil_mode", "True", default=True), P("count_include_pad", "False", default=True)]
    extra = ()
    if ndim != 1:
        sig += ", divisor_override=None"
        extra = fn_cases(f"avg_pool{ndim}d", [P("input", "x"), P("kernel_size", "2"), P("divisor_override", "3")],
                         {"x": _X[ndim]}, shapes=("keywords",))
    return _rule(
        f"avg_pool{ndim}d", f"mindspore.ops.avg_pool{ndim}d", sig, params, _X[ndim],
        hook=_stride_is_kernel, args={"input": "input_x"}, positional=6,
        notes="stride is always written: MindSpore defaults it to 1, torch to kernel_size.", extra=extra,
    )


RULES = [
    _rule("max_pool1d", None, _MAX_SIG, _max_params("3"), _X[1], hook=_max_pool1d,
          notes="composed with ops.max_pool2d over a length-1 height (ops has no max_pool1d)",
          extra=fn_cases("max_pool1d", [P("input", "x"), P("kernel_size", "2"), P("return_indices", "True")],
                         {"x": _X[1]}, shapes=("keywords",))),
    *(
        _rule(f"max_pool{n}d", f"mindspore.ops.max_pool{n}d", _MAX_SIG, _max_params("3" if n == 3 else "(3, 2)"), _X[n],
              args={"input": "x"}, positional=5,
              notes="ceil_mode/return_indices by keyword: MindSpore orders them the other way round.",
              extra=fn_cases(f"max_pool{n}d", [P("input", "x"), P("kernel_size", "2"), P("return_indices", "True")],
                             {"x": _X[n]}, shapes=("keywords",)))
        for n in (2, 3)
    ),
    _avg(1),
    _avg(2),
    _avg(3),
    _rule("adaptive_avg_pool1d", None, "input, output_size", [P("input", "x"), P("output_size", "4")], _X[1],
          hook=_adaptive_1d("avg"), notes="composed with ops.adaptive_avg_pool2d (MindSpore's 1-d form needs divisible lengths)"),
    _rule("adaptive_max_pool1d", None, "input, output_size, return_indices=False",
          [P("input", "x"), P("output_size", "4"), P("return_indices", "True", default=True)], _X[1],
          hook=_adaptive_1d("max"), notes="composed with ops.adaptive_max_pool2d (MindSpore's 1-d form needs divisible lengths)",
          shapes=("positional", "keywords", "reordered", "defaults")),
    *(
        _rule(f"adaptive_avg_pool{n}d", f"mindspore.ops.adaptive_avg_pool{n}d", "input, output_size",
              [P("input", "x"), P("output_size", "(3, 4)" if n == 2 else "(2, 3, 4)")], _X[n], atol=1e-6)
        for n in (2, 3)
    ),
    *(
        _rule(f"adaptive_max_pool{n}d", f"mindspore.ops.adaptive_max_pool{n}d", "input, output_size, return_indices=False",
              [P("input", "x"), P("output_size", "(3, 4)" if n == 2 else "(2, 3, 4)"),
               P("return_indices", "True", default=True)], _X[n],
              dtype_map={"int64": "int32"} if n == 3 else None,
              notes="MindSpore returns int32 indices in 3-d" if n == 3 else "")
        for n in (2, 3)
    ),
    *(
        _rule(f"lp_pool{n}d", f"mindspore.ops.lp_pool{n}d", "input, norm_type, kernel_size, stride=None, ceil_mode=False",
              [P("input", "x"), P("norm_type", "2"), P("kernel_size", "2"), P("stride", "1", default=True),
               P("ceil_mode", "True", default=True)], _X[n], args={"input": "x"}, positional=5, atol=1e-5)
        for n in (1, 2)
    ),
    ApiRule(
        "torch.nn.functional.lp_pool3d",
        None,
        signature="input, norm_type, kernel_size, stride=None, ceil_mode=False",
        notes="MindSpore has no 3-d power-average pooling",
        examples=(Example("y = F.lp_pool3d(x, 2, 2)", marked="no 3-d power-average pooling"),),
    ),
    *(
        ApiRule(
            f"torch.nn.functional.max_unpool{n}d",
            f"mindspore.ops.max_unpool{n}d",
            signature="input, indices, kernel_size, stride=None, padding=0, output_size=None",
            args={"input": "x"},
            positional=6,
            examples=tuple(
                Example(f"y, i = F.max_pool{n}d(x, 2, return_indices=True)\n" + ex.torch,
                        inputs=ex.inputs, notes=ex.notes)
                for ex in fn_cases(f"max_unpool{n}d", [P("input", "y"), P("indices", "i"), P("kernel_size", "2"),
                                                       P("stride", "2", default=True), P("padding", "0", default=True)],
                                   {"x": _EVEN[n]})
            ),
        )
        for n in (1, 2, 3)
    ),
    ApiRule(
        "torch.nn.functional.fractional_max_pool2d",
        None,
        signature="input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None",
        notes="fractional max pooling draws its random pooling regions differently in MindSpore",
        examples=(Example("y = F.fractional_max_pool2d(x, 2, output_ratio=0.5)", marked="random pooling regions"),),
    ),
]
