"""Activation (gradient) checkpointing -> MindSpore's recompute.

``torch.utils.checkpoint.checkpoint(fn, *args)`` runs ``fn`` without keeping its
activations and runs it again in the backward pass; ``mindspore.recompute(fn,
*args)`` does the same, with the same values and gradients (for the inputs and
for the parameters ``fn`` uses). MindSpore's reentrant variant takes only a Cell,
the other any callable (``self._forward``, a lambda), so the call always says
``use_reentrant=False``; and ``early_stop=False``: MindSpore 2.10's early stop
(recomputing only as far as needed, torch's default too) fails in the backward
pass of a block of GroupNorm, SiLU and Conv2d ("Stack input_args_info_stack_ is
empty", measured on CPU), and it changes no value. Torch's reentrant variant (its default in 2.x) gives
no gradient for the parameters inside when no input requires one (it warns);
MindSpore's recompute does, like torch's ``use_reentrant=False``.

``checkpoint_sequential`` has no MindSpore counterpart: it is written out once
above the file's code, each segment but the last under ``mindspore.recompute``.
Gradient checkpointing written as a torch.autograd.Function (diffusion code's
``CheckpointFunction``) is converted with the Function classes
(transpiler/convert/structural/autograd_function.py).
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.api import ApiRule, Drop, Example, Unsupported, code_of, define, keyword_arg

_PROOF = ("tests/convert/test_checkpointing.py::test_checkpoint_values_and_gradients_match_torch",)

_SEQUENTIAL = '''
def {name}(functions, segments, input, **kwargs):
    """torch's checkpoint_sequential: each segment but the last under mindspore.recompute."""
    functions = list(functions)
    size = len(functions) // segments

    def run(start, end):
        def segment(x):
            for function in functions[start:end]:
                x = function(x)
            return x

        return segment

    end = 0
    for start in range(0, size * (segments - 1), size):
        end = start + size
        input = RECOMPUTE(run(start, end), input, use_reentrant=False, early_stop=False, **kwargs)
    return run(end, len(functions))(input)
'''


def _checkpoint(call, ctx):
    call.set("use_reentrant", cst.Name("False"))
    call.set("early_stop", cst.Name("False"))


def _checkpoint_sequential(call, ctx):
    recompute = code_of(ctx.ref("mindspore.recompute"))
    helper = define(ctx, "recompute_sequential", _SEQUENTIAL.replace("RECOMPUTE", recompute))
    args = [cst.Arg(call.get(name)) for name in ("functions", "segments", "input")]
    if call.has("preserve_rng_state"):
        args.append(keyword_arg("save_rng_state", call.get("preserve_rng_state")))
    call.result = cst.Call(helper, args)


_DIAGNOSTICS = Drop("torch's recomputation checks and error messages; the values are the same")

RULES = [
    ApiRule(
        "torch.utils.checkpoint.checkpoint", "mindspore.recompute",
        signature="function, *args, use_reentrant=None, context_fn=None, determinism_check='default', "
                  "debug=False, early_stop=True, preserve_rng_state=True, **kwargs",
        args={"preserve_rng_state": "save_rng_state", "determinism_check": _DIAGNOSTICS, "debug": _DIAGNOSTICS,
              "context_fn": Unsupported("context managers of torch's run around the function and its "
                                        "recomputation: convert them by hand (mindspore.recompute takes context_fn)")},
        hook=_checkpoint,
        notes="mindspore.recompute(function, *args, use_reentrant=False, early_stop=False): the same values and "
              "gradients, the activations recomputed in the backward pass (MindSpore's reentrant variant takes "
              "only a Cell; its early stop fails in 2.10's backward pass); "
              "torch's reentrant variant gives no parameter gradients when no input requires grad, this does",
        proven_by=_PROOF,
        examples=(
            Example("result = torch.utils.checkpoint.checkpoint(lambda a, b: a * b + b, x, y, use_reentrant=False)",
                    "result = mindspore.recompute(\n"
                    "    lambda a, b: a * b + b, x, y, use_reentrant=False, early_stop=False\n)",
                    inputs={"x": "randn(2, 3)", "y": "randn(2, 3)"}),
            Example("from torch.utils.checkpoint import checkpoint\n"
                    "result = checkpoint(torch.tanh, x, use_reentrant=True, preserve_rng_state=False)",
                    inputs={"x": "randn(4)"}),
            Example("import torch.utils.checkpoint as cp\nresult = cp.checkpoint(lambda t: t.exp().sum(), x)",
                    inputs={"x": "randn(3, 2)"}),
            Example("result = torch.utils.checkpoint.checkpoint(f, x, context_fn=contexts)", marked="context_fn"),
        ),
    ),
    ApiRule(
        "torch.utils.checkpoint.checkpoint_sequential", None,
        signature="functions, segments, input, use_reentrant=None, **kwargs",
        hook=_checkpoint_sequential,
        notes="recompute_sequential, written out once above the file's code: the layers run in order, each "
              "segment but the last under mindspore.recompute (the same values and gradients)",
        proven_by=_PROOF,
        examples=(
            Example("layers = [torch.tanh, torch.sin, torch.exp, torch.cos]\n"
                    "result = torch.utils.checkpoint.checkpoint_sequential(layers, 2, x, use_reentrant=False)",
                    inputs={"x": "randn(2, 3)"}),
            Example("layers = [torch.tanh, torch.sin, torch.exp]\n"
                    "result = torch.utils.checkpoint.checkpoint_sequential(layers, 3, x, preserve_rng_state=False)",
                    inputs={"x": "randn(5)"}),
        ),
    ),
]
