"""Python's ``abs()`` of a complex tensor: ``abs(xf)`` of an FFT (Time-Series-Library's
TimesNet finds its periods as ``abs(torch.fft.rfft(x, dim=1)).mean(0)`` then topk).

torch's ``abs`` of a complex tensor is its real magnitude (float32); MindSpore's
Tensor.__abs__ gives it as complex64 (|x| + 0j), so what follows gets another dtype
and ``ops.topk`` of it fails ("For primitive[TopK], the input argument[input_x] must
be a type of {... Tensor[Float32] ...}"). Where the source shows the argument is
complex, ``abs(x)`` is converted as ``torch.abs(x)`` is: ``ops.ComplexAbs()(x)``.
Every other ``abs()`` is left alone (numbers, real tensors: the same in MindSpore).
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.spec import Unconvertible
from rewrite_rules.torch_functions.integer_inputs import is_complex_tensor
from transpiler.convert.change_text import describe
from transpiler.convert.engine import convert_call


def convert(rewriter, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    if not (isinstance(original.func, cst.Name) and original.func.value == "abs" and len(original.args) == 1
            and original.args[0].keyword is None and not original.args[0].star):
        return updated
    if "abs" in rewriter.analysis.bound_names or not is_complex_tensor(original.args[0].value, rewriter.ctx):
        return updated
    try:
        result = convert_call(rewriter.rules.calls["torch.abs"], updated, rewriter.ctx, source=original)
    except Unconvertible:
        return updated
    rewriter.changed()
    rewriter.ctx.converted(original, "abs", describe(original, result, why="the magnitude of a complex tensor, "
                                                     "real as torch's (MindSpore's abs() keeps it complex)"))
    return result
