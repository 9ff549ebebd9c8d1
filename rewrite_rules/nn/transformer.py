"""torch.nn attention and Transformer layers -> mindspore.nn.

MindSpore 2.10 has torch-like MultiheadAttention and Transformer classes:
``bias`` -> ``has_bias`` on MultiheadAttention; the Transformer layers take
the same arguments except torch's ``bias`` (marked unless True). Parameter
names match torch except the feed-forward Dense layers (torch linear1/linear2,
MindSpore dense1/dense2) and LayerNorm weight/bias (gamma/beta). Dropout is
random in training mode: the cases use dropout=0 or eval mode.

Each layer becomes a subclass of MindSpore's, written once above the code,
with torch's forward signature (measured differences of the plain classes):
- a boolean mask next to a float one (a causal mask from
  ``generate_square_subsequent_mask`` with a boolean padding mask) is added
  as 0/1 by MindSpore, as -inf where True by torch: ``torch_masks`` turns the
  boolean one into torch's float mask first;
- torch's keywords: TransformerEncoder ``mask=`` (MindSpore ``src_mask``),
  ``is_causal``/``tgt_is_causal``/``memory_is_causal`` (hints that the given
  mask is causal);
- MultiheadAttention: MindSpore's ``__call__`` reads query, key and value by
  position (``value=v`` raised IndexError), and ``need_weights=False`` returns
  ``(output,)`` where torch returns ``(output, None)``.

torch starts every attention's output projection bias at zero; MindSpore
draws it at random (measured). The converted constructor zeroes every
``out_proj.bias`` of the new Cell, so a fresh layer starts like torch's.

Left as measured: a query whose every key is masked gives NaN in torch
(need_weights=True) or 0 (need_weights=False), while MindSpore's CPU softmax
of an all -inf row sets the other rows to 0 too; torch's TransformerEncoder
inference fast path (eval, no grad, padding mask) returns 0 at padded
positions where MindSpore computes them.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.helpers import DEVICE
from rewrite_rules.cases import call_cases
from rewrite_rules.nn.shared import DTYPE, P, layer_cases
from rewrite_rules.api import ApiRule, Drop, Example, Unsupported, code_of, define, render
from rewrite_rules.torch_functions.builders import wrapped
from rewrite_rules.nn.module_paths import with_module_paths


def _zero_out_proj_bias(expr: cst.BaseExpression, ctx) -> cst.BaseExpression:
    zeros = code_of(ctx.ref("mindspore.ops.zeros_like"))
    return cst.parse_expression(
        f"(lambda layer: ([p.set_data({zeros}(p)) for name, p in layer.parameters_and_names() "
        f"if name.endswith('out_proj.bias')], layer)[1])({code_of(expr)})"
    )


_ZERO_BIAS = wrapped(_zero_out_proj_bias)
_ZERO_BIAS_NOTE = "out_proj.bias starts at zero as in torch (MindSpore draws it at random)"
# the biases torch zeroes, read in the statement that makes the layer (the
# harness copies torch's weights into a new layer after its statement; the
# walrus binds it, so that its initial draws are not replayed either)
_FRESH = ("result = list(map(lambda item: item[1] * 1, filter(lambda item: item[0].endswith('out_proj.bias'), "
          "(fresh := nn.{}).named_parameters())))")

_TORCH_MASKS = '''
def {name}(mask, key_padding_mask, dtype):
    """Attention masks as torch adds them (written by ms-migrate)."""
    # a boolean mask next to a float one counts as -inf where True (MindSpore: as 1)
    if mask is None or key_padding_mask is None:
        return mask, key_padding_mask
    if (mask.dtype == MS.bool_) == (key_padding_mask.dtype == MS.bool_):
        return mask, key_padding_mask
    if mask.dtype == MS.bool_:
        mask = OPS.zeros_like(mask, dtype=dtype).masked_fill(mask, float("-inf"))
    else:
        key_padding_mask = OPS.zeros_like(key_padding_mask, dtype=dtype).masked_fill(
            key_padding_mask, float("-inf")
        )
    return mask, key_padding_mask
'''

_MULTIHEAD_ATTENTION = '''
class {name}(NN.MultiheadAttention):
    """torch.nn.MultiheadAttention (written by ms-migrate): torch's call forms and masks."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # torch starts the output bias at zero, MindSpore draws it at random
        if self.out_proj.bias is not None:
            self.out_proj.bias.set_data(OPS.zeros_like(self.out_proj.bias))

    def __call__(self, *args, **kwargs):
        # MindSpore's __call__ reads query, key and value by position only; a subclass's
        # construct takes its own arguments (forward(x) calling super().forward(x, x, x)),
        # which MindSpore's __call__ would read as query, key and value: the Cell's runs it
        if type(self).construct is not {name}.construct:
            return NN.Cell.__call__(self, *args, **kwargs)
        names = ("query", "key", "value")[len(args):]
        args = (*args, *(kwargs.pop(n) for n in names if n in kwargs))
        return super().__call__(*args, **kwargs)

    def construct(
        self,
        query,
        key,
        value,
        key_padding_mask=None,
        need_weights=True,
        attn_mask=None,
        average_attn_weights=True,
        is_causal=False,
    ):
        if is_causal and attn_mask is None:  # a hint that attn_mask is causal
            raise RuntimeError("Need attn_mask if specifying the is_causal hint.")
        attn_mask, key_padding_mask = TORCH_MASKS(
            attn_mask, key_padding_mask, query.dtype
        )
        masks = (key_padding_mask, need_weights, attn_mask, average_attn_weights)
        output = super().construct(query, key, value, *masks)
        return output if need_weights else (output[0], None)
