"""Module containers and parameters: Sequential/ModuleList/ModuleDict -> their
Cell counterparts, nn.Parameter -> mindspore.Parameter.

The containers keep torch's child names ("0", "1", ... / the dict keys), so
weights copy by name. mindspore.Parameter's second positional parameter is
``name``, so torch's ``requires_grad`` is always passed by keyword; torch's
``data=None`` (an empty tensor) has no MindSpore meaning and is marked.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P, call_cases
from rewrite_rules.api import ApiRule, Arg, Example, Unconvertible

_X = {"x": "randn(2, 4)"}
_ASSIGNED = ("class ConvNorm(nn.Sequential):\n    def __init__(self):\n        super().__init__()\n"
             "        self.fc = nn.Linear(4, 3)\n        self.act = nn.Tanh()\n\n\n")
_ASSIGNED_CONVERTED = (
    "class ConvNorm(nn.SequentialCell):\n    def __init__(self):\n        super().__init__()\n"
    "        self.fc = nn.Dense(4, 3)\n        self.act = nn.Tanh()\n\n"
    "    def construct(self, input_data):\n"
    "        # torch's Sequential runs every child, those assigned as attributes too; SequentialCell runs its cell_list\n"
    "        for cell in self.name_cells().values():\n"
    "            input_data = cell(input_data)\n"
    "        return input_data\n"
)


def _parameter_data(call, ctx):
    data = call.get("data")
    if data is None or (hasattr(data, "value") and getattr(data, "value", None) == "None"):
        raise Unconvertible("nn.Parameter() without data (an empty tensor) has no MindSpore equivalent")


def _positional_modules(call, ctx, list_only: bool = False):
    """CellList/CellDict take their contents positionally only (a ``modules=``
    keyword is silently ignored: measured, an empty container)."""
    if call.for_adapter:  # torch takes None for "empty"; CellList/CellDict take no argument
        modules = call.get("modules")
        contents = _module_list(modules, always=True) if list_only else modules
        some = cst.IfExp(cst.Comparison(modules, [cst.ComparisonTarget(cst.Is(), cst.Name("None"))]),
                         cst.Tuple([]), cst.Tuple([cst.Element(contents)]))
        call.result = cst.Call(ctx.ref(call.rule.target), [cst.Arg(some, star="*")])
    elif call.has("modules"):
        modules = call.get("modules")
        call.result = cst.Call(ctx.ref(call.rule.target), [cst.Arg(_module_list(modules) if list_only else modules)])


def _module_list(modules: cst.BaseExpression, always: bool = False) -> cst.BaseExpression:
    """ModuleList takes any iterable of modules, CellList only a list (a
    generator or tuple is a TypeError): literals become list displays, calls
    (map, reversed, ...) and, in adapters, anything are wrapped in ``list()``;
    a name is left as written (usually a list; anything else fails loudly)."""
    if isinstance(modules, (cst.List, cst.ListComp)):
        return modules
    if isinstance(modules, cst.GeneratorExp):
        return cst.ListComp(modules.elt, modules.for_in)
    if isinstance(modules, cst.Tuple):
        return cst.List(modules.elements)
    is_list_call = isinstance(modules, cst.Call) and isinstance(modules.func, cst.Name) and modules.func.value == "list"
    if is_list_call or not (always or isinstance(modules, cst.Call)):
        return modules
    return cst.Call(cst.Name("list"), [cst.Arg(modules)])


def _cell_list(call, ctx):
    _positional_modules(call, ctx, list_only=True)


RULES = [
    ApiRule(
        "torch.nn.Sequential",
        "mindspore.nn.SequentialCell",
        examples=(
            Example("net = nn.Sequential(nn.ReLU(), nn.Tanh())", "net = nn.SequentialCell(nn.ReLU(), nn.Tanh())"),
            Example("layer = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))\nresult = layer(x)", inputs=_X),
            Example("from collections import OrderedDict\n"
                    "layer = nn.Sequential(OrderedDict([('fc', nn.Linear(4, 3)), ('act', nn.Tanh())]))\nresult = layer(x)",
                    inputs=_X, notes="ordered dict"),
            Example("layer = nn.Sequential(nn.Linear(4, 3), nn.Sigmoid())\nresult = layer[0](x)", inputs=_X,
                    notes="indexing"),
            # a subclass assigning its children runs them with Sequential's forward (timm's ConvNorm):
            # SequentialCell runs only its cell_list, so the class gets torch's forward as its construct
            Example(_ASSIGNED + "layer = ConvNorm()\nresult = (layer(x), len(layer), layer.fc(x))", inputs=_X,
                    notes="subclass assigning children"),
            Example(_ASSIGNED + "class WithHead(ConvNorm):\n    def __init__(self):\n        super().__init__()\n"
                    "        self.head = nn.Linear(3, 2)\n\n\nlayer = WithHead()\nresult = layer(x)", inputs=_X,
                    notes="its subclass adds a child"),
            Example(_ASSIGNED, _ASSIGNED_CONVERTED, notes="subclass assigning children"),
        ),
    ),
    ApiRule(
        "torch.nn.ModuleList",
        "mindspore.nn.CellList",
        signature="modules=None",
        hook=_cell_list,
        examples=(
            *call_cases("layers = nn.ModuleList({args})\nresult = layers[1](layers[0](x))",
                        [P("modules", "[nn.Linear(4, 4), nn.Linear(4, 2)]")], _X),
            Example("layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(2))\nresult = layers[1](layers[0](x))",
                    inputs=_X, notes="a generator: CellList takes only a list"),
            Example("layers = nn.ModuleList((nn.Linear(4, 4), nn.Tanh()))\nresult = layers[1](layers[0](x))",
                    inputs=_X, notes="a tuple"),
            Example("layers = nn.ModuleList(reversed([nn.Tanh(), nn.Linear(4, 4)]))\nresult = layers[1](layers[0](x))",
                    inputs=_X, notes="an iterator from a call"),
            Example("layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(2))",
                    "layers = nn.CellList([nn.Dense(4, 4) for _ in range(2)])"),
            Example("layers = nn.ModuleList(make_layers())", "layers = nn.CellList(list(make_layers()))",
                    notes="a call"),
            Example("layers = nn.ModuleList(blocks)", "layers = nn.CellList(blocks)"),
        ),
    ),
    ApiRule(
        "torch.nn.ModuleDict",
        "mindspore.nn.CellDict",
        signature="modules=None",
        hook=_positional_modules,
        examples=call_cases("layers = nn.ModuleDict({args})\nresult = layers['b'](layers['a'](x))",
                            [P("modules", "{'a': nn.Linear(4, 3), 'b': nn.Linear(3, 2)}")], _X),
    ),
    ApiRule(
        "torch.nn.Parameter",
        "mindspore.Parameter",
        signature="data=None, requires_grad=True",
        args={"data": "default_input", "requires_grad": Arg()},
        positional=1,
        hook=_parameter_data,
        aliases=("torch.nn.parameter.Parameter",),
        notes="requires_grad by keyword: mindspore.Parameter's second positional parameter is name.",
        examples=(
            Example("w = nn.Parameter(torch.zeros(3))", "w = mindspore.Parameter(ops.zeros(3))"),
            Example("w = nn.Parameter(x, False)", "w = mindspore.Parameter(x, requires_grad=False)"),
            *call_cases("w = nn.Parameter({args})\nresult = (w * 2, w.requires_grad)",
                        [P("data", "x"), P("requires_grad", "False", default=True)], _X),
            Example("w = nn.Parameter()", marked="without data"),
            # the shapes a peer's suite uses: 0-d data, data made in the call, read back whole
            Example("p = nn.Parameter(torch.tensor(2.0))\nresult = (p, p * 3, p.shape)", inputs={}),
            Example("result = torch.nn.Parameter(torch.tensor([1.0, 2.0]), requires_grad=False)", inputs={}),
            Example("result = nn.Parameter(torch.ones(2, 3)).sum()", inputs={}),
            Example("p = nn.Parameter(torch.Tensor(2, 3))\nresult = p.shape", inputs={}),
        ),
    ),
]
