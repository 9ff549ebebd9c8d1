"""Module containers and parameters: Sequential/ModuleList/ModuleDict -> their
Cell counterparts, nn.Parameter -> mindspore.Parameter.

The containers keep torch's child names ("0", "1", ... / the dict keys), so
weights copy by name. MindSpore's CellDict refuses CellList, CellDict and
SequentialCell values, which torch's ModuleDict holds (GPT-style
``nn.ModuleDict(dict(wte=..., h=nn.ModuleList([...]), ln_f=...))``): a
ModuleDict whose values the file does not show to be plain layers becomes a
small Cell written above the code that holds its children by key, containers
too, with the same names (``transformer.h.0.attn.weight``). A ModuleDict
subclassed with a forward (timm's DenseBlock, torchvision's
IntermediateLayerGetter) derives from that Cell too: graph mode cannot call a
CellDict subclass. MindSpore builds parameter
names from the keys and allows only letters, digits, ``_`` and ``-`` in
them: a literal key with other characters is marked. mindspore.Parameter's second positional parameter is
``name``, so torch's ``requires_grad`` is always passed by keyword; torch's
``data=None`` (an empty tensor) has no MindSpore meaning and is marked.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P, call_cases
import re

from rewrite_rules.api import (CELL, LAYER, ApiRule, Arg, Example, Unconvertible, added_to, bind, code_of, define,
                               may_be_none, origin_of)
from rewrite_rules.nn.module_paths import with_module_paths

_X = {"x": "randn(2, 4)"}
_ASSIGNED = ("class ConvNorm(nn.Sequential):\n    def __init__(self):\n        super().__init__()\n"
             "        self.fc = nn.Linear(4, 3)\n        self.act = nn.Tanh()\n\n\n")
_ASSIGNED_CONVERTED = (
    "class ConvNorm(nn.SequentialCell):\n    def __init__(self):\n        super().__init__()\n"
    "        self.fc = nn.Dense(4, 3)\n        self.act = nn.Tanh()\n\n"
    "    def construct(self, input_data):\n"
    "        # torch's Sequential runs every child, those assigned as attributes too; SequentialCell runs its cell_list\n"
    "        for cell in self._cells.values():\n"
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


_HOLDS_NONE = '''
class {name}(CELLLIST):
    """torch.nn.ModuleList: a CellList that holds None entries too (written by ms-migrate).

    CellList refuses None (TypeError); torch's ModuleList keeps it at its index (indexing and
    iteration give None, len counts it) and it has no parameters, so the weights' names skip
    that index (``layers.1.weight``).
    """

    def __init__(self, cells=None):
        super().__init__()
        if cells is not None:
            self.extend(cells)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)(list(self._cells.values())[index])
        return super().__getitem__(index)

    def append(self, cell):
        if cell is None:
            self._cells[str(len(self))] = None
        else:
            self.insert_child_to_cell(str(len(self)), cell)
        return self

    def extend(self, cells):
        for cell in cells:
            self.append(cell)
        return self
'''


def _list_may_hold_none(ctx, modules: cst.BaseExpression | None) -> bool:
    if isinstance(modules, (cst.List, cst.Tuple)):
        return any(isinstance(e, cst.Element) and may_be_none(ctx, e.value) for e in modules.elements)
    if isinstance(modules, (cst.ListComp, cst.GeneratorExp)):
        return may_be_none(ctx, modules.elt)
    return False


def _cell_list(call, ctx):
    _positional_modules(call, ctx, list_only=True)
    if call.for_adapter:
        return
    source = call.source if call.source is not None else call.original
    try:
        modules = bind(call.rule, source, ctx).get("modules")
    except Unconvertible:
        return
    added = added_to(ctx, source) or ()  # filled later: self.skips.append(skip_or_None)
    if _list_may_hold_none(ctx, modules) or any(may_be_none(ctx, value) for value in added):
        # CellList refuses None: the list written above the code holds it
        text = _HOLDS_NONE.replace("CELLLIST", code_of(ctx.ref("mindspore.nn.CellList")))
        result = call.result if call.result is not None else cst.Call(ctx.ref(call.rule.target), [])
        call.result = result.with_changes(func=define(ctx, "ModuleList", text))


_CONTAINERS = frozenset({"torch.nn.ModuleList", "torch.nn.ModuleDict", "torch.nn.Sequential",
                         "torch.nn.modules.container.ModuleList", "torch.nn.modules.container.ModuleDict",
                         "torch.nn.modules.container.Sequential"})
_NAME_PART = re.compile(r"[0-9A-Za-z_\-]+", re.ASCII)  # what MindSpore accepts in a parameter name's path
_HOLDS_CONTAINERS = '''
class {name}(CELL):
    """torch.nn.ModuleDict: a Cell holding its children by key (written by ms-migrate).

    CellDict refuses CellList, CellDict and SequentialCell values, and graph mode cannot call a
    CellDict subclass that has a construct; this Cell does both. A child's parameters are named
    ``key.<name>``, as torch names them.
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._cells[key]

    def __setitem__(self, key, cell):
        self.insert_child_to_cell(key, cell)

    def __delitem__(self, key):
        del self._cells[key]

    def __len__(self):
        return len(self._cells)

    def __iter__(self):
        return iter(self._cells)

    def __contains__(self, key):
        return key in self._cells

    def keys(self):
        return self._cells.keys()

    def values(self):
        return self._cells.values()

    def items(self):
        return self._cells.items()

    def pop(self, key):
        return self._cells.pop(key)

    def update(self, modules):
        for key, cell in dict(modules).items():
            self[key] = cell