'''

# the decoder layer and the decoder share torch's forward signature but for tgt_is_causal's default
_DECODER_FORWARD = '''
class {name}(NN.BASE):
    """torch.nn.BASE (written by ms-migrate): torch's masks."""

    def construct(
        self,
        tgt,
        memory,
        tgt_mask=None,
        memory_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        tgt_is_causal=TGT_IS_CAUSAL,
        memory_is_causal=False,
    ):
        tgt_mask, tgt_padding = TORCH_MASKS(tgt_mask, tgt_key_padding_mask, tgt.dtype)
        memory_mask, memory_padding = TORCH_MASKS(
            memory_mask, memory_key_padding_mask, tgt.dtype
        )
        masks = (tgt_mask, memory_mask, tgt_padding, memory_padding)
        return super().construct(tgt, memory, *masks)
'''


def _decoder(base: str, tgt_is_causal: str) -> str:
    return _DECODER_FORWARD.replace("BASE", base).replace("TGT_IS_CAUSAL", tgt_is_causal)


# torch's forward signatures over MindSpore's construct: masks as torch adds them, torch's keywords
_FORWARD = {
    "TransformerEncoderLayer": '''
class {name}(NN.TransformerEncoderLayer):
    """torch.nn.TransformerEncoderLayer (written by ms-migrate): torch's masks."""

    def construct(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        masks = TORCH_MASKS(src_mask, src_key_padding_mask, src.dtype)
        return super().construct(src, *masks)
''',
    "TransformerDecoderLayer": _decoder("TransformerDecoderLayer", tgt_is_causal="False"),
    "TransformerEncoder": '''
class {name}(NN.TransformerEncoder):
    """torch.nn.TransformerEncoder (written by ms-migrate): torch's masks and keywords."""

    def construct(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        masks = TORCH_MASKS(mask, src_key_padding_mask, src.dtype)
        return super().construct(src, *masks)
''',
    "TransformerDecoder": _decoder("TransformerDecoder", tgt_is_causal="None"),
    "Transformer": '''
class {name}(NN.Transformer):
    """torch.nn.Transformer (written by ms-migrate): torch's masks."""

    def construct(
        self,
        src,
        tgt,
        src_mask=None,
        tgt_mask=None,
        memory_mask=None,
        src_key_padding_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        src_is_causal=None,
        tgt_is_causal=None,
        memory_is_causal=False,
    ):
        src_mask, src_padding = TORCH_MASKS(src_mask, src_key_padding_mask, src.dtype)
        tgt_mask, tgt_padding = TORCH_MASKS(tgt_mask, tgt_key_padding_mask, tgt.dtype)
        memory_mask, memory_padding = TORCH_MASKS(
            memory_mask, memory_key_padding_mask, tgt.dtype
        )
        masks = (
            src_mask,
            tgt_mask,
            memory_mask,
            src_padding,
            tgt_padding,
            memory_padding,
        )
        return super().construct(src, tgt, *masks)
''',
}


def _written(ctx, name: str, source: str) -> cst.Name:
    """``source`` written above the code as ``name``, its MindSpore names and ``torch_masks`` filled in."""
    if "TORCH_MASKS" in source:
        source = source.replace("TORCH_MASKS", _written(ctx, "torch_masks", _TORCH_MASKS).value)
    source = (source.replace("NN.", code_of(ctx.ref("mindspore.nn")) + ".")
              .replace("OPS.", code_of(ctx.ref("mindspore.ops")) + ".").replace("MS.", code_of(ctx.ref("mindspore")) + "."))
    return define(ctx, name, source)


def _multihead_attention(call, ctx):
    """MindSpore's layer, under a subclass that takes torch's call forms (query, key and value by
    keyword; is_causal), adds a boolean mask to a float one as torch does, returns
    (output, None) when need_weights=False, and starts out_proj.bias at zero."""
    call.result = render(call, _written(ctx, "MultiheadAttention", _MULTIHEAD_ATTENTION))


def _with_torch_forward(name: str):
    """MindSpore's layer under a subclass with torch's forward signature: masks added as torch
    adds them, torch's keywords (``mask=``, ``is_causal``); out_proj.bias starts at zero."""

    def hook(call, ctx):
        layer = render(call, _written(ctx, name, _FORWARD[name]))
        call.result = _zero_out_proj_bias(layer, ctx) if name != "TransformerEncoder" and name != "TransformerDecoder" else layer

    return hook


def _square_subsequent_mask(call, ctx):
    """0 on and below the diagonal, -inf above (torch's default dtype unless dtype= says otherwise)."""
    ops, size = code_of(ctx.ref("mindspore.ops")), code_of(call.get("sz"))
    dtype = call.get("dtype")
    if dtype is None or (isinstance(dtype, cst.Name) and dtype.value == "None"):
        dtype = ctx.ref("mindspore.float32")
    call.result = cst.parse_expression(
        f'{ops}.triu({ops}.full(({size}, {size}), float("-inf"), dtype={code_of(dtype)}), 1)')


_MHA_NOTES = ("mindspore.nn.MultiheadAttention under a subclass written above the code: torch's call forms "
              "(query/key/value by keyword, is_causal), a boolean mask added to a float one as -inf (MindSpore "
              "adds 0/1), (output, None) for need_weights=False (MindSpore returns (output,)), out_proj.bias "
              "starting at zero; bias -> has_bias; parameters keep torch's names")
_MASKS = {"q": "randn(2, 5, 8)", "k": "randn(2, 4, 8)", "v": "randn(2, 4, 8)", "am": "randn(5, 4)",
          "kpm": "tensor([[False, True, False, False], [False, False, False, True]])"}

_NO_BIAS = Unsupported("bias=False is not supported by MindSpore's Transformer layers")
_RTOL = {"rtol": 1e-4, "atol": 1e-5}
_SEQ = {"x": "randn(5, 2, 8)", "m": "randn(4, 2, 8)"}
_BATCH_FIRST = {"x": "randn(2, 5, 8)", "m": "randn(2, 4, 8)",
                "pad": "tensor([[False, False, False, True, True], [False, False, False, False, True]])"}
# what torch.nn.Transformer.generate_square_subsequent_mask(5) gives
_CAUSAL = "causal = torch.triu(torch.full((5, 5), float('-inf')), diagonal=1)\n"


def _ffn_weights() -> dict:
    # the stacks (TransformerEncoder/Decoder, Transformer) need no declaration:
    # the weight converter applies each layer's own rule to the layers inside
    return {f"linear{i}.{p}": f"dense{i}.{p}" for i in (1, 2) for p in ("weight", "bias")}


_LAYER_SIG = ("d_model, nhead, dim_feedforward=2048, dropout=0.1, activation='relu', layer_norm_eps=1e-05, "
              "batch_first=False, norm_first=False, bias=True, device=None, dtype=None")


def _layer(kind: str, call: str, inputs, mixed: tuple[str, ...]) -> ApiRule:
    name = f"Transformer{kind}Layer"
    params = [P("d_model", "8"), P("nhead", "2"), P("dim_feedforward", "16"), P("dropout", "0.0"),
              P("activation", "'gelu'", default=True), P("layer_norm_eps", "0.001", default=True),
              P("batch_first", "False", default=True), P("norm_first", "True", default=True)]
    return ApiRule(
        f"torch.nn.{name}",
        f"mindspore.nn.{name}",
        signature=_LAYER_SIG,
        args={"bias": _NO_BIAS, "device": DEVICE, "dtype": DTYPE},
        hook=_with_torch_forward(name),
        weights=_ffn_weights(),
        notes="Feed-forward layers are dense1/dense2 in MindSpore (torch linear1/linear2); " + _ZERO_BIAS_NOTE,
        examples=(
            Example(_FRESH.format(f"{name}(8, 2, 16)"), inputs={}, notes="fresh"),
            *layer_cases(name, params, inputs, call=call, **_RTOL),
            *layer_cases(name, [P("d_model", "8"), P("nhead", "2"), P("dim_feedforward", "16")], inputs, call=call,
                         setup="layer.eval()\n", shapes=("keywords",), notes="default dropout, eval mode", **_RTOL),
            Example(f"layer = nn.{name}(8, 2, bias=False)", marked="bias=False"),
            # a float causal mask with a boolean padding mask (torch adds it as -inf, MindSpore would add 1)
            *(Example(f"layer = nn.{name}(8, 2, 16, 0.0, batch_first=True)\n{_CAUSAL}result = {form}",
                      inputs=_BATCH_FIRST, notes="mixed masks", **_RTOL) for form in mixed),
        ),
    )


def _stack(kind: str, call: str, inputs, mixed: tuple[str, ...], extra_sig: str = "", extra_args=None) -> ApiRule:
    name = f"Transformer{kind}"
    layer = f"inner = nn.Transformer{kind}Layer(8, 2, 16, 0.0)\n"
    norm = "norm = nn.LayerNorm(8)\n"
    cases = layer_cases(name, [P(f"{kind.lower()}_layer", "inner"), P("num_layers", "2"), P("norm", "norm", default=True)],
                        inputs, call=call, **_RTOL)
    return ApiRule(
        f"torch.nn.{name}",
        f"mindspore.nn.{name}",
        signature=f"{kind.lower()}_layer, num_layers, norm=None" + extra_sig,
        args=extra_args or {},
        hook=_with_torch_forward(name),
        notes="The layer is deep-copied num_layers times, as in torch.",
        examples=(*(Example(layer + norm + ex.torch, inputs=ex.inputs, notes=ex.notes, **_RTOL) for ex in cases),
                  *(Example(f"inner = nn.Transformer{kind}Layer(8, 2, 16, 0.0, batch_first=True)\n"
                            f"layer = nn.{name}(inner, 2)\n{_CAUSAL}result = {form}", inputs=_BATCH_FIRST,
                            notes="mixed masks", **_RTOL) for form in mixed)),
    )


RULES = [
    ApiRule(
        "torch.nn.MultiheadAttention",
        "mindspore.nn.MultiheadAttention",
        signature="embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False, kdim=None, "
        "vdim=None, batch_first=False, device=None, dtype=None",
        args={"bias": "has_bias", "device": DEVICE, "dtype": DTYPE},
        positional=3,
        hook=_multihead_attention,
        notes=_MHA_NOTES,
        examples=(
            # the call form of public code: value, attn_mask and key_padding_mask by keyword, [0] read
            Example("layer = nn.MultiheadAttention(8, 2, batch_first=True)\n"
                    "result = layer(q, k, value=v, attn_mask=am, key_padding_mask=kpm)[0]", inputs=_MASKS, **_RTOL),
            Example("layer = nn.MultiheadAttention(8, 2, batch_first=True)\n"
                    "causal = torch.triu(torch.ones(5, 4, dtype=torch.bool), 1)\n"
                    "result = layer(query=q, key=k, value=v, key_padding_mask=kpm, attn_mask=causal)", inputs=_MASKS,
                    **_RTOL),
            Example("layer = nn.MultiheadAttention(8, 2, batch_first=True)\n"
                    "causal = torch.triu(torch.ones(5, 4, dtype=torch.bool), 1)\n"
                    "result = layer(q, k, v, key_padding_mask=kpm.float() * -2.0, attn_mask=causal)", inputs=_MASKS,
                    notes="bool attn_mask, float key_padding_mask", **_RTOL),
            Example("layer = nn.MultiheadAttention(8, 2, batch_first=True)\nresult = layer(q, k, v, kpm, attn_mask=am)",
                    inputs=_MASKS, notes="float attn_mask, bool key_padding_mask", **_RTOL),
            Example("layer = nn.MultiheadAttention(8, 2, kdim=6, vdim=4)\n"
                    "result = layer(q.transpose(0, 1), k.transpose(0, 1)[..., :6], v.transpose(0, 1)[..., :4], "
                    "key_padding_mask=kpm, attn_mask=am.exp(), average_attn_weights=False)",
                    inputs=_MASKS, notes="kdim, vdim, mixed masks", **_RTOL),
            Example("layer = nn.MultiheadAttention(8, 2, batch_first=True)\n"
                    "out, weights = layer(q, q, q, need_weights=False)\nresult = (out, weights is None)",
                    inputs=_MASKS, notes="need_weights=False", **_RTOL),
            Example("layer = nn.MultiheadAttention(8, 2, batch_first=True)\n"
                    "causal = torch.triu(torch.ones(5, 5, dtype=torch.bool), 1)\n"
                    "result = layer(q, q, q, attn_mask=causal, is_causal=True, need_weights=False)[0]",
                    inputs=_MASKS, notes="is_causal", **_RTOL),
            Example(_FRESH.format("MultiheadAttention(8, 2)"), inputs={}, notes="fresh"),
            Example(_FRESH.format("MultiheadAttention(8, 2, bias=False)"), inputs={}, notes="fresh"),
            *layer_cases("MultiheadAttention", [P("embed_dim", "8"), P("num_heads", "2")], {"x": "randn(5, 8)", "m": "randn(4, 8)"},
                         call="layer(x, m, m, key_padding_mask=torch.tensor([False, True, False, False]))",
                         shapes=("positional",), notes="unbatched with a key padding mask", **_RTOL),
            *layer_cases("MultiheadAttention", [P("embed_dim", "8"), P("num_heads", "2"), P("add_bias_kv", "True"),
                                                P("add_zero_attn", "True")], _SEQ,
                         call="layer(x, m, m, attn_mask=torch.zeros(5, 4), average_attn_weights=False)",
                         shapes=("keywords",), notes="bias_kv, zero_attn, attn_mask", **_RTOL),
            *layer_cases("MultiheadAttention", [P("embed_dim", "8"), P("num_heads", "2"), P("dropout", "0.0", default=True),
                                                P("bias", "False", default=True)],
                         _SEQ, call="layer(x, m, m)", **_RTOL),
            *layer_cases("MultiheadAttention", [P("embed_dim", "8"), P("num_heads", "2"), P("kdim", "6"), P("vdim", "4"),
                                                P("batch_first", "True")],
                         {"q": "randn(2, 5, 8)", "k": "randn(2, 3, 6)", "v": "randn(2, 3, 4)"},
                         call="layer(q, k, v, need_weights=True, average_attn_weights=False)", shapes=("keywords",),
                         **_RTOL),
        ),
    ),
    _layer("Encoder", "layer(x)", _SEQ, ("layer(x, causal, pad)",
                                         "layer(x, src_mask=causal, src_key_padding_mask=pad, is_causal=True)")),
    _layer("Decoder", "layer(x, m)", _SEQ, ("layer(x, m, causal, None, pad, pad[:, :4])",
                                            "layer(x, m, tgt_mask=causal, tgt_key_padding_mask=pad, "
                                            "memory_key_padding_mask=pad[:, :4], tgt_is_causal=True)")),
    _stack("Encoder", "layer(x)", _SEQ, ("layer(x, causal, pad)",
                                         "layer(x, mask=causal, src_key_padding_mask=pad, is_causal=True)"), extra_sig=", enable_nested_tensor=True, mask_check=True",
           extra_args={"enable_nested_tensor": Drop("a torch inference fast path"),
                       "mask_check": Drop("a torch inference fast path check")}),
    _stack("Decoder", "layer(x, m)", _SEQ, ("layer(x, m, causal, None, pad, pad[:, :4])",
                                            "layer(x, m, tgt_mask=causal, tgt_key_padding_mask=pad, "
                                            "memory_key_padding_mask=pad[:, :4], tgt_is_causal=True)")),
    ApiRule(
        "torch.nn.Transformer.generate_square_subsequent_mask",
        None,
        signature="sz, device=None, dtype=None",
        args={"device": DEVICE},
        hook=_square_subsequent_mask,
        notes="ops.triu(ops.full((sz, sz), -inf), 1): 0 on and below the diagonal, -inf above",
        examples=(
            *call_cases("result = nn.Transformer.generate_square_subsequent_mask({args})",
                        [P("sz", "4"), P("device", "'cpu'", default=True), P("dtype", "torch.float64", default=True)], {}),
            Example("n = 3\nresult = nn.Transformer.generate_square_subsequent_mask(n + 1)", inputs={}),
        ),
    ),
    ApiRule(
        "torch.nn.Transformer",
        "mindspore.nn.Transformer",
        signature="d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048, dropout=0.1, "
        "activation='relu', custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-05, batch_first=False, "
        "norm_first=False, bias=True, device=None, dtype=None",
        args={"bias": _NO_BIAS, "device": DEVICE, "dtype": DTYPE},
        hook=_with_torch_forward("Transformer"),
        notes=_ZERO_BIAS_NOTE,
        examples=(Example(_FRESH.format("Transformer(8, 2, 1, 1, 16)"), inputs={}, notes="fresh"),) + layer_cases("Transformer", [P("d_model", "8"), P("nhead", "2"), P("num_encoder_layers", "1"),
                                             P("num_decoder_layers", "1"), P("dim_feedforward", "16"),
                                             P("dropout", "0.0")], _SEQ, call="layer(x, m)", **_RTOL) + (
            Example(f"layer = nn.Transformer(8, 2, 1, 1, 16, 0.0, batch_first=True)\n{_CAUSAL}"
                    "result = layer(x, x, tgt_mask=causal, src_key_padding_mask=pad, tgt_key_padding_mask=pad, "
                    "memory_key_padding_mask=pad)", inputs=_BATCH_FIRST, notes="mixed masks", **_RTOL),),
    ),
]

RULES = with_module_paths(RULES)  # torch.nn.modules.X and torch.nn.modules.<submodule>.X too
