"""torch.nn recurrent layers -> mindspore.nn RNN/LSTM/GRU Cells.

Same constructor meaning (``bias`` -> ``has_bias``), the same parameter names
and layouts (weight_ih_l0, ..._reverse; copied weights give equal outputs),
the same forward ``layer(x, hx)`` returning ``(output, h_n)`` /
``(output, (h_n, c_n))``. Differences: projected LSTMs (proj_size) do not
exist; MindSpore's RNNCell/LSTMCell/GRUCell need ``hx`` (torch defaults it to
zeros), which the forward call cannot be checked for here.
"""

from __future__ import annotations

from rewrite_rules.helpers import DEVICE
from rewrite_rules.nn.shared import DTYPE, P, layer_cases
from rewrite_rules.api import ApiRule, Arg, AttributeRead, Example, Unsupported
from rewrite_rules.nn.float_args import as_float
from rewrite_rules.nn.module_paths import with_module_paths

_SEQ = {"x": "randn(5, 2, 3)", "h": "randn(2, 2, 4)", "c": "randn(2, 2, 4)"}
_BATCH_FIRST = {"x": "randn(2, 5, 3)", "h": "randn(4, 2, 4)", "c": "randn(4, 2, 4)"}
_RTOL = {"rtol": 1e-4, "atol": 1e-5}


def _rnn(name: str, extra_sig: str = "", extra_args=None, extra=(), hidden="h") -> ApiRule:
    signature = "input_size, hidden_size, num_layers=1, " + extra_sig + "bias=True, batch_first=False, dropout=0.0, " \
        "bidirectional=False, " + ("proj_size=0, " if name == "LSTM" else "") + "device=None, dtype=None"
    # MindSpore refuses an int dropout ("the type of 'dropout' must be 'float', but got 'int'")
    args = {"bias": "has_bias", "dropout": Arg(value=as_float), "device": DEVICE, "dtype": DTYPE, **(extra_args or {})}
    if name == "LSTM":
        args["proj_size"] = Unsupported("projected LSTMs (proj_size > 0) are not supported")
    positional = 3
    state = "(h, c)" if name == "LSTM" else "h"
    params = [P("input_size", "3"), P("hidden_size", "4"), P("num_layers", "2")]
    if extra_sig:
        params.append(P("nonlinearity", "'relu'", default=True))
    params += [P("bias", "False", default=True), P("batch_first", "False", default=True),
               P("dropout", "0.0", default=True), P("bidirectional", "False", default=True)]
    return ApiRule(
        f"torch.nn.{name}",
        f"mindspore.nn.{name}",
        signature=signature,
        args=args,
        positional=positional,
        attributes={"input_size": AttributeRead("{cell}.w_ih_list[0].shape[1]"), "bias": "has_bias"},
        notes="bias -> has_bias; dropout as a float (MindSpore refuses an int); the parameters keep torch's "
              "names and layouts.",
        examples=(
            *extra,
            *layer_cases(name, params, _SEQ, call=f"layer(x, {state})", results=("result",), **_RTOL),
            *layer_cases(name, [P("input_size", "3"), P("hidden_size", "4"), P("batch_first", "True"),
                                P("bidirectional", "True")], _BATCH_FIRST, call="layer(x)", shapes=("keywords",),
                         **_RTOL),
            *layer_cases(name, [P("input_size", "3"), P("hidden_size", "4"), P("num_layers", "2"), P("dropout", "0.5")],
                         _SEQ, call="layer(x)", setup="layer.eval()\n", shapes=("keywords",),
                         notes="dropout between layers, eval mode", **_RTOL),
            # an int dropout, as research code writes it, and one held in a variable
            *layer_cases(name, [P("input_size", "3"), P("hidden_size", "4"), P("num_layers", "2"), P("dropout", "0", kind="keyword")],
                         _SEQ, call="layer(x)", setup="layer.train()\n", shapes=("keywords", "variables"),
                         notes="int_dropout", **_RTOL),
        ),
    )


def _cell(name: str, extra_sig: str = "", lstm: bool = False) -> ApiRule:
    params = [P("input_size", "3"), P("hidden_size", "4"), P("bias", "False", default=True)]
    if extra_sig:
        params.append(P("nonlinearity", "'relu'", default=True))
    inputs = {"x": "randn(2, 3)", "h": "randn(2, 4)", "c": "randn(2, 4)"}
    return ApiRule(
        f"torch.nn.{name}",
        f"mindspore.nn.{name}",
        signature="input_size, hidden_size, bias=True, " + extra_sig + "device=None, dtype=None",
        args={"bias": "has_bias", "device": DEVICE, "dtype": DTYPE},
        positional=2,
        notes="bias -> has_bias. MindSpore's cell needs the hidden state argument (torch defaults it to zeros).",
        examples=layer_cases(name, params, inputs, call="layer(x, (h, c))" if lstm else "layer(x, h)", **_RTOL),
    )


RULES = [
    _rnn("RNN", extra_sig="nonlinearity='tanh', "),
    _rnn("LSTM", extra=(Example("rnn = nn.LSTM(8, 16, batch_first=True)", "rnn = nn.LSTM(8, 16, batch_first=True)"),
                        Example("rnn = nn.LSTM(8, 16, proj_size=4)", marked="proj_size"))),
    _rnn("GRU"),
    _cell("RNNCell", extra_sig="nonlinearity='tanh', "),
    _cell("LSTMCell", lstm=True),
    _cell("GRUCell"),
]

RULES = with_module_paths(RULES)  # torch.nn.modules.X and torch.nn.modules.<submodule>.X too
