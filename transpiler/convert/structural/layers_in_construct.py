"""A layer with parameters made inside ``construct`` is marked with why graph mode
cannot compile it.

graykode/nlp-tutorial's BERT (MIT) makes its output projection and LayerNorm in
``forward``::

    output = nn.Linear(n_heads * d_v, d_model)(context)
    return nn.LayerNorm(d_model)(output + residual), attn

PyNative runs the converted ``nn.Dense(...)(context)`` as torch runs it: a new layer
with new random weights at each call, which no optimizer sees. Graph mode
(``mindspore.jit``, GRAPH_MODE, ``mindspore.export``) names the parameters of a layer
made while compiling by their own names only, so once the method runs for two blocks
(BERT's encoder layers) they clash ("The parameter ... its name 'weight' already
exists. Please set a unique name for the parameter", measured on MindSpore 2.10 CPU
under ``convert --jit``; one such layer alone compiles). A parameter-free layer made there compiles (the same
script's TextCNN makes ``nn.MaxPool2d`` in ``forward`` and trains under ``--jit``), so
only layers with parameters are marked. The code stays as written, since it runs as torch's
does: the comment above the statement says what graph mode needs (the layer made once in
``__init__``), which also makes its weights trainable.
"""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

from transpiler.convert.structural.compiled_functions import InCompiledFunctions, with_comment
from transpiler.convert.walk import rewrite

# mindspore.nn layers that own parameters (the converted forms of torch.nn's)
_WITH_PARAMETERS = frozenset({
    "Dense", "BiDense", "Conv1d", "Conv2d", "Conv3d", "Conv1dTranspose", "Conv2dTranspose", "Conv3dTranspose",
    "LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d",
    "InstanceNorm3d", "Embedding", "EmbeddingBag", "PReLU", "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell",
    "MultiheadAttention", "Transformer", "TransformerEncoderLayer", "TransformerDecoderLayer",
})
COMMENT = ("# graph mode cannot compile layers with parameters made here for several blocks (their "
           "parameter names clash); make it once in __init__")


def with_layers_in_construct_marked(module: cst.Module, to_format) -> cst.Module:
    """Only in ``construct`` itself (and the functions it defines): the functions graph mode
    compiles are found by name (graph_subset.py), and a module-level factory that shares a
    name with a layer attribute called in ``construct`` (s4's ``def conv(...)``: ``return
    nn.Conv1d(...)``, called from ``__init__``; ``self.conv(x)`` in forward) is no such
    function."""
    heads = {"mindspore.nn", "nn"} if _imports_mindspore_nn(module) else {"mindspore.nn"}
    return rewrite(module, _Marks(heads, to_format))


def _imports_mindspore_nn(module: cst.Module) -> bool:
    """``from mindspore import nn`` (a torch ``nn`` a marked statement keeps is not it)."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.ImportFrom) and small.module is not None \
                        and get_full_name_for_node(small.module) == "mindspore" \
                        and not isinstance(small.names, cst.ImportStar) \
                        and any(alias.evaluated_name == "nn" and alias.asname is None for alias in small.names):
                    return True
    return False


class _Marks(InCompiledFunctions):
    def __init__(self, heads: set[str], to_format):
        super().__init__({"construct"}, to_format)
        self.heads = heads  # what names mindspore.nn here
        self.found = [False]

    def visit_SimpleStatementLine(self, node) -> None:
        self.found.append(False)

    def visit_Call(self, node: cst.Call) -> None:
        if self.depth and self._makes_layer_with_parameters(node):
            self.found[-1] = True

    def _makes_layer_with_parameters(self, call: cst.Call) -> bool:
        name = get_full_name_for_node(call.func)
        head, _, last = (name or "").rpartition(".")
        return head in self.heads and last in _WITH_PARAMETERS

    def leave_SimpleStatementLine(self, original_node, updated_node):
        return with_comment(updated_node, COMMENT) if self.found.pop() else updated_node