'''


def _dict_entries(expr: cst.BaseExpression | None):
    """[(key expression or None, value expression)] of a dict written out
    (``{...}``, ``dict(k=v)``, ``OrderedDict([(k, v), ...])``, a list of pairs),
    or None when the file does not show the entries (an empty dict is filled later)."""
    if expr is None:
        return None
    if isinstance(expr, cst.Dict):
        entries = []
        for element in expr.elements:
            if not isinstance(element, cst.DictElement):
                return None  # **other
            entries.append((element.key, element.value))
        return entries
    if isinstance(expr, cst.DictComp):
        return [(None, expr.value)]
    if isinstance(expr, (cst.List, cst.Tuple)):
        entries = []
        for element in expr.elements:
            pair = element.value
            if element.__class__ is not cst.Element or not isinstance(pair, cst.Tuple) or len(pair.elements) != 2:
                return None
            entries.append((pair.elements[0].value, pair.elements[1].value))
        return entries
    if isinstance(expr, cst.Call) and isinstance(expr.func, (cst.Name, cst.Attribute)):
        name = expr.func.value if isinstance(expr.func, cst.Name) else expr.func.attr.value
        if name == "dict" and all(a.keyword is not None for a in expr.args):
            return [(cst.SimpleString(repr(a.keyword.value)), a.value) for a in expr.args]
        if name in ("dict", "OrderedDict") and len(expr.args) == 1 and expr.args[0].keyword is None:
            return _dict_entries(expr.args[0].value)
    return None


def _plain_layer(ctx, value: cst.BaseExpression) -> bool:
    """The file shows ``value`` is a layer that is no container (a torch layer, or the file's own Module)."""
    origin = origin_of(ctx, value)
    if origin is None:
        return False
    if origin.kind == LAYER:
        return origin.qualified not in _CONTAINERS
    return origin.kind == CELL


def _holder(ctx) -> cst.Name:
    """The Cell written above the code that holds children by key, containers too."""
    return define(ctx, "ModuleDict", _HOLDS_CONTAINERS.replace("CELL", code_of(ctx.ref("mindspore.nn.Cell"))))


def _module_dict(call, ctx):
    if call.for_adapter:  # torch's ModuleDict subclassed or passed around: its values are known at run time only
        call.result = cst.Call(_holder(ctx), [cst.Arg(call.get("modules"))])
        return
    source = call.source if call.source is not None else call.original
    try:
        modules = bind(call.rule, source, ctx).get("modules")
    except Unconvertible:
        modules = None
    entries = _dict_entries(modules)
    for key, _ in entries or ():
        text = key.evaluated_value if isinstance(key, cst.SimpleString) else None
        if isinstance(text, str) and not _NAME_PART.fullmatch(text):
            raise Unconvertible(f"key {text!r}: MindSpore names a Cell's parameters by its path and allows only "
                                "letters, digits, '_' and '-' in it; rename the key (and its weights' keys)")
    _positional_modules(call, ctx)
    if entries is not None and all(_plain_layer(ctx, value) for _, value in entries):
        return  # CellDict holds them
    result = call.result if call.result is not None else cst.Call(ctx.ref(call.rule.target), [])
    call.result = result.with_changes(func=_holder(ctx))


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
        hook=_module_dict,
        examples=(
            *call_cases("layers = nn.ModuleDict({args})\nresult = layers['b'](layers['a'](x))",
                        [P("modules", "{'a': nn.Linear(4, 3), 'b': nn.Linear(3, 2)}")], _X),
            Example("layers = nn.ModuleDict({'a': nn.Linear(4, 3), 'b': nn.ReLU()})",
                    'layers = nn.CellDict({"a": nn.Dense(4, 3), "b": nn.ReLU()})', notes="plain layers: a CellDict"),
            # GPT-style: CellDict refuses a CellList value; the dict written above the code holds it
            Example("layers = nn.ModuleDict(dict(proj=nn.Linear(4, 4), h=nn.ModuleList([nn.Linear(4, 4), nn.Tanh()])))\n"
                    "result = layers.h[1](layers['h'][0](layers.proj(x))), len(layers), list(layers.keys())",
                    inputs=_X, notes="a ModuleList value"),
            Example("layers = nn.ModuleDict()\nlayers['body'] = nn.Sequential(nn.Linear(4, 3), nn.ReLU())\n"
                    "layers['head'] = nn.Linear(3, 2)\nresult = layers['head'](layers['body'](x)), list(layers)",
                    inputs=_X, notes="filled later, a Sequential value"),
            Example("layers = nn.ModuleDict({name: nn.Sequential(nn.Linear(4, 2)) for name in ('a', 'b')})\n"
                    "result = layers['b'](x) + layers['a'](x)", inputs=_X, notes="a dict comprehension"),
            Example("layers = nn.ModuleDict({'conv 1': nn.Linear(4, 3)})", marked="'conv 1'"),
        ),
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

RULES = with_module_paths(RULES)  # torch.nn.modules.X and torch.nn.modules.<submodule>.X too
