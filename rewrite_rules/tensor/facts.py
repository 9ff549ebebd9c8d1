"""Tensor attributes and methods about autograd, storage and devices.

MindSpore records no autograd graph on tensors: there is no ``.grad``,
``.grad_fn``, ``.is_leaf`` or ``retain_grad()`` (gradients are returned by
``mindspore.grad`` / ``value_and_grad``), and only ``mindspore.Parameter``
has ``requires_grad``. Reads of these are marked, except ``requires_grad`` on
what is evidently a Parameter (``layer.weight``, the variable of a loop over
``parameters()``) and in a Cell's forward: there it asks whether gradients can
flow through the tensor, and MindSpore differentiates construct as a whole,
through every floating-point or complex tensor (torch's own rule for which
tensors can require gradients), so that is what it becomes. Devices are
global in MindSpore: ``is_cuda``/``is_cpu``
read the device target. Storage objects, strided views, in-place resizing
and Python callables applied to elements have no MindSpore counterpart.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P, call_cases
from rewrite_rules.api import Example, MethodRule, PropertyRule, Unconvertible, explain, in_forward
from rewrite_rules.tensor.binding import atom, code_of, expr, method, same

X = {"x": "randn(3, 4)"}
# torch 2.13 (CPU build) on this machine
_NO_ACCELERATOR = "torch cannot run it here: RuntimeError: Cannot access accelerator device when none is available"
NO_AUTOGRAD = ("MindSpore records no autograd graph on tensors; gradients are returned by mindspore.grad or "
               "mindspore.value_and_grad")
_PARAMETER_ATTRIBUTES = frozenset({"weight", "bias"})


def _is_parameter(receiver: cst.BaseExpression, ctx) -> bool:
    """layer.weight, a name bound to nn.Parameter(...) or looping over parameters()."""
    if isinstance(receiver, cst.Attribute) and receiver.attr.value in _PARAMETER_ATTRIBUTES:
        return True
    return ctx.known_kinds.get(code_of(receiver)) == "parameter"


_DIFFERENTIABLE = "requires_grad in construct: MindSpore differentiates through every floating-point or complex tensor"


def _requires_grad(receiver, ctx):
    if _is_parameter(receiver, ctx):
        return None  # a Parameter has it, with the same meaning
    if in_forward(ctx) and isinstance(receiver, (cst.Name, cst.Attribute)):
        # vector-quantize's straight-through estimator, pyGAT's `assert not edge.requires_grad` of integer indices
        text = code_of(receiver)
        return explain(ctx, expr(f"({text}.is_floating_point() or {text}.is_complex())"), _DIFFERENTIABLE)
    raise Unconvertible("only mindspore.Parameter has requires_grad; " + NO_AUTOGRAD)


def _device_is(target: str):
    def hook(receiver, ctx):
        return expr(f'({code_of(ctx.ref("mindspore.get_context"))}("device_target") == "{target}")')

    return hook


def _marked(name: str, reason: str, example: str) -> MethodRule:
    return MethodRule(name, notes=reason, examples=(Example(f"x = x * 2\n{example}", marked=reason.split(";")[0][:40]),))


def _receiver(bound, call, ctx):
    bound.result = call.receiver


def _is_nonzero(bound, call, ctx):
    bound.result = cst.Call(cst.Name("bool"), [cst.Arg(call.receiver)])


def _is_same_size(bound, call, ctx):
    bound.result = expr(f"({atom(call.receiver)}.shape == {atom(bound.get('other'))}.shape)")


def _false(bound, call, ctx):
    bound.result = cst.Name("False")


def _stride(bound, call, ctx):
    """MindSpore returns the strides as a list (inside tuple(...) already: as it is)."""
    if not bound.has("dim") and call.enclosing != "tuple":
        bound.result = cst.Call(cst.Name("tuple"), [cst.Arg(cst.Call(cst.Attribute(call.receiver, cst.Name("stride")), []))])


_STORAGE = "MindSpore exposes no storage objects"
_STRIDED = "MindSpore has no strided views of a storage; build the tensor with reshape/narrow/gather"
_RESIZE = "MindSpore cannot resize a tensor in place; reshape (same number of elements) or make a new tensor"
_ELEMENTWISE = "MindSpore has no element-wise Python callables on tensors; write the function with ops"


def _in_forward(body: str) -> str:
    """A layer whose forward runs ``body`` (statements reading x and h = fc(x), returning result)."""
    return ("class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.fc = nn.Linear(3, 3)\n\n    def forward(self, x):\n        h = self.fc(x)\n"
            + "".join(f"        {line}\n" for line in body.splitlines()) + "        return result\n\n\nresult = Net()(x)")


# vector-quantize-pytorch's straight-through estimator, pyGAT's check of its integer edge indices,
# Jamba's router logits made with requires_grad=x.requires_grad
_FORWARD_READS = (
    "q = h.round()\nif h.requires_grad:\n    q = h + (q - h).detach()\nresult = q",
    "edge = h.argmax(-1)\nassert not edge.requires_grad\nresult = edge",
    "logits = torch.ones((x.shape[0], 1), device=x.device, dtype=x.dtype, requires_grad=x.requires_grad)\n"
    "result = h * logits",
)

RULES = [
    PropertyRule("requires_grad", hook=_requires_grad,
                 notes="in a Cell's forward: whether the tensor is floating-point or complex (MindSpore differentiates "
                       "construct through every such tensor); marked elsewhere, except on evident Parameters "
                       "(layer.weight, nn.Parameter(...) variables, loops over parameters())",
                 examples=(Example("x = x * 2\nflag = x.requires_grad", marked="only mindspore.Parameter"),
                           *(Example(_in_forward(body), inputs={"x": "randn(4, 3)"}) for body in _FORWARD_READS),
                           Example("n = sum(p.numel() for p in model.parameters() if p.requires_grad)",
                                   "n = sum(p.numel() for p in model.trainable_params() if p.requires_grad)"),
                           Example("layer = nn.Linear(2, 3)\nresult = layer.weight.requires_grad", inputs={}),
                           Example("layer = nn.Linear(2, 3)\nresult = [p.requires_grad for p in layer.parameters()]",
                                   inputs={}),
                           Example("x.requires_grad = False", "x.requires_grad = False"))),
    *(PropertyRule(name, notes=NO_AUTOGRAD, examples=(Example(f"x = x * 2\ny = x.{name}", marked="no autograd graph"),))
      for name in ("grad", "grad_fn", "is_leaf", "retains_grad")),
    *(_marked(name, NO_AUTOGRAD, f"x.{name}()") for name in ("retain_grad",)),
    PropertyRule("is_cuda", hook=_device_is("GPU"), notes="the global device target (MindSpore places no single tensor)",
                 examples=(Example("result = x.is_cuda", inputs=X),)),
    PropertyRule("is_cpu", hook=_device_is("CPU"), notes="the global device target (MindSpore places no single tensor)",
                 examples=(Example("result = x.is_cpu", inputs=X),)),
    *(PropertyRule(name, rename=name, examples=(Example(f"result = x.{name}", inputs=X),
                                                Example(f"result = x.double().{name}", inputs=X))) for name in ("itemsize", "nbytes")),
    method("is_nonzero", "", hook=_is_nonzero, notes="bool(x) of a one-element tensor",
           examples=(Example("result = x.is_nonzero()", inputs={"x": "tensor([0.5])"}),
                     Example("result = x.is_nonzero()", inputs={"x": "tensor([[0]])"}))),
    method("is_same_size", "other", hook=_is_same_size, notes="the shapes compared",
           examples=call_cases("result = x.is_same_size({args})", [P("other", "x.T")], X)),
    method("is_inference", "", hook=_false, notes="MindSpore has no inference tensors",
           examples=call_cases("result = x.is_inference()", [], X)),
    same("data_ptr", examples=call_cases("result = x.data_ptr() != 0", [], X)),
    same("storage_offset", examples=(*call_cases("result = x.storage_offset()", [], X),
                                     Example("result = x[1:].storage_offset()", inputs=X))),
    method("stride", "dim=None", hook=_stride, notes="tuple(x.stride()): MindSpore returns a list",
           examples=(*call_cases("result = x.stride()", [], X), Example("result = x.stride(0)", inputs=X),
                     Example("result = x.t().stride()", inputs=X),
                     Example("result = tuple(x.t().stride())", inputs=X))),
    *(same(name, examples=call_cases(f"result = x.{name}()", [], X)) for name in ("is_pinned", "is_shared")),
    PropertyRule("is_meta", rename="is_meta", examples=(Example("result = x.is_meta", inputs=X),)),
    # torch's pin_memory needs an accelerator: the case compares with the copy torch documents it to return
    method("pin_memory", "device=None", hook=_receiver, notes="MindSpore has no pinned memory: the tensor itself",
           examples=(Example("y = x.pin_memory()", "y = x"),
                     Example("result = x.pin_memory()", inputs=X, torch_reference="result = x.clone()",
                             notes=_NO_ACCELERATOR))),
    method("share_memory_", "", hook=_receiver, notes="MindSpore shares no storage between processes: the tensor itself",
           examples=call_cases("result = x.share_memory_()", [], X)),
    *(_marked(name, _STORAGE, f"s = x.{name}()") for name in ("storage", "untyped_storage")),
    _marked("set_", "MindSpore tensors cannot take another tensor's storage", "x.set_(y)"),
    *(_marked(name, _STRIDED, f"y = x.{name}((2, 2), (1, 2))") for name in ("as_strided", "as_strided_", "as_strided_scatter")),
    *(_marked(name, _RESIZE, f"x.{name}(2, 3)") for name in ("resize", "resize_", "resize_as", "resize_as_")),
    *(_marked(name, _ELEMENTWISE, f"x.{name}(lambda v: v * 2)") for name in ("apply_", "map_", "map2_")),
    *(_marked(name, "MindSpore has no index_reduce; compose it with ops.tensor_scatter_elements",
              f"x.{name}(0, i, s, 'amax')") for name in ("index_reduce", "index_reduce_")),
]
