"""torch.nn.utils.weight_norm (and parametrizations.weight_norm, remove_weight_norm).

MindSpore 2.10 has no weight normalisation. The converted code calls a
function written above it that does what torch's does: the layer's Parameter
``weight`` is replaced by ``weight_g`` (the norm over every axis but ``dim``;
of the whole tensor for dim=None or -1, as torch) and ``weight_v`` (the
direction), and the layer reads ``weight = weight_g * weight_v / ||weight_v||``
at each call, so gradients reach g and v as in torch. torch's state dict names
them ``weight_g`` / ``weight_v`` (or ``parametrizations.weight.original0`` /
``original1``); the weight converter (transpiler/proof/weights.py) places both
spellings, in the layer's own layout (Conv1d's extra axis included).
"""

from __future__ import annotations

from rewrite_rules.api import ApiRule, Example, code_of, define, render

_WEIGHT_NORM = '''
def {name}(module, name="weight", dim=0):
    """torch.nn.utils.weight_norm (written by ms-migrate)."""
    # the Parameter `name` becomes name_g * name_v / ||name_v||, computed at each call from the Parameters
    # name_g (the norm over every axis but dim; of the whole tensor for dim=None or -1) and name_v

    def norm(v):
        if dim is None or dim == -1:
            return (v * v).sum().sqrt()
        axes = tuple(axis for axis in range(v.ndim) if axis != dim % v.ndim)
        return (v * v).sum(axis=axes, keepdims=True).sqrt()

    def normalised(self):
        v = getattr(self, name + "_v")
        return v * (getattr(self, name + "_g") / norm(v))

    weight = getattr(module, name)
    delattr(module, name)
    setattr(module, name + "_g", PARAMETER(norm(weight), name=name + "_g"))
    setattr(module, name + "_v", PARAMETER(weight.value(), name=name + "_v"))
    # a subclass of another name: graph mode looks up the class of super(Class, self) by its name
    module.__class__ = type(type(module).__name__ + "WithWeightNorm", (type(module),), {{name: property(normalised)}})
    return module
'''

_REMOVE_WEIGHT_NORM = '''
def {name}(module, name="weight"):
    """torch.nn.utils.remove_weight_norm (written by ms-migrate)."""
    # the Parameter `name` again, holding name_g * name_v / ||name_v||
    weight = getattr(module, name)
    delattr(module, name + "_g")
    delattr(module, name + "_v")
    module.__class__ = type(module).__bases__[0]
    setattr(module, name, PARAMETER(weight, name=name))
    return module
'''


def _helper(function: str, template: str):
    def hook(call, ctx):
        source = template.replace("PARAMETER", code_of(ctx.ref("mindspore.Parameter")))
        call.result = render(call, define(ctx, function, source))

    return hook


_X1 = {"x": "randn(2, 4, 7)"}
_X2 = {"x": "randn(2, 4, 6, 6)"}
_LINEAR = {"x": "randn(3, 5)"}


def _case(torch: str, inputs, **kw) -> Example:
    return Example(torch, inputs=inputs, atol=1e-5, **kw)


RULES = [
    ApiRule(
        "torch.nn.utils.weight_norm",
        None,
        signature="module, name='weight', dim=0",
        hook=_helper("weight_norm", _WEIGHT_NORM),
        aliases=("torch.nn.utils.weight_norm.weight_norm",),
        notes="a function written above the code replaces the Parameter by name_g and name_v (torch's names) and "
              "computes it from them at each call; MindSpore has no weight normalisation.",
        examples=(
            _case("layer = torch.nn.utils.weight_norm(nn.Conv1d(4, 6, 3, padding=1))\nresult = layer(x)", _X1),
            _case("layer = torch.nn.utils.weight_norm(nn.Conv2d(4, 3, 3), name='weight')\n"
                  "result = (layer(x), layer.weight_g, layer.weight_v)", _X2, notes="the Parameters g and v"),
            _case("layer = torch.nn.utils.weight_norm(nn.Linear(5, 2), dim=None)\nresult = (layer(x), layer.weight)",
                  _LINEAR, notes="dim=None: the norm of the whole tensor"),
            _case("layer = torch.nn.utils.weight_norm(nn.Linear(5, 2), 'weight', 1)\nresult = layer(x)", _LINEAR),
            _case("layer = torch.nn.utils.weight_norm(nn.ConvTranspose1d(4, 3, 3))\nresult = layer(x)", _X1),
        ),
    ),
    ApiRule(
        "torch.nn.utils.parametrizations.weight_norm",
        None,
        signature="module, name='weight', dim=0",
        hook=_helper("weight_norm", _WEIGHT_NORM),
        notes="as torch.nn.utils.weight_norm: the Parameters are name_g and name_v (torch's state dict keys "
              "parametrizations.<name>.original0 / original1 load into them).",
        examples=(
            _case("layer = torch.nn.utils.parametrizations.weight_norm(nn.Conv1d(4, 6, 3))\nresult = layer(x)", _X1),
            _case("layer = torch.nn.utils.parametrizations.weight_norm(nn.Linear(5, 2), dim=None)\nresult = layer(x)",
                  _LINEAR),
        ),
    ),
    ApiRule(
        "torch.nn.utils.remove_weight_norm",
        None,
        signature="module, name='weight'",
        hook=_helper("remove_weight_norm", _REMOVE_WEIGHT_NORM),
        notes="a function written above the code: the Parameter again, computed from name_g and name_v.",
        examples=(
            _case("layer = torch.nn.utils.weight_norm(nn.Linear(5, 2))\ntorch.nn.utils.remove_weight_norm(layer)\n"
                  "result = (layer(x), layer.weight, hasattr(layer, 'weight_g'))", _LINEAR),
            _case("from torch.nn.utils import weight_norm, remove_weight_norm\n"
                  "layer = remove_weight_norm(weight_norm(nn.Conv1d(4, 6, 3)))\nresult = layer(x)", _X1),
        ),
    ),
]
